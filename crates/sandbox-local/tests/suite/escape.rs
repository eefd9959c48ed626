//! Escape attempts against the local backend; each must fail. Every test
//! first shows the thing it protects exists on the host (so it could
//! fail), then that the sandbox cannot reach it. Real bubblewrap, real
//! processes checked by pid in the host's /proc.

use super::common;

use std::net::TcpListener;
use std::time::Duration;

use common::{SECRET, Tree, eventually, exists, host_pids_with, sh, sh_args};
use talon_sandbox_core::{
    DockerConfig, ExitStatus, LaunchRequest, SandboxBackend, WorkspaceAccess,
};
use tokio::io::AsyncBufReadExt;

#[tokio::test]
async fn ssh_keys_and_the_state_dir_outside_the_mounts_are_unreadable() {
    let tree = Tree::new();
    let key = tree.home().join(".ssh/id_ed25519");
    let db = tree.state().join("talon.db");
    assert_eq!(std::fs::read_to_string(&key).unwrap(), SECRET);
    let sandbox = tree
        .backend()
        .ensure(&tree.request(WorkspaceAccess::Rw, DockerConfig::default()))
        .await
        .unwrap();
    // By host path, by climbing out of the workspace, and by searching.
    let (out, err, _) = sh_args(
        &*sandbox,
        "cat \"$1\" \"$2\" /workspace/../talon.db /workspace/../../home/.ssh/id_ed25519 2>&1; \
         ls /root /home 2>&1; echo end",
        &[key.display().to_string(), db.display().to_string()],
    )
    .await;
    assert!(!out.contains(SECRET), "{out}");
    assert!(out.ends_with("end\n"), "{out} {err}");
    assert!(out.contains("No such file"), "{out}");
    // The sandbox's root holds the system dirs, its own mounts, the
    // Landlock helper's directory and nothing else of the host.
    let (out, _, _) = sh(&*sandbox, "ls -A /").await;
    for entry in out.lines() {
        assert!(
            [
                ".talon",
                "bin",
                "dev",
                "etc",
                "lib",
                "lib32",
                "lib64",
                "libx32",
                "proc",
                "run",
                "sbin",
                "tmp",
                "usr",
                "var",
                "workspace"
            ]
            .contains(&entry),
            "unexpected {entry} in the sandbox's root: {out}"
        );
    }
}

#[tokio::test]
async fn etc_secrets_are_masked_and_the_system_dirs_are_read_only() {
    let tree = Tree::new();
    let sandbox = tree
        .backend()
        .ensure(&tree.request(WorkspaceAccess::Rw, DockerConfig::default()))
        .await
        .unwrap();
    let shadow = std::fs::read_to_string("/etc/shadow").unwrap();
    assert!(shadow.contains("root:"));
    let (out, _, _) = sh(
        &*sandbox,
        "cat /etc/shadow 2>/dev/null || echo no-shadow; test -s /etc/passwd && echo passwd; \
         ls -A /etc/ssl/private | wc -l; touch /etc/ssl/private/k 2>/dev/null || echo ro",
    )
    .await;
    assert_eq!(out, "no-shadow\npasswd\n0\nro\n");
}

#[tokio::test]
async fn nothing_outside_the_workspace_can_be_written() {
    let tree = Tree::new();
    let outside = tree.dir.path().join("outside.txt");
    let sandbox = tree
        .backend()
        .ensure(&tree.request(WorkspaceAccess::Rw, DockerConfig::default()))
        .await
        .unwrap();
    let (out, _, _) = sh_args(
        &*sandbox,
        "for f in \"$1\" /workspace/../outside.txt /usr/talon-x /etc/talon-x /talon-x /var/talon-x; do \
           (echo x > \"$f\") 2>/dev/null && echo \"wrote $f\"; done; \
         echo ok > /tmp/scratch && cat /tmp/scratch; echo ws > /workspace/in.txt && echo in",
        &[outside.display().to_string()],
    )
    .await;
    assert_eq!(out, "ok\nin\n");
    assert!(!exists(&outside));
    for path in ["/usr/talon-x", "/etc/talon-x", "/talon-x", "/var/talon-x"] {
        assert!(!exists(std::path::Path::new(path)), "{path}");
    }
    // /tmp in the sandbox is its own tmpfs, not the host's.
    assert!(!exists(std::path::Path::new("/tmp/scratch")));
    assert!(exists(&tree.workspace().join("in.txt")));
}

#[tokio::test]
async fn a_loopback_listener_on_the_host_is_unreachable_with_network_off() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = "perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(PeerAddr => \"127.0.0.1:$ARGV[0]\", Timeout => 3) or exit 7; exit 0' \"$1\"";
    // On the host the same client connects (the test can fail).
    let host = std::process::Command::new("sh")
        .args(["-c", connect, "sh", &port.to_string()])
        .status()
        .unwrap();
    assert!(host.success());
    let tree = Tree::new();
    let sandbox = tree
        .backend()
        .ensure(&tree.request(WorkspaceAccess::Rw, DockerConfig::default()))
        .await
        .unwrap();
    let (_, _, status) = sh_args(&*sandbox, connect, &[port.to_string()]).await;
    assert_eq!(status, ExitStatus::Code(7));
    // Only loopback exists in there.
    let (out, _, _) = sh(
        &*sandbox,
        "ls /sys/class/net 2>/dev/null || cat /proc/net/dev | tail -n +3 | cut -d: -f1",
    )
    .await;
    assert_eq!(out.split_whitespace().collect::<Vec<_>>(), ["lo"]);
}

