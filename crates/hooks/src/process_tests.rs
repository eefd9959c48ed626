use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;

use super::*;

fn sh(body: &str, timeout: Duration) -> BoundedCommand {
    BoundedCommand {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), body.into()],
        cwd: None,
        env: BTreeMap::from([("PATH".to_owned(), "/usr/bin:/bin".to_owned())]),
        stdin: Vec::new(),
        timeout,
        max_output: 1024,
    }
}

/// Whether `pid` is still running (a zombie counts as dead).
fn running(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The state follows the parenthesised command name.
    let state = stat
        .rsplit(')')
        .next()
        .and_then(|s| s.split_whitespace().next());
    !stat.is_empty() && state != Some("Z")
}

/// Waits up to 2 s for `pid` to die.
fn dies(pid: i32) -> bool {
    for _ in 0..100 {
        if !running(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn read_pid(path: &Path) -> i32 {
    for _ in 0..100 {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("no pid in {}", path.display());
}

#[tokio::test]
async fn a_normal_run_captures_output_and_status() {
    let mut cmd = sh("cat; echo err >&2; exit 7", Duration::from_secs(10));
    cmd.stdin = b"hello".to_vec();
    let out = run_bounded(&cmd, &CancellationToken::new()).await.unwrap();
    assert_eq!(
        out,
        BoundedOutput {
            code: Some(7),
            stdout: b"hello".to_vec(),
            stderr: b"err\n".to_vec(),
            stdout_truncated: false,
            output_cut_short: false,
        }
    );
}

#[tokio::test]
async fn output_is_capped() {
    let out = run_bounded(
        &sh("head -c 5000 /dev/zero", Duration::from_secs(10)),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(out.stdout.len(), 1024);
    assert!(out.stdout_truncated);
    assert_eq!(out.code, Some(0));
}

#[tokio::test]
async fn a_background_child_holding_stdout_costs_only_the_grace_period() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("bg.pid");
    let body = format!(
        "echo '{{\"ok\":true}}'\nsleep 20 &\necho $! > '{}'\nexit 0",
        pid_file.display()
    );
    let started = Instant::now();
    let out = run_bounded(
        &sh(&body, Duration::from_secs(10)),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "took {took:?}");
    assert!(took >= OUTPUT_GRACE, "took {took:?}");
    assert_eq!(out.code, Some(0));
    assert_eq!(out.stdout, b"{\"ok\":true}\n".to_vec());
    assert!(out.output_cut_short);
    let pid = read_pid(&pid_file);
    assert!(dies(pid), "the background child {pid} survived");
}

#[tokio::test]
async fn the_grace_period_never_runs_past_the_deadline() {
    // The leader exits at once but the timeout is shorter than the grace.
    // Uncapped it would take at least the full grace (200 ms) after the
    // leader's exit; capped it ends at the 100 ms deadline.
    let started = Instant::now();
    let out = run_bounded(
        &sh("echo hi; sleep 20 & exit 0", Duration::from_millis(100)),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    let took = started.elapsed();
    assert!(took < Duration::from_millis(190), "took {took:?}");
    assert_eq!(out.stdout, b"hi\n".to_vec());
    assert!(out.output_cut_short);
}

#[tokio::test]
async fn a_timeout_kills_the_group() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("bg.pid");
    let body = format!("sleep 300 &\necho $! > '{}'\nwait", pid_file.display());
    let err = run_bounded(
        &sh(&body, Duration::from_millis(300)),
        &CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert_eq!(err, RunError::TimedOut(300));
    let pid = read_pid(&pid_file);
    assert!(dies(pid), "{pid} survived the timeout");
}

#[tokio::test]
async fn abort_kills_the_group() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("bg.pid");
    let body = format!("sleep 300 &\necho $! > '{}'\nwait", pid_file.display());
    let abort = CancellationToken::new();
    let trigger = abort.clone();
    let pid_path = pid_file.clone();
    tokio::spawn(async move {
        // Wait for the pid itself, not the file: `echo $! > file` creates
        // the file before it writes, and an abort in between leaves it
        // empty.
        while std::fs::read_to_string(&pid_path)
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok())
            .is_none()
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        trigger.cancel();
    });
    let err = run_bounded(&sh(&body, Duration::from_secs(30)), &abort)
        .await
        .unwrap_err();
    assert_eq!(err, RunError::Aborted);
    let pid = read_pid(&pid_file);
    assert!(dies(pid), "{pid} survived the abort");
}

#[tokio::test]
async fn dropping_the_run_kills_the_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("bg.pid");
    let body = format!("sleep 300 &\necho $! > '{}'\nwait", pid_file.display());
    let cmd = sh(&body, Duration::from_secs(60));
    let abort = CancellationToken::new();
    // A caller's own (shorter) timeout drops the future half-way.
    let dropped = tokio::time::timeout(Duration::from_millis(500), run_bounded(&cmd, &abort)).await;
    assert!(dropped.is_err(), "{dropped:?}");
    let pid = read_pid(&pid_file);
    assert!(dies(pid), "the grandchild {pid} survived the drop");
}

#[tokio::test]
async fn a_missing_program_is_a_spawn_error() {
    let mut cmd = sh("", Duration::from_secs(1));
    cmd.program = "/nonexistent/program".into();
    assert!(matches!(
        run_bounded(&cmd, &CancellationToken::new()).await,
        Err(RunError::Spawn { .. })
    ));
}
