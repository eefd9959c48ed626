//! The remote file bridge over a real sshd: every symlink escape class,
//! read-only mounts, atomic writes.

use super::common;

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use common::{Sshd, path_str};
use talon_fs_bridge::{Access, FileKind, FsBridge, FsError, FsErrorCode, WriteOptions};
use talon_sandbox_ssh::{RemoteBridge, RemoteMount};

struct Layout {
    sshd: Sshd,
    ws: String,
    outside: std::path::PathBuf,
}

fn layout() -> Layout {
    let sshd = Sshd::start();
    let base = sshd.dir().join("remote");
    let ws = base.join("ws");
    let outside = sshd.dir().join("outside");
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::create_dir_all(ws.join("skills")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret"), b"top secret").unwrap();
    std::fs::write(ws.join("sub/file.txt"), b"inside").unwrap();
    std::fs::write(ws.join("skills/a.md"), b"skill").unwrap();
    // Escape classes.
    symlink(&outside, ws.join("abs")).unwrap();
    symlink("../../outside", ws.join("rel")).unwrap();
    symlink("c2", ws.join("c1")).unwrap();
    symlink("../../outside", ws.join("c2")).unwrap();
    symlink(outside.join("created.txt"), ws.join("dang")).unwrap();
    symlink(outside.join("missing/x"), ws.join("dang2")).unwrap();
    // Links that stay inside.
    symlink("sub/file.txt", ws.join("inlink")).unwrap();
    symlink("skills", ws.join("toskills")).unwrap();
    Layout {
        ws: path_str(&ws),
        sshd,
        outside,
    }
}

async fn bridge(l: &Layout) -> RemoteBridge {
    RemoteBridge::new(
        l.sshd.connection(),
        vec![
            RemoteMount {
                path: l.ws.clone(),
                read_only: false,
            },
            RemoteMount {
                path: format!("{}/skills", l.ws),
                read_only: true,
            },
        ],
        &l.ws,
    )
    .await
    .unwrap()
}

fn code(r: Result<impl std::fmt::Debug, FsError>) -> FsErrorCode {
    match r {
        Ok(v) => panic!("expected a refusal, got {v:?}"),
        Err(e) => {
            assert!(!e.message.is_empty());
            e.code
        }
    }
}

#[tokio::test]
async fn operations_work_inside_and_writes_are_atomic() {
    let l = layout();
    let b = bridge(&l).await;
    assert_eq!(b.cwd(), l.ws);
    let got = b.read("sub/file.txt", None).await.unwrap();
    assert_eq!(got.bytes, b"inside");
    let cut = b.read("sub/file.txt", Some(3)).await.unwrap();
    assert_eq!(
        (cut.bytes.as_slice(), cut.truncated, cut.total_size),
        (&b"ins"[..], true, 6)
    );
    assert_eq!(b.read("inlink", None).await.unwrap().bytes, b"inside");

    let report = b
        .write("new/deep/n.txt", b"hello", WriteOptions::default())
        .await
        .unwrap();
    assert!(report.created);
    assert_eq!(
        std::fs::read(Path::new(&l.ws).join("new/deep/n.txt")).unwrap(),
        b"hello"
    );
    // An existing file keeps its mode across the atomic replace.
    let f = Path::new(&l.ws).join("sub/file.txt");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    b.write("sub/file.txt", b"replaced", WriteOptions::default())
        .await
        .unwrap();
    assert_eq!(std::fs::read(&f).unwrap(), b"replaced");
    assert_eq!(
        std::fs::metadata(&f).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let report = b
        .edit("sub/file.txt", &|old: &[u8]| {
            let mut v = old.to_vec();
            v.extend_from_slice(b"+edit");
            Ok(v)
        })
        .await
        .unwrap();
    assert_eq!(report.bytes, 13);
    assert_eq!(
        code(
            b.write(
                "sub/file.txt",
                b"x",
                WriteOptions {
                    create_parents: true,
                    create_new: true
                }
            )
            .await
        ),
        FsErrorCode::AlreadyExists
    );
    assert_eq!(
        code(
            b.write(
                "nodir/x.txt",
                b"x",
                WriteOptions {
                    create_parents: false,
                    create_new: false
                }
            )
            .await
        ),
        FsErrorCode::NotFound
    );
    let stat = b.stat("sub").await.unwrap();
    assert_eq!(stat.kind, FileKind::Directory);
    let names: Vec<(String, FileKind)> = b
        .list(".")
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.name, e.kind))
        .collect();
    assert!(names.contains(&("abs".to_owned(), FileKind::Symlink)));
    assert!(names.contains(&("sub".to_owned(), FileKind::Directory)));
    // No temp file survives anywhere.
    for entry in walk(Path::new(&l.ws)) {
        assert!(!entry.contains(".talon-tmp-"), "leftover temp file {entry}");
    }
    b.mkdir("made/a/b", true).await.unwrap();
    assert!(Path::new(&l.ws).join("made/a/b").is_dir());
    b.rename("new/deep/n.txt", "made/n.txt", false)
        .await
        .unwrap();
    assert_eq!(
        code(b.rename("sub/file.txt", "made/n.txt", false).await),
        FsErrorCode::AlreadyExists
    );
    b.remove("made", true).await.unwrap();
    assert!(!Path::new(&l.ws).join("made").exists());
    // Removing a symlink removes the link, not its target.
    b.remove("abs", false).await.unwrap();
    assert!(l.outside.join("secret").exists());
    assert_eq!(
        code(b.read("missing.txt", None).await),
        FsErrorCode::NotFound
    );
    assert_eq!(code(b.read("sub", None).await), FsErrorCode::NotAFile);
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        out.push(p.display().to_string());
        if e.file_type().unwrap().is_dir() {
            out.extend(walk(&p));
        }
    }
    out
}

