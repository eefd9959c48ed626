use std::time::{Duration, Instant};

use talon_proc_tree::{ChildCommand, ChildEnv, ProcessGroup};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;

const BOUND: Duration = Duration::from_secs(10);

fn sh(script: &str) -> tokio::process::Command {
    let mut cmd = ChildCommand::new("/bin/sh", ChildEnv::InheritParent, ProcessGroup::Own);
    cmd.args(["-c", script]);
    tokio::process::Command::from(cmd.into_std())
}

async fn read_all(mut out: ProcessOutput) -> Vec<u8> {
    let mut buf = Vec::new();
    tokio::time::timeout(BOUND, out.read_to_end(&mut buf))
        .await
        .expect("the stream ends")
        .expect("the stream reads");
    buf
}

#[tokio::test]
async fn pipes_carry_stdin_stdout_stderr_and_the_exit_code() {
    let process = spawn_local(
        sh("read line; echo \"out:$line\"; echo err >&2; exit 3"),
        false,
        LocalKill::ProcessGroup(None),
        "/bin/sh",
    )
    .expect("spawns");
    let mut stdin = process.stdin.expect("stdin is piped");
    stdin.write_all(b"hi\n").await.expect("writes");
    drop(stdin);
    let stderr = process.stderr.expect("stderr is piped");
    assert_eq!(read_all(process.stdout).await, b"out:hi\n");
    assert_eq!(read_all(stderr).await, b"err\n");
    let status = tokio::time::timeout(BOUND, process.control.wait())
        .await
        .expect("exits");
    assert_eq!(status.expect("a status"), ExitStatus::Code(3));
}

#[tokio::test]
async fn a_pty_is_the_commands_terminal_and_its_end_is_eof() {
    let process = spawn_local(
        sh("test -t 0 && test -t 1 && test -t 2 && echo tty"),
        true,
        LocalKill::ProcessGroup(None),
        "/bin/sh",
    )
    .expect("spawns");
    assert!(process.stderr.is_none(), "a PTY merges stderr");
    let out = read_all(process.stdout).await;
    assert_eq!(String::from_utf8_lossy(&out).trim(), "tty");
    let status = tokio::time::timeout(BOUND, process.control.wait()).await;
    assert_eq!(
        status.expect("exits").expect("a status"),
        ExitStatus::Code(0)
    );
}

#[tokio::test]
async fn kill_ends_the_whole_process_group_and_is_idempotent() {
    let process = spawn_local(
        sh("sleep 60 & echo $!; wait"),
        false,
        LocalKill::ProcessGroup(None),
        "/bin/sh",
    )
    .expect("spawns");
    let mut stdout = process.stdout;
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while !line.ends_with(b"\n") {
        let n = tokio::time::timeout(BOUND, stdout.read(&mut byte))
            .await
            .expect("prints the pid")
            .expect("reads");
        assert_eq!(n, 1, "the pid line is complete");
        line.push(byte[0]);
    }
    let child: u32 = String::from_utf8_lossy(&line)
        .trim()
        .parse()
        .expect("a pid");
    process.control.kill().await.expect("kills");
    process.control.kill().await.expect("a second kill is fine");
    let status = tokio::time::timeout(BOUND, process.control.wait()).await;
    assert_eq!(
        status.expect("exits").expect("a status"),
        ExitStatus::Signal(9)
    );
    let deadline = Instant::now() + BOUND;
    // The background `sleep` was in the group: it is gone (or a zombie
    // until init reaps it).
    loop {
        let state = std::fs::read_to_string(format!("/proc/{child}/stat")).ok();
        let alive = state.is_some_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
        });
        if !alive {
            break;
        }
        assert!(Instant::now() < deadline, "sleep {child} survived the kill");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Reaped: a later kill signals nobody.
    process
        .control
        .kill()
        .await
        .expect("a kill after reaping is fine");
}

#[tokio::test]
async fn a_program_that_cannot_start_is_named() {
    let cmd = tokio::process::Command::from(
        ChildCommand::new(
            "/nonexistent/talon-test-binary",
            ChildEnv::empty(),
            ProcessGroup::Own,
        )
        .into_std(),
    );
    let err = spawn_local(cmd, false, LocalKill::ProcessGroup(None), "the test binary")
        .expect_err("does not start");
    assert!(
        err.to_string().contains("cannot start the test binary"),
        "{err}"
    );
}

#[test]
fn a_std_status_converts() {
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        ExitStatus::from_std(std::process::ExitStatus::from_raw(2 << 8)),
        ExitStatus::Code(2)
    );
    assert_eq!(
        ExitStatus::from_std(std::process::ExitStatus::from_raw(9)),
        ExitStatus::Signal(9)
    );
}
