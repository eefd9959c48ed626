//! Exec over a real sshd: exit codes, streams, hostile arguments and
//! environment, timeouts and kills that reach the remote process group,
//! dropped connections, host-key checking.

use super::common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::{Sshd, remote_processes, unique};
use talon_sandbox_core::{
    ExitStatus, HostKeyPolicy, LaunchRequest, ProcessLauncher, SandboxErrorKind,
};
use talon_sandbox_ssh::{SshConnection, SshLauncher};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn launcher(sshd: &Sshd) -> SshLauncher {
    SshLauncher::new(sshd.connection(), "/tmp")
}

#[tokio::test]
async fn exit_codes_and_streams() {
    let sshd = Sshd::start();
    let l = launcher(&sshd);
    let out = l
        .run_script(
            "echo out; echo err >&2; exit 7",
            &[],
            None,
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    assert_eq!(out.stdout, b"out\n");
    assert_eq!(out.stderr, b"err\n");
    assert_eq!(out.status, ExitStatus::Code(7));

    let out = l
        .run_script(
            "tr a-z A-Z",
            &[],
            Some(b"hello stdin".to_vec()),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    assert_eq!(out.stdout, b"HELLO STDIN");
    assert!(out.status.success());

    // The launcher (exec tool path): workdir, stdin, stdout, wait.
    let mut p = l
        .launch(LaunchRequest {
            command: "pwd; cat; exit 3".into(),
            workdir: Some("/".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut stdin = p.stdin.take().unwrap();
    stdin.write_all(b"piped\n").await.unwrap();
    stdin.shutdown().await.unwrap();
    drop(stdin);
    let mut text = String::new();
    p.stdout.read_to_string(&mut text).await.unwrap();
    assert_eq!(text, "/\npiped\n");
    assert_eq!(p.control.wait().await.unwrap(), ExitStatus::Code(3));
    assert!(p.control.pid().is_some_and(|pid| pid > 1));

    // PTY requests merge stderr into stdout.
    let mut p = l
        .launch(LaunchRequest {
            command: "echo a; echo b >&2".into(),
            pty: true,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(p.stderr.is_none());
    let mut text = String::new();
    p.stdout.read_to_string(&mut text).await.unwrap();
    assert_eq!(text, "a\nb\n");
}

#[tokio::test]
async fn hostile_arguments_and_environment_arrive_verbatim() {
    let sshd = Sshd::start();
    let l = launcher(&sshd);
    let canary = format!("/tmp/{}", unique("talon-pwned-"));
    let hostile = vec![
        "it's".to_owned(),
        format!("$(touch {canary})"),
        format!("`touch {canary}`"),
        "line1\nline2".to_owned(),
        "\"dq\" \\ ; | & > <".to_owned(),
        String::new(),
        "*".to_owned(),
    ];
    let out = l
        .run_script(
            "printf '%s\\0' \"$@\"",
            &hostile,
            None,
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    let got: Vec<String> = out
        .stdout
        .split(|b| *b == 0)
        .map(|s| String::from_utf8(s.to_vec()).unwrap())
        .collect();
    assert_eq!(&got[..hostile.len()], &hostile[..]);

    let mut env = BTreeMap::new();
    env.insert("TALON_A".to_owned(), hostile[1].clone());
    env.insert("TALON_B".to_owned(), "x'y\nz`id`$HOME".to_owned());
    env.insert("PATH".to_owned(), "/opt/talon-test-bin".to_owned());
    let mut p = l
        .launch(LaunchRequest {
            command: "printf '%s|%s|%s' \"$TALON_A\" \"$TALON_B\" \"${PATH%%:*}\"".into(),
            env: env.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut text = String::new();
    p.stdout.read_to_string(&mut text).await.unwrap();
    assert!(p.control.wait().await.unwrap().success());
    assert_eq!(
        text,
        format!("{}|x'y\nz`id`$HOME|/opt/talon-test-bin", hostile[1])
    );
    assert!(
        !std::path::Path::new(&canary).exists(),
        "a quoted value was executed"
    );

    // NUL bytes and non-portable names are refused before anything runs.
    let err = l
        .run_script("true", &["a\0b".to_owned()], None, Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("NUL"), "{err}");
    for (name, value) in [("BAD NAME", "v"), ("X", "a\0b"), ("A=B", "v")] {
        let err = l
            .launch(LaunchRequest {
                command: "true".into(),
                env: BTreeMap::from([(name.to_owned(), value.to_owned())]),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert!(err.kind() == SandboxErrorKind::Exec, "{err}");
    }
}

#[tokio::test]
async fn timeout_kills_the_remote_process_group() {
    let sshd = Sshd::start();
    let l = launcher(&sshd);
    let tag = unique("317.");
    let late = format!("/tmp/{}", unique("talon-late-"));
    let started = Instant::now();
    let err = l
        .run_script(
            &format!("sleep {tag} & (sleep {tag}; touch {late}) & sleep {tag}"),
            &[],
            None,
            Duration::from_millis(800),
        )
        .await
        .unwrap_err();
    assert!(err.kind() == SandboxErrorKind::Timeout, "{err}");
    assert!(started.elapsed() < Duration::from_secs(10));
    // Give the kernel a moment to reap, then look over a fresh connection.
    let mut survivors = remote_processes(&sshd, &tag).await;
    for _ in 0..20 {
        if survivors.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        survivors = remote_processes(&sshd, &tag).await;
    }
    assert!(survivors.is_empty(), "remote survivors: {survivors:?}");
    assert!(!std::path::Path::new(&late).exists());

    // An explicit kill (the exec tool's abort) does the same.
    let tag = unique("318.");
    let p = l
        .launch(LaunchRequest {
            command: format!("sleep {tag} & sleep {tag}"),
            ..Default::default()
        })
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    p.control.kill().await.unwrap();
    let status = tokio::time::timeout(Duration::from_secs(10), p.control.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status, ExitStatus::Signal(9));
    p.control.kill().await.unwrap(); // idempotent
    let mut survivors = remote_processes(&sshd, &tag).await;
    for _ in 0..20 {
        if survivors.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        survivors = remote_processes(&sshd, &tag).await;
    }
    assert!(survivors.is_empty(), "remote survivors: {survivors:?}");
}

#[tokio::test]
async fn a_killed_master_is_replaced_and_its_commands_reaped() {
    let sshd = Sshd::start();
    let conn = sshd.connection();
    let l = SshLauncher::new(std::sync::Arc::clone(&conn), "/tmp");
    let tag = unique("319.");
    let p = l
        .launch(LaunchRequest {
            command: format!("sleep {tag}"),
            ..Default::default()
        })
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while p.control.pid().is_none() {
        assert!(
            Instant::now() < deadline,
            "no pid line from the remote wrapper"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let socket = conn.session().await.unwrap().control_socket().to_path_buf();
    let pid = common::master_pid(&socket);
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    // The running command's channel dies with the master.
    let waited = tokio::time::timeout(Duration::from_secs(10), p.control.wait())
        .await
        .unwrap();
    assert!(waited.is_err() || waited.unwrap() != ExitStatus::Code(0));
    // The next call works (a new master), and the orphan is reaped.
    let out = l
        .run_script("echo back", &[], None, Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(out.stdout, b"back\n");
    let mut survivors = remote_processes(&sshd, &tag).await;
    for _ in 0..20 {
        if survivors.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        survivors = remote_processes(&sshd, &tag).await;
    }
    assert!(
        survivors.is_empty(),
        "orphans after reconnect: {survivors:?}"
    );
}

#[tokio::test]
async fn sshd_restart_then_the_next_call_works() {
    let mut sshd = Sshd::start();
    let conn = sshd.connection();
    let out = conn
        .run("echo one", &[], None, Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(out.stdout, b"one\n");
    sshd.restart().unwrap();
    // The old master notices the dead TCP connection; the call after it
    // reconnects. At most one call may fail while it does.
    let mut last = None;
    for _ in 0..2 {
        match conn
            .run("echo two", &[], None, Duration::from_secs(10))
            .await
        {
            Ok(out) => {
                last = Some(out);
                break;
            }
            Err(e) => {
                assert!(e.kind() == SandboxErrorKind::EngineUnavailable, "{e}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
    assert_eq!(last.expect("no call worked after restart").stdout, b"two\n");
}

#[tokio::test]
async fn host_key_mismatch_is_refused_and_accept_new_only_when_configured() {
    let sshd = Sshd::start();
    let d = sshd.dir();
    // A known_hosts entry with another key for this host:port.
    let wrong = d.join("wrong_known_hosts");
    std::fs::write(
        &wrong,
        sshd.known_hosts_line("other_host_ed25519.pub").unwrap(),
    )
    .unwrap();
    let mut target = sshd.target();
    target.known_hosts_file = Some(wrong.clone());
    let err = SshConnection::new(target.clone())
        .run("true", &[], None, Duration::from_secs(10))
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(err.kind() == SandboxErrorKind::EngineUnavailable, "{text}");
    assert!(text.to_lowercase().contains("host key"), "{text}");

    // accept-new does not accept a *changed* key either.
    target.host_key_policy = HostKeyPolicy::AcceptNew;
    let err = SshConnection::new(target.clone())
        .run("true", &[], None, Duration::from_secs(10))
        .await
        .unwrap_err();
    assert!(err.to_string().to_lowercase().contains("host key"), "{err}");

    // Unknown host: strict refuses, accept-new connects and records it.
    let empty = d.join("empty_known_hosts");
    std::fs::write(&empty, "").unwrap();
    let mut target = sshd.target();
    target.known_hosts_file = Some(empty.clone());
    assert!(
        SshConnection::new(target.clone())
            .run("true", &[], None, Duration::from_secs(10))
            .await
            .is_err()
    );
    target.host_key_policy = HostKeyPolicy::AcceptNew;
    let out = SshConnection::new(target)
        .run("echo ok", &[], None, Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(out.stdout, b"ok\n");
    assert!(
        !std::fs::read_to_string(&empty).unwrap().trim().is_empty(),
        "accept-new did not record the key"
    );
}