#[tokio::test]
async fn host_processes_are_invisible_and_ptrace_is_refused() {
    let tree = Tree::new();
    let sandbox = tree
        .backend()
        .ensure(&tree.request(WorkspaceAccess::Rw, DockerConfig::default()))
        .await
        .unwrap();
    let me = std::process::id();
    assert!(exists(std::path::Path::new(&format!("/proc/{me}/cmdline"))));
    let (out, _, _) = sh_args(
        &*sandbox,
        "test -e /proc/$1/cmdline && echo sees-host-pid; ls /proc | grep -c '^[0-9]'",
        &[me.to_string()],
    )
    .await;
    let visible: u32 = out.trim().parse().unwrap_or_else(|_| panic!("{out}"));
    assert!(visible <= 6, "only the sandbox's own processes: {out}");

    // ptrace (attach to our own child, which would be allowed without the
    // filter), the key ring, unshare of a user namespace, io_uring and an
    // x32 syscall number: EPERM from the filter.
    let script = format!(
        "sleep 30 & c=$!; \
         perl -e 'syscall({ptrace}, 16, $ARGV[0], 0, 0) == -1 or die; print $!+0, \"\\n\"' $c; \
         perl -e 'syscall({keyctl}, 0, 0, 0, 0, 0) == -1 or die; print $!+0, \"\\n\"'; \
         perl -e 'syscall({unshare}, 0x10000000) == -1 or die; print $!+0, \"\\n\"'; \
         perl -e 'syscall({uring}, 1, 0) == -1 or die; print $!+0, \"\\n\"'; \
         perl -e 'syscall({x32}) == -1 or die; print $!+0, \"\\n\"'; \
         unshare -U true 2>/dev/null && echo unshared; kill $c",
        ptrace = libc::SYS_ptrace,
        keyctl = libc::SYS_keyctl,
        unshare = libc::SYS_unshare,
        uring = libc::SYS_io_uring_setup,
        x32 = if cfg!(target_arch = "x86_64") {
            0x4000_0000 + libc::SYS_getpid
        } else {
            libc::SYS_bpf
        },
    );
    let (out, err, _) = sh(&*sandbox, &script).await;
    let eperm = libc::EPERM.to_string();
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [eperm.as_str(); 5],
        "{out} {err}"
    );
    // Capabilities are all gone and no new privileges can be gained.
    let (out, _, _) = sh(
        &*sandbox,
        "grep -E '^(Cap(Inh|Prm|Eff|Amb)|NoNewPrivs|Seccomp):' /proc/self/status",
    )
    .await;
    // (The bounding set stays; with no_new_privs an exec can never gain
    // what the permitted set lacks, even as uid 0.)
    for cap in ["CapInh", "CapPrm", "CapEff", "CapAmb"] {
        assert!(out.contains(&format!("{cap}:\t0000000000000000")), "{out}");
    }
    assert!(out.contains("NoNewPrivs:\t1"), "{out}");
    assert!(out.contains("Seccomp:\t2"), "{out}");
    // Threads still start (clone3 falls back to clone).
    let (out, err, status) = sh(&*sandbox, "python3 -c 'import threading; t = threading.Thread(target=print, args=(\"thread\",)); t.start(); t.join()'").await;
    assert_eq!(
        (out.as_str(), status),
        ("thread\n", ExitStatus::Code(0)),
        "{err}"
    );
}

#[tokio::test]
async fn a_double_forked_daemon_dies_with_its_killed_command() {
    let tree = Tree::new();
    let sandbox = tree
        .backend()
        .ensure(&tree.request(WorkspaceAccess::Rw, DockerConfig::default()))
        .await
        .unwrap();
    let marker = format!(
        "{}.{}",
        4000 + std::process::id() % 1000,
        std::process::id()
    );
    let proc = sandbox
        .launcher()
        .launch(LaunchRequest {
            command: format!("(setsid sleep {marker} &); echo started; sleep 1000"),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut lines = tokio::io::BufReader::new(proc.stdout).lines();
    assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("started"));
    assert!(
        eventually(Duration::from_secs(5), || !host_pids_with(&format!(
            "sleep {marker}"
        ))
        .is_empty())
        .await,
        "the daemon should be running on the host"
    );
    proc.control.kill().await.unwrap();
    assert_eq!(proc.control.wait().await.unwrap(), ExitStatus::Signal(9));
    assert!(
        eventually(Duration::from_secs(5), || host_pids_with(&format!(
            "sleep {marker}"
        ))
        .is_empty())
        .await,
        "the double-forked sleep outlived the kill: {:?}",
        host_pids_with(&format!("sleep {marker}"))
    );

    // The same through run_script's timeout.
    let marker2 = format!("{marker}1");
    let err = sandbox
        .run_script(
            &format!("(setsid sleep {marker2} &); sleep 1000"),
            &[],
            None,
            Duration::from_millis(500),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("killed"), "{err}");
    assert!(
        eventually(Duration::from_secs(5), || host_pids_with(&format!(
            "sleep {marker2}"
        ))
        .is_empty())
        .await,
        "the double-forked sleep outlived the timeout"
    );
}
