use std::path::PathBuf;

use talon_sandbox_core::MountKind;

use super::*;
use crate::rootfs::RootEntry;

fn strings(args: &[OsString]) -> Vec<String> {
    args.iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

fn position(args: &[String], window: &[&str]) -> usize {
    args.windows(window.len())
        .position(|w| w.iter().zip(window).all(|(a, b)| a == b))
        .unwrap_or_else(|| panic!("{window:?} not in {args:?}"))
}

#[test]
fn layout_binds_the_root_then_the_plan_then_makes_the_root_read_only() {
    let layout = SandboxLayout {
        root: Arc::new(HostRoot {
            entries: vec![
                RootEntry::ReadOnlyDir {
                    path: PathBuf::from("/usr"),
                },
                RootEntry::Symlink {
                    path: PathBuf::from("/bin"),
                    target: PathBuf::from("usr/bin"),
                },
                RootEntry::MaskedFile {
                    path: PathBuf::from("/etc/shadow"),
                },
                RootEntry::MaskedDir {
                    path: PathBuf::from("/etc/ssl/private"),
                },
            ],
        }),
        pinned: Vec::new(),
        mounts: vec![
            MountEntry {
                host_path: PathBuf::from("/srv/ws"),
                container_path: "/workspace".to_owned(),
                read_only: false,
                kind: MountKind::Workspace,
                bind_options: None,
            },
            MountEntry {
                host_path: PathBuf::from("/srv/ws/skills"),
                container_path: "/workspace/skills".to_owned(),
                read_only: true,
                kind: MountKind::Skills,
                bind_options: None,
            },
        ],
        tmpfs: vec!["/tmp".to_owned()],
        hostname: "talon-sbx-x".to_owned(),
        read_only_root: true,
        sandbox_exec: Some(PathBuf::from("/opt/talon/talon-sandbox-exec")),
        landlock: true,
        egress_socket: None,
    };
    let args = strings(&layout.args());
    for flag in [
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--die-with-parent",
        "--new-session",
    ] {
        assert!(args.iter().any(|a| a == flag), "{flag}");
    }
    let usr = position(&args, &["--ro-bind", "/usr", "/usr"]);
    let bin = position(&args, &["--symlink", "usr/bin", "/bin"]);
    let shadow = position(&args, &["--ro-bind", "/dev/null", "/etc/shadow"]);
    let private = position(
        &args,
        &[
            "--tmpfs",
            "/etc/ssl/private",
            "--remount-ro",
            "/etc/ssl/private",
        ],
    );
    let ws = position(&args, &["--bind", "/srv/ws", "/workspace"]);
    let skills = position(&args, &["--ro-bind", "/srv/ws/skills", "/workspace/skills"]);
    let helper = position(
        &args,
        &[
            "--ro-bind",
            "/opt/talon/talon-sandbox-exec",
            "/.talon/sandbox-exec",
        ],
    );
    let ro = position(&args, &["--remount-ro", "/"]);
    assert!(
        usr < bin
            && bin < shadow
            && shadow < private
            && private < ws
            && ws < skills
            && skills < helper
            && helper < ro
    );
    // Landlock: the writable workspace and tmpfs read-write, the system
    // dirs and the read-only skills read-only, nothing for /bin's symlink.
    let rules = layout.file_rules();
    let paths = |v: &[PathBuf]| {
        v.iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        paths(&rules.read_only),
        ["/usr", "/proc", "/dev", "/workspace/skills"]
    );
    assert_eq!(&paths(&rules.read_write)[..2], ["/workspace", "/tmp"]);
    assert!(paths(&rules.read_write).contains(&"/dev/null".to_owned()));
    assert!(!paths(&rules.read_write).contains(&"/dev/shm".to_owned()));
    assert_eq!(paths(&rules.list_only), ["/"]);
    assert!(rules.require);
    let prefix = strings(&layout.command_prefix());
    assert_eq!(prefix[0], "/.talon/sandbox-exec");
    assert_eq!(prefix.last().map(String::as_str), Some("--"));
    position(&args, &["--cap-drop", "ALL"]);
    position(&args, &["--add-seccomp-fd", "3", "--add-seccomp-fd", "4"]);
    // Nothing of the host's home or state is bound.
    assert!(
        !args
            .iter()
            .any(|a| a == "/" || a.starts_with("/root") || a.starts_with("/home"))
            || args[ro + 1] == "/"
    );
}

#[test]
fn a_writable_root_is_not_remounted() {
    let layout = SandboxLayout {
        root: Arc::new(HostRoot::default()),
        pinned: Vec::new(),
        mounts: Vec::new(),
        tmpfs: Vec::new(),
        hostname: "h".to_owned(),
        read_only_root: false,
        sandbox_exec: None,
        landlock: false,
        egress_socket: None,
    };
    assert!(!strings(&layout.args()).iter().any(|a| a == "--remount-ro"));
    // Without the helper nothing precedes the command.
    assert!(layout.command_prefix().is_empty());
}

#[test]
fn egress_binds_the_socket_and_starts_the_forwarder_without_landlock_rules() {
    let layout = SandboxLayout {
        root: Arc::new(HostRoot::default()),
        pinned: Vec::new(),
        mounts: Vec::new(),
        tmpfs: Vec::new(),
        hostname: "h".to_owned(),
        read_only_root: true,
        sandbox_exec: Some(PathBuf::from("/opt/talon/talon-sandbox-exec")),
        landlock: false,
        egress_socket: Some(PathBuf::from("/tmp/talon-egress-x/egress.sock")),
    };
    let args = strings(&layout.args());
    let bind = args.windows(3).any(|w| {
        w == [
            "--ro-bind",
            "/tmp/talon-egress-x/egress.sock",
            EGRESS_SOCKET_PATH,
        ]
    });
    assert!(bind, "{args:?}");
    // The socket is bound before the root goes read-only.
    let remount = args.iter().position(|a| a == "--remount-ro");
    let socket = args.iter().position(|a| a == EGRESS_SOCKET_PATH);
    assert!(socket < remount);
    assert_eq!(
        strings(&layout.command_prefix()),
        [
            SANDBOX_EXEC_PATH,
            "--talon-sandbox-exec",
            "--egress",
            EGRESS_SOCKET_PATH,
            "--"
        ]
    );
    // With Landlock too, the rules come first and `--egress` rides along.
    let both = SandboxLayout {
        landlock: true,
        ..layout
    };
    let prefix = strings(&both.command_prefix());
    assert!(prefix.iter().any(|a| a == "--require"), "{prefix:?}");
    assert!(prefix.ends_with(&[
        "--egress".to_owned(),
        EGRESS_SOCKET_PATH.to_owned(),
        "--".to_owned()
    ]));
}

#[test]
fn pinned_sources_go_by_descriptor_and_every_command_checks_them_first() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("it's \"odd\"");
    std::fs::create_dir_all(&target).unwrap();
    let pin = talon_sandbox_core::PinnedSource::resolve(&target).unwrap();
    let entry = MountEntry {
        host_path: pin.canonical.clone(),
        container_path: target.to_string_lossy().into_owned(),
        read_only: true,
        kind: MountKind::Bind,
        bind_options: None,
    };
    let layout = |pinned: Vec<talon_sandbox_core::PinnedSource>| SandboxLayout {
        root: Arc::new(HostRoot::default()),
        pinned,
        mounts: vec![entry.clone()],
        tmpfs: Vec::new(),
        hostname: "h".to_owned(),
        read_only_root: true,
        sandbox_exec: None,
        landlock: false,
        egress_socket: None,
    };
    let good = layout(vec![pin.clone()]);
    let args = strings(&good.args());
    position(&args, &["--ro-bind-fd", "5", &entry.container_path]);
    // The check is plain sh + stat: run it here against the same path.
    let run = |layout: &SandboxLayout| {
        let prefix = layout.command_prefix();
        let path = std::env::var_os("PATH").map(|p| ("PATH", p));
        talon_proc_tree::ChildCommand::new(
            &prefix[0],
            talon_proc_tree::ChildEnv::exact(path),
            talon_proc_tree::ProcessGroup::Parent,
        )
        .args(&prefix[1..])
        .args(["echo", "ran"])
        .output()
        .unwrap()
    };
    let out = run(&good);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, b"ran\n");
    let wrong = layout(vec![talon_sandbox_core::PinnedSource {
        ino: pin.ino + 1,
        ..pin
    }]);
    let out = run(&wrong);
    assert_eq!(out.status.code(), Some(MOUNT_CHECK_EXIT));
    assert!(out.stdout.is_empty(), "the command must not run");
    assert!(String::from_utf8_lossy(&out.stderr).contains("mount 0 of the sandbox"));
}