#[tokio::test]
async fn every_symlink_escape_class_is_refused() {
    let l = layout();
    let b = bridge(&l).await;
    for path in ["abs/secret", "rel/secret", "c1/secret"] {
        assert_eq!(
            code(b.read(path, None).await),
            FsErrorCode::Escape,
            "{path}"
        );
        assert_eq!(code(b.stat(path).await), FsErrorCode::Escape, "{path}");
        assert_eq!(
            code(b.write(path, b"pwned", WriteOptions::default()).await),
            FsErrorCode::Escape,
            "{path}"
        );
        assert_eq!(
            code(b.resolve(path, Access::Read).await),
            FsErrorCode::Escape,
            "{path}"
        );
    }
    assert_eq!(code(b.list("abs").await), FsErrorCode::Escape);
    assert_eq!(
        code(b.write("abs/new.txt", b"x", WriteOptions::default()).await),
        FsErrorCode::Escape
    );
    assert!(!l.outside.join("new.txt").exists());
    // Dangling symlinks whose target would be created outside.
    for path in ["dang", "dang2", "dang2/y"] {
        assert_eq!(
            code(b.write(path, b"x", WriteOptions::default()).await),
            FsErrorCode::Escape,
            "{path}"
        );
    }
    assert_eq!(code(b.mkdir("dang2/z", true).await), FsErrorCode::Escape);
    assert!(!l.outside.join("created.txt").exists());
    assert!(!l.outside.join("missing").exists());
    assert_eq!(
        std::fs::read(l.outside.join("secret")).unwrap(),
        b"top secret"
    );
    // Lexical escapes never leave the mounts.
    assert_eq!(
        code(b.read("../../outside/secret", None).await),
        FsErrorCode::OutsideMounts
    );
    assert_eq!(
        code(b.read("/etc/passwd", None).await),
        FsErrorCode::OutsideMounts
    );
    assert_eq!(code(b.read("a\0b", None).await), FsErrorCode::InvalidPath);
}

#[tokio::test]
async fn read_only_mounts_refuse_every_mutation() {
    let l = layout();
    let b = bridge(&l).await;
    assert_eq!(b.read("skills/a.md", None).await.unwrap().bytes, b"skill");
    let r = b.resolve("skills/a.md", Access::Read).await.unwrap();
    assert!(r.read_only && r.exists);
    for result in [
        b.write("skills/a.md", b"x", WriteOptions::default())
            .await
            .map(|_| ()),
        b.write("skills/new.md", b"x", WriteOptions::default())
            .await
            .map(|_| ()),
        b.write("toskills/a.md", b"x", WriteOptions::default())
            .await
            .map(|_| ()),
        b.edit("skills/a.md", &|_: &[u8]| Ok(b"x".to_vec()))
            .await
            .map(|_| ()),
        b.mkdir("skills/d", false).await,
        b.remove("skills/a.md", false).await,
        b.rename("skills/a.md", "moved.md", false).await,
        b.rename("sub/file.txt", "skills/x.md", false).await,
    ] {
        assert_eq!(code(result), FsErrorCode::ReadOnly);
    }
    assert_eq!(
        std::fs::read(Path::new(&l.ws).join("skills/a.md")).unwrap(),
        b"skill"
    );
    assert!(!Path::new(&l.ws).join("skills/new.md").exists());
}

