//! `docker.pidsLimit` / `memory` / `cpus` on the local backend: real cgroups
//! (through `talon-proc-tree`), a real fork bomb, real processes counted by
//! pid on the host.

use super::common;

use std::time::{Duration, Instant};

use common::{Tree, eventually, host_pids_with, sh};
use talon_sandbox_core::{
    DockerConfig, ExitStatus, LaunchRequest, SandboxBackend, SizeValue, WorkspaceAccess,
};
use tokio::io::AsyncBufReadExt;

const PIDS: i64 = 24;

#[tokio::test]
async fn pids_limit_contains_a_spawning_loop_and_a_kill_ends_all_of_it() {
    let tree = Tree::new();
    let sandbox = tree
        .backend()
        .ensure(&tree.request(
            WorkspaceAccess::Rw,
            DockerConfig {
                pids_limit: Some(PIDS),
                ..Default::default()
            },
        ))
        .await
        .unwrap();
    let marker = format!(
        "{}.{}",
        5000 + std::process::id() % 1000,
        std::process::id()
    );
    let proc = sandbox
        .launcher()
        .launch(LaunchRequest {
            command: format!(
                "i=0; while [ $i -lt 200 ]; do (setsid sleep {marker} &) 2>/dev/null; i=$((i+1)); done; \
                 echo spawned; sleep 1000"
            ),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut lines = tokio::io::BufReader::new(proc.stdout).lines();
    assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("spawned"));
    let daemons = host_pids_with(&format!("sleep {marker}"));
    assert!(
        daemons.len() > 5,
        "the loop should have started some: {daemons:?}"
    );
    assert!(
        daemons.len() < PIDS as usize,
        "{} daemons on the host with pidsLimit {PIDS}",
        daemons.len()
    );
    proc.control.kill().await.unwrap();
    assert!(
        eventually(Duration::from_secs(5), || host_pids_with(&format!(
            "sleep {marker}"
        ))
        .is_empty())
        .await,
        "daemons outlived the kill: {:?}",
        host_pids_with(&format!("sleep {marker}"))
    );
}

#[tokio::test]
async fn a_fork_bomb_hits_the_pids_limit_and_its_timeout_ends_it() {
    let tree = Tree::new();
    let sandbox = tree
        .backend()
        .ensure(&tree.request(
            WorkspaceAccess::Rw,
            DockerConfig {
                pids_limit: Some(PIDS),
                ..Default::default()
            },
        ))
        .await
        .unwrap();
    let started = Instant::now();
    let err = sandbox
        .run_script(
            // `sleep` is started first and the script then only `wait`s (a
            // builtin): a fork the bomb starves is fatal to `sh`, so the
            // script itself must not need one after the bomb; only the
            // timeout ends it.
            "sleep 1000 & (bomb() { bomb | bomb & }; bomb) 2>/dev/null; wait",
            &[],
            None,
            Duration::from_secs(2),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("killed"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(15));
    // The sandbox (and the host) still work.
    // (The cgroup leaf's host-side label is not in the sandbox's env.)
    let (out, _, status) = sh(&*sandbox, "echo alive; env | grep -c TALON_PROC_LEAF").await;
    assert_eq!((out.as_str(), status), ("alive\n0\n", ExitStatus::Code(1)));
}

#[tokio::test]
async fn memory_limit_kills_a_command_that_goes_over_it() {
    let tree = Tree::new();
    let backend = tree.backend();
    let grab = "python3 -c 'x = bytearray(200 * 1024 * 1024); print(len(x))'";
    // Without a limit the same command succeeds (the test can fail).
    let free = backend
        .ensure(&tree.request(WorkspaceAccess::Rw, DockerConfig::default()))
        .await
        .unwrap();
    let (_, _, status) = sh(&*free, grab).await;
    assert_eq!(status, ExitStatus::Code(0));
    let limited = backend
        .ensure(&tree.request(
            WorkspaceAccess::Rw,
            DockerConfig {
                memory: Some(SizeValue::Text("64m".to_owned())),
                ..Default::default()
            },
        ))
        .await
        .unwrap();
    let (out, _, status) = sh(&*limited, grab).await;
    assert!(!status.success(), "{out} {status:?}");
}

#[tokio::test]
async fn an_unreadable_memory_value_names_its_key() {
    let tree = Tree::new();
    let err = tree
        .backend()
        .ensure(&tree.request(
            WorkspaceAccess::Rw,
            DockerConfig {
                memory: Some(SizeValue::Text("lots".to_owned())),
                ..Default::default()
            },
        ))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("agents.defaults.sandbox.docker.memory"),
        "{err}"
    );
}
