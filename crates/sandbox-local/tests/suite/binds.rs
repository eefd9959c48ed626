//! Binds that cannot be bent, attacked under real bubblewrap: blocked
//! sources with every `dangerously*` switch on, a writable submount under
//! a read-only bind, a 1,000-iteration swap race against launches, and
//! managed workspaces that are homes or hold Talon's own config.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use talon_sandbox_core::{
    DockerConfig, ExitStatus, SandboxErrorKind, SandboxHandle, WorkspaceAccess,
};
use talon_sandbox_local::MOUNT_CHECK_EXIT;
use talon_test_support::mounts::{TmpfsSubmount, exchange};

use super::common::{QUICK, Tree, sh};

fn all_switches(binds: Vec<String>) -> DockerConfig {
    DockerConfig {
        binds: Some(binds),
        dangerously_allow_external_bind_sources: Some(true),
        dangerously_allow_reserved_container_targets: Some(true),
        dangerously_allow_container_namespace_join: Some(true),
        ..Default::default()
    }
}

#[tokio::test]
async fn each_blocked_bind_stays_blocked_with_every_dangerous_switch_on() {
    let tree = Tree::new();
    let backend = tree.backend_without_landlock();
    let home = tree.home();
    for file in [".git-credentials", ".netrc", ".npmrc"] {
        std::fs::write(home.join(file), "secret").unwrap();
    }
    std::fs::create_dir_all(home.join(".config/gcloud")).unwrap();
    let config = tree.state().join("talon.json");
    std::fs::write(&config, "{}").unwrap();
    let ws = tree.workspace();
    std::os::unix::fs::symlink(home.join(".ssh"), ws.join("keys")).unwrap();
    let cases: Vec<(String, &str)> = vec![
        ("/var/lib/docker:/data".into(), "[bind-blocked-path]"),
        ("/run/containerd:/data".into(), "[bind-blocked-path]"),
        ("/var/run/docker.sock:/data".into(), "[bind-blocked-path]"),
        (
            format!("{}:/data", home.join(".ssh").display()),
            "[bind-blocked-path]",
        ),
        (
            format!("{}:/data", home.join(".netrc").display()),
            "[bind-blocked-path]",
        ),
        (
            format!("{}:/data", home.join(".config/gcloud").display()),
            "[bind-blocked-path]",
        ),
        (format!("{}:/data", home.display()), "[bind-home-dir]"),
        (
            format!("{}:/data", tree.state().display()),
            "[bind-talon-state]",
        ),
        (
            format!("{}:/data", tree.state().join("talon.db").display()),
            "[bind-talon-state]",
        ),
        (
            format!("{}:/data", ws.join("keys").display()),
            "[bind-blocked-path]",
        ),
        (
            format!("{}:/data:rshared", ws.display()),
            "[bind-propagation]",
        ),
        (
            format!("{}:/usr/lib/x", ws.display()),
            "[bind-system-target]",
        ),
    ];
    for (bind, code) in cases {
        let resolved = tree.resolved(WorkspaceAccess::None, all_switches(vec![bind.clone()]));
        let req = talon_sandbox_core::SandboxRequest::new(
            resolved.with_config_file(Some(config.clone())),
            "agent:main:main",
            &ws,
            None,
        );
        let err = backend.ensure_local(&req).await.unwrap_err();
        assert!(
            err.kind() == SandboxErrorKind::Config && err.message().contains(code),
            "{bind} must be refused with {code}: {err}"
        );
    }
}

#[tokio::test]
async fn a_writable_submount_under_a_read_only_bind_is_not_writable_inside() {
    let tree = Tree::new();
    let ws = tree.workspace();
    let data = ws.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let sub = TmpfsSubmount::new(&data.join("sub"));
    let agent_sub = TmpfsSubmount::new(&ws.join("cache"));
    let req = tree.request(
        WorkspaceAccess::Ro,
        DockerConfig {
            binds: Some(vec![format!("{}:/data:ro", data.display())]),
            ..Default::default()
        },
    );
    // Without Landlock, so the mount flags alone are what is tested.
    let backend = tree.backend_without_landlock();
    let handle = backend.ensure_local(&req).await.unwrap();
    let (out, _, _) = sh(
        &*handle,
        "cat /data/sub/inside-submount /agent/cache/inside-submount",
    )
    .await;
    assert_eq!(
        out, "original\noriginal\n",
        "the submounts are visible, read-only"
    );
    for target in [
        "/data/sub/inside-submount",
        "/data/sub/new-file",
        "/agent/cache/inside-submount",
        "/agent/cache/new-file",
    ] {
        let (_, err, status) = sh(&*handle, &format!("echo pwned > {target}")).await;
        assert!(!status.success(), "{target} must not be writable");
        assert!(err.contains("Read-only"), "{target}: {err}");
    }
    assert_eq!(
        std::fs::read_to_string(sub.path.join("inside-submount")).unwrap(),
        "original\n"
    );
    assert!(!sub.path.join("new-file").exists() && !agent_sub.path.join("new-file").exists());
}