#[tokio::test]
async fn a_trailing_slash_on_a_file_is_not_a_directory() {
    let l = layout();
    let b = bridge(&l).await;
    let before = walk(Path::new(&l.ws));
    for file in ["sub/file.txt", "inlink"] {
        for path in [format!("{file}/"), format!("{file}//"), format!("{file}/.")] {
            let nd = FsErrorCode::NotADirectory;
            assert_eq!(code(b.read(&path, None).await), nd, "read {path}");
            assert_eq!(
                code(b.write(&path, b"new", WriteOptions::default()).await),
                nd,
                "write {path}"
            );
            assert_eq!(
                code(b.edit(&path, &|_: &[u8]| Ok(b"new".to_vec())).await),
                nd,
                "edit {path}"
            );
            assert_eq!(code(b.stat(&path).await), nd, "stat {path}");
            assert_eq!(code(b.list(&path).await), nd, "list {path}");
            assert_eq!(
                code(b.resolve(&path, Access::Read).await),
                nd,
                "resolve {path}"
            );
            assert_eq!(code(b.remove(&path, false).await), nd, "remove {path}");
            assert_eq!(
                code(b.rename(&path, "moved", false).await),
                nd,
                "rename {path}"
            );
            let err = b.read(&path, None).await.unwrap_err();
            assert!(err.message.contains("drop the trailing `/`"), "{err}");
        }
    }
    // A new name with a trailing slash creates neither a file nor a
    // directory; a directory with one stays a directory.
    assert_eq!(
        code(b.write("fresh.txt/", b"x", WriteOptions::default()).await),
        FsErrorCode::NotADirectory
    );
    assert_eq!(
        code(b.write("sub/", b"x", WriteOptions::default()).await),
        FsErrorCode::NotAFile
    );
    assert!(b.stat("sub/").await.is_ok());
    assert_eq!(b.list("sub/").await.unwrap().len(), 1);
    assert_eq!(walk(Path::new(&l.ws)), before, "nothing changed");
    assert_eq!(b.read("inlink", None).await.unwrap().bytes, b"inside");
}

#[tokio::test]
async fn mount_roots_are_never_removed_or_renamed_under_any_spelling() {
    let l = layout();
    let b = bridge(&l).await;
    let before = walk(Path::new(&l.ws));
    let ws = l.ws.clone();
    let roots = [
        ws.clone(),
        format!("{ws}/"),
        format!("{ws}//"),
        ".".to_owned(),
        "./".to_owned(),
        "sub/..".to_owned(),
        format!("{ws}/sub/../."),
        "skills".to_owned(),
        "skills/".to_owned(),
        "skills/x/..".to_owned(),
        // Through a link that lands on the nested mount's root.
        "toskills/".to_owned(),
        "toskills/.".to_owned(),
    ];
    for root in &roots {
        for recursive in [false, true] {
            let err = b.remove(root, recursive).await.unwrap_err();
            assert_eq!(err.code, FsErrorCode::MountRoot, "remove {root}: {err}");
            assert!(err.message.contains("mount root"), "{err}");
        }
        assert_eq!(
            code(b.rename(root, "elsewhere", true).await),
            FsErrorCode::MountRoot,
            "rename {root}"
        );
        assert_eq!(
            code(b.rename("sub/file.txt", root, true).await),
            FsErrorCode::MountRoot,
            "rename onto {root}"
        );
    }
    assert_eq!(walk(Path::new(&l.ws)), before, "nothing changed");
    // The link itself (no slash) is an ordinary entry.
    b.remove("toskills", false).await.unwrap();
    assert!(Path::new(&l.ws).join("skills/a.md").exists());
}
