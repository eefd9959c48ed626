//! Landlock through `talon-sandbox-exec`: inside the sandbox, a write the
//! mount namespace alone allows (`/dev/shm`, a directory on bubblewrap's
//! writable `/dev` tmpfs that no rule grants) is refused once the helper
//! applies the file rules, while `/workspace`, `/tmp` and the tty/null
//! devices keep working, and `explain` says what is applied. Real
//! bubblewrap, the real helper, the real kernel's Landlock.

use super::common;

use common::{SANDBOX_EXEC, Tree, sh};
use talon_sandbox_core::{DockerConfig, ExitStatus, SandboxBackend, WorkspaceAccess};
use talon_sandbox_local::{Enforcement, LandlockSetup, Protections};

/// Writes a file on `/dev/shm` and reports whether it worked.
const SHM_WRITE: &str = "if echo x > /dev/shm/probe 2>/dev/null; then echo shm-written; \
                         else echo shm-refused; fi";

fn landlock_required(setup: &LandlockSetup) {
    assert!(
        matches!(setup, LandlockSetup::Applied { .. }),
        "this test needs a kernel with Landlock (CONFIG_SECURITY_LANDLOCK and `landlock` in \
         lsm=); the helper says: {}",
        setup.detail()
    );
}

#[tokio::test]
async fn landlock_refuses_a_write_the_mount_namespace_allows() {
    let tree = Tree::new();
    let request = tree.request(WorkspaceAccess::Rw, DockerConfig::default());

    // Without the helper, bubblewrap's /dev tmpfs lets /dev/shm be written.
    let plain = tree.backend_without_landlock();
    let sandbox = plain.ensure(&request).await.unwrap();
    let (out, err, status) = sh(&*sandbox, SHM_WRITE).await;
    assert_eq!(
        (out.as_str(), status),
        ("shm-written\n", ExitStatus::Code(0)),
        "{err}"
    );

    // With it, the same write is refused (EACCES from Landlock), and the
    // granted paths still work.
    let backend = tree.backend();
    landlock_required(backend.landlock());
    let sandbox = backend.ensure(&request).await.unwrap();
    let (out, err, status) = sh(&*sandbox, SHM_WRITE).await;
    assert_eq!(
        (out.as_str(), status),
        ("shm-refused\n", ExitStatus::Code(0)),
        "{err}"
    );
    let (_, err, _) = sh(&*sandbox, "touch /dev/shm/t").await;
    assert!(err.contains("Permission denied"), "{err}");

    let (out, err, status) = sh(
        &*sandbox,
        "echo made > /workspace/landlock.txt && echo ws-ok; \
         printf '#!/bin/sh\\necho ran-from-tmp\\n' > /tmp/s && chmod +x /tmp/s && /tmp/s; \
         echo gone > /dev/null && echo null-ok; \
         head -c 4 /dev/urandom | wc -c; \
         cat /etc/hostname >/dev/null && echo etc-ok; \
         ls / | grep -qx usr && echo ls-root-ok; \
         echo err >&2; exit 5",
    )
    .await;
    assert_eq!(
        out, "ws-ok\nran-from-tmp\nnull-ok\n4\netc-ok\nls-root-ok\n",
        "{err}"
    );
    assert_eq!(err, "err\n");
    assert_eq!(status, ExitStatus::Code(5));
    assert_eq!(
        std::fs::read_to_string(tree.workspace().join("landlock.txt")).unwrap(),
        "made\n"
    );
}

#[tokio::test]
async fn landlock_keeps_a_writable_root_read_only() {
    // `readOnlyRoot: false` leaves bubblewrap's root tmpfs writable; no
    // rule grants it, so Landlock refuses the write anyway.
    let tree = Tree::new();
    let docker = DockerConfig {
        read_only_root: Some(false),
        ..Default::default()
    };
    let request = tree.request(WorkspaceAccess::Rw, docker);
    let write = "mkdir /made-at-root 2>/dev/null && echo root-written || echo root-refused";
    let plain = tree.backend_without_landlock();
    let (out, _, _) = sh(&*plain.ensure(&request).await.unwrap(), write).await;
    assert_eq!(out, "root-written\n");
    let backend = tree.backend();
    landlock_required(backend.landlock());
    let (out, _, _) = sh(&*backend.ensure(&request).await.unwrap(), write).await;
    assert_eq!(out, "root-refused\n");
}

#[tokio::test]
async fn explain_reports_landlock_with_its_abi_or_why_not() {
    let tree = Tree::new();
    let config = tree.resolved(WorkspaceAccess::Rw, DockerConfig::default());

    let backend = tree.backend();
    let setup = backend.landlock();
    landlock_required(setup);
    let LandlockSetup::Applied { helper, report } = setup else {
        unreachable!()
    };
    assert_eq!(helper.to_str(), Some(SANDBOX_EXEC));
    assert_eq!(report.enforcement, Enforcement::Full);
    let abi = report.abi.clone().unwrap();
    assert!(abi.parse::<u32>().unwrap() >= 1);
    let p = Protections::detect_with(&config, &tree.state(), setup);
    assert!(p.landlock.applied);
    assert!(
        p.landlock.detail.contains(&format!("ABI {abi}")),
        "{}",
        p.landlock.detail
    );
    assert!(p.landlock.detail.contains("/.talon/sandbox-exec"));

    // No helper: not applied, and why.
    let missing = LandlockSetup::detect(Some(&tree.dir.path().join("no-such-helper")));
    let p = Protections::detect_with(&config, &tree.state(), &missing);
    assert!(!p.landlock.applied);
    assert!(
        p.landlock
            .detail
            .starts_with("not applied: the helper talon-sandbox-exec was not found"),
        "{}",
        p.landlock.detail
    );
    // And a backend told to use a helper that is not there refuses.
    let err = tree
        .backend_without_landlock()
        .with_sandbox_exec(tree.dir.path().join("no-such-helper"))
        .unwrap_err();
    assert!(err.to_string().contains("not there"), "{err}");
}

#[test]
fn the_helper_refuses_a_bad_command_line_and_runs_nothing() {
    let out = std::process::Command::new(SANDBOX_EXEC)
        .args(["--rw", "relative", "--", "/bin/sh", "-c", "echo ran"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not absolute"));
    let out = std::process::Command::new(SANDBOX_EXEC)
        .args(["--", "/nonexistent/cmd"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(127));
}