/// The race of the issue against the local sandbox: it is ensured once
/// (sources pinned), then another thread swaps the bound directory with a
/// symlink to a secret 1,000 times while commands launch back to back.
/// Every launch opens each source again without following symlinks and
/// checks its identity, and bubblewrap mounts that descriptor: a launch
/// either sees the allowed directory or is refused; never the secret.
#[tokio::test]
async fn a_thousand_bind_source_swaps_never_mount_the_swapped_target() {
    const SWAPS: usize = 1_000;
    let tree = Tree::new();
    let ws = std::fs::canonicalize(tree.workspace()).unwrap();
    let secret = std::fs::canonicalize(tree.dir.path())
        .unwrap()
        .join("secret");
    std::fs::create_dir_all(&secret).unwrap();
    std::fs::write(secret.join("marker"), "SECRET\n").unwrap();
    let dir = ws.join("dir");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("marker"), "allowed\n").unwrap();
    let evil = ws.join("dir-evil");
    std::os::unix::fs::symlink(&secret, &evil).unwrap();
    let allowed = ws.join("allowed");
    std::fs::create_dir_all(&allowed).unwrap();
    std::fs::write(allowed.join("marker"), "allowed\n").unwrap();
    let link = ws.join("link");
    std::os::unix::fs::symlink(&allowed, &link).unwrap();
    let flip = ws.join("link-flip");
    std::os::unix::fs::symlink(&secret, &flip).unwrap();
    let req = tree.request(
        WorkspaceAccess::None,
        DockerConfig {
            binds: Some(vec![
                format!("{}:/data:ro", dir.display()),
                format!("{}:/data2:ro", link.display()),
            ]),
            ..Default::default()
        },
    );
    let backend = tree.backend_without_landlock();
    let handle = backend.ensure_local(&req).await.unwrap();

    let done = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (dir, evil, link, flip, done) = (
            dir.clone(),
            evil.clone(),
            link.clone(),
            flip.clone(),
            Arc::clone(&done),
        );
        std::thread::spawn(move || {
            for i in 0..SWAPS {
                exchange(&dir, &evil);
                exchange(&link, &flip);
                std::thread::sleep(Duration::from_micros(200 + (i as u64 * 7919) % 3_000));
            }
            done.store(true, Ordering::SeqCst);
            SWAPS
        })
    };
    let started = Instant::now();
    let (mut seen, mut refused, mut launches, mut caught_inside) = (0usize, 0usize, 0usize, 0usize);
    while !done.load(Ordering::SeqCst) || launches < 4 {
        launches += 1;
        match handle
            .run_script("cat /data/marker /data2/marker", &[], None, QUICK)
            .await
        {
            Ok(out) => {
                let text = String::from_utf8_lossy(&out.stdout);
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(
                    !text.contains("SECRET"),
                    "the swapped target was mounted: {text}"
                );
                if out.status.success() {
                    assert_eq!(text, "allowed\nallowed\n");
                    seen += 1;
                } else if out.status == ExitStatus::Code(MOUNT_CHECK_EXIT) {
                    // bubblewrap mounted the swapped path (it turns the
                    // descriptor back into a path); the check inside
                    // stopped the command before it ran.
                    assert!(err.contains("is not its validated source"), "{err}");
                    caught_inside += 1;
                } else {
                    // bubblewrap itself failed on a source that moved
                    // mid-swap: nothing ran.
                    assert!(err.starts_with("bwrap: "), "{err}");
                    assert!(text.is_empty(), "{text}");
                    refused += 1;
                }
            }
            Err(e) if e.kind() == SandboxErrorKind::Config => {
                assert!(e.message().contains("Sandbox security"), "{e}");
                refused += 1;
            }
            Err(other) => panic!("unexpected failure in the race: {other}"),
        }
    }
    assert_eq!(swapper.join().unwrap(), SWAPS);
    eprintln!(
        "{SWAPS} swaps, {launches} launches ({seen} saw the allowed dir, {refused} refused, {caught_inside} stopped inside) in {:?}",
        started.elapsed()
    );
    assert!(
        seen > 0 && refused > 0,
        "both outcomes must occur: {seen} / {refused}"
    );
}

#[tokio::test]
async fn a_workspace_that_is_a_home_holding_ssh_is_refused() {
    let tree = Tree::new();
    let backend = tree.backend_without_landlock();
    for access in [WorkspaceAccess::Rw, WorkspaceAccess::Ro] {
        let req = talon_sandbox_core::SandboxRequest::new(
            tree.resolved(access, DockerConfig::default()),
            "agent:main:main",
            &tree.home(),
            None,
        );
        let err = backend.ensure_local(&req).await.unwrap_err();
        assert!(
            err.to_string().contains("[workspace-home-dir]"),
            "{access:?}: {err}"
        );
    }
}

#[tokio::test]
async fn a_sandboxed_exec_cannot_modify_the_config_file() {
    let tree = Tree::new();
    let backend = tree.backend();
    // In the workspace: refused before anything runs.
    let inside = tree.workspace().join("talon.json");
    std::fs::write(&inside, "{}\n").unwrap();
    let req = talon_sandbox_core::SandboxRequest::new(
        tree.resolved(WorkspaceAccess::Rw, DockerConfig::default())
            .with_config_file(Some(inside.clone())),
        "agent:main:main",
        &tree.workspace(),
        None,
    );
    let err = backend.ensure_local(&req).await.unwrap_err();
    assert!(err.to_string().contains("[workspace-talon-state]"), "{err}");
    std::fs::remove_file(&inside).unwrap();
    // Beside the workspace in the state dir: out of the sandbox's reach.
    let config = tree.state().join("talon.json");
    std::fs::write(&config, "{ \"policy\": \"strict\" }\n").unwrap();
    let req = talon_sandbox_core::SandboxRequest::new(
        tree.resolved(WorkspaceAccess::Rw, DockerConfig::default())
            .with_config_file(Some(config.clone())),
        "agent:main:main",
        &tree.workspace(),
        None,
    );
    let handle = backend.ensure_local(&req).await.unwrap();
    let path = config.display().to_string();
    for attempt in [
        format!("echo '{{}}' > {path}"),
        "echo '{}' > /workspace/../talon.json".to_owned(),
        format!("cat {path}"),
    ] {
        let (_, _, status) = sh(&*handle, &attempt).await;
        assert!(!status.success(), "{attempt} must fail");
    }
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "{ \"policy\": \"strict\" }\n"
    );
}
