//! The host launcher used directly through the launcher contract.

use std::time::Duration;

use talon_sandbox_core::{ExitStatus, LaunchRequest, ProcessLauncher};
use talon_tools::HostLauncher;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::common::{bounded, pid_alive, wait_gone, wait_reaped};

fn request(command: &str) -> LaunchRequest {
    LaunchRequest {
        command: command.to_owned(),
        ..LaunchRequest::default()
    }
}

#[tokio::test]
async fn wait_reports_the_same_status_every_time() {
    bounded(async {
        let dir = tempfile::tempdir().unwrap();
        let launcher = HostLauncher::new(dir.path()).unwrap();
        assert_eq!(launcher.id(), "host");
        let mut p = launcher.launch(request("cat; exit 7")).await.unwrap();
        let mut stdin = p.stdin.take().unwrap();
        stdin.write_all(b"ping").await.unwrap();
        drop(stdin);
        let mut out = String::new();
        p.stdout.read_to_string(&mut out).await.unwrap();
        assert_eq!(out, "ping");
        assert_eq!(p.control.wait().await.unwrap(), ExitStatus::Code(7));
        assert_eq!(p.control.wait().await.unwrap(), ExitStatus::Code(7));
        assert!(p.control.pid().is_some());
    })
    .await;
}

#[tokio::test]
async fn kill_takes_the_whole_group_and_is_idempotent() {
    bounded(async {
        let dir = tempfile::tempdir().unwrap();
        let launcher = HostLauncher::new(dir.path()).unwrap();
        let mut p = launcher
            .launch(request("sleep 30 & echo $!; wait"))
            .await
            .unwrap();
        let mut line = Vec::new();
        let mut byte = [0_u8; 1];
        while !line.ends_with(b"\n") {
            assert_eq!(p.stdout.read(&mut byte).await.unwrap(), 1);
            line.push(byte[0]);
        }
        let grandchild: u32 = String::from_utf8(line).unwrap().trim().parse().unwrap();
        let leader = p.control.pid().unwrap();
        assert!(pid_alive(grandchild) && pid_alive(leader));
        p.control.kill().await.unwrap();
        p.control.kill().await.unwrap();
        assert_eq!(p.control.wait().await.unwrap(), ExitStatus::Signal(9));
        assert!(wait_gone(grandchild, Duration::from_secs(3)).await);
        assert!(
            wait_reaped(leader, Duration::from_secs(3)).await,
            "no zombie of our own child"
        );
    })
    .await;
}

#[tokio::test]
async fn dropping_the_handle_kills_the_group() {
    bounded(async {
        let dir = tempfile::tempdir().unwrap();
        let launcher = HostLauncher::new(dir.path()).unwrap();
        let p = launcher.launch(request("sleep 30")).await.unwrap();
        let pid = p.control.pid().unwrap();
        assert!(pid_alive(pid));
        drop(p);
        assert!(wait_gone(pid, Duration::from_secs(3)).await);
    })
    .await;
}
