//! Timeouts, aborts, floods, cancellation, registry shutdown and drop.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use talon_tool_catalog::CancellationToken;
use talon_tools::{ExecConfig, RegistryOptions};

use super::common::{
    Harness, KEY, bounded, number_after, pid_alive, small_options, wait_gone, wait_reaped,
};

#[tokio::test]
async fn timeout_kills_the_whole_process_group() {
    bounded(async {
        let h = Harness::new();
        let started = Instant::now();
        let r = h
            .exec(json!({"command": "sleep 30 & echo child=$!; wait", "timeout": 0.5}))
            .await
            .unwrap();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(r.details["status"], "failed");
        assert_eq!(r.details["timedOut"], true);
        assert_eq!(r.details["signal"], 9);
        assert!(r.text().contains("(Command timed out;"), "{}", r.text());
        let grandchild = number_after(&r.text(), "child=");
        assert!(
            wait_gone(grandchild, Duration::from_secs(3)).await,
            "grandchild {grandchild} survived"
        );
        let leader = r.details["pid"].as_u64().unwrap() as u32;
        assert!(!pid_alive(leader));
        assert!(
            wait_reaped(leader, Duration::from_secs(3)).await,
            "the shell {leader} was not reaped"
        );
    })
    .await;
}

#[tokio::test]
async fn leftovers_of_a_finished_command_are_killed() {
    bounded(async {
        let h = Harness::new();
        let r = h
            .exec(json!({"command": "sleep 30 >/dev/null 2>&1 & echo child=$!"}))
            .await
            .unwrap();
        assert_eq!(r.details["exitCode"], 0);
        let grandchild = number_after(&r.text(), "child=");
        assert!(wait_gone(grandchild, Duration::from_secs(3)).await);
    })
    .await;
}

#[tokio::test]
async fn output_flood_is_capped_head_and_tail_in_bounded_time() {
    bounded(async {
        let options = RegistryOptions {
            max_output_bytes: 4096,
            ..small_options()
        };
        let h = Harness::with(options, ExecConfig::default(), |l| l);
        let started = Instant::now();
        let r = h
            .exec(json!({"command": "echo BEGIN; head -c 20000000 /dev/zero | tr '\\0' a; echo; echo END"}))
            .await
            .unwrap();
        assert!(started.elapsed() < Duration::from_secs(20));
        let total = r.details["totalBytes"].as_u64().unwrap();
        assert_eq!(total, 20_000_000 + "BEGIN\n".len() as u64 + "\nEND\n".len() as u64);
        assert_eq!(r.details["omittedBytes"].as_u64().unwrap(), total - 4096);
        let text = r.text();
        assert!(text.starts_with("BEGIN\naaaa"), "{}", &text[..40]);
        assert!(text.contains(&format!("[... {} bytes omitted ...]", total - 4096)));
        assert!(text.trim_end().ends_with("END"));
        assert!(text.len() < 4096 + 200, "{}", text.len());
    })
    .await;
}

#[tokio::test]
async fn abort_kills_the_group_and_returns_aborted() {
    bounded(async {
        let h = Harness::new();
        let pidfile = h.dir.path().join("pids");
        let abort = CancellationToken::new();
        let trigger = abort.clone();
        let command = format!(
            "echo $$ > {f}; sleep 30 & echo $! >> {f}; wait",
            f = pidfile.display()
        );
        let aborter = async {
            while !pidfile.exists()
                || std::fs::read_to_string(&pidfile).unwrap().lines().count() < 2
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            trigger.cancel();
        };
        let (result, ()) =
            tokio::join!(h.exec_as(KEY, json!({"command": command}), &abort), aborter);
        match result {
            Err(e) if e.is_aborted() => {
                assert_eq!(e.message(), talon_tool_catalog::ABORTED_REASON)
            }
            other => panic!("expected an abort, got {other:?}"),
        }
        for pid in std::fs::read_to_string(&pidfile).unwrap().lines() {
            let pid: u32 = pid.trim().parse().unwrap();
            assert!(
                wait_gone(pid, Duration::from_secs(3)).await,
                "{pid} survived the abort"
            );
        }
        assert_eq!(h.registry.running_count(), 0);
    })
    .await;
}

#[tokio::test]
async fn a_dropped_call_kills_its_command() {
    bounded(async {
        let h = Harness::new();
        let pidfile = h.dir.path().join("pids");
        let command = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
        let r = tokio::time::timeout(
            Duration::from_millis(500),
            h.exec(json!({"command": command})),
        )
        .await;
        assert!(r.is_err(), "the call should still have been running");
        let pid: u32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(wait_gone(pid, Duration::from_secs(3)).await);
    })
    .await;
}

#[tokio::test]
async fn without_background_the_yield_window_is_ignored() {
    bounded(async {
        let dir = tempfile::tempdir().unwrap();
        let registry = Arc::new(talon_tools::ProcessRegistry::new(small_options()));
        let exec = talon_tools::ExecTool::new(
            Arc::new(talon_tools::HostLauncher::new(dir.path()).unwrap()),
            registry,
            ExecConfig::default(),
        )
        .unwrap()
        .with_background(false);
        use talon_tool_catalog::Tool;
        let r = exec
            .execute(
                &super::common::call(
                    "exec",
                    json!({"command": "sleep 0.3; echo done", "yieldMs": 10, "background": true}),
                ),
                &talon_tool_catalog::ToolContext::new("main", KEY),
                &CancellationToken::new(),
            )
            .await
            .unwrap();
        assert_eq!(r.details["status"], "completed");
        assert_eq!(r.text().trim(), "done");
    })
    .await;
}

#[tokio::test]
async fn dropping_the_registry_kills_every_live_group() {
    bounded(async {
        let h = Harness::new();
        let r = h
            .exec(json!({"command": "sleep 30 & echo child=$!; wait", "background": true}))
            .await
            .unwrap();
        let id = r.details["sessionId"].as_str().unwrap().to_owned();
        let leader = r.details["pid"].as_u64().unwrap() as u32;
        let seen = h.poll_until_contains(&id, "child=").await;
        let grandchild = number_after(&seen, "child=");
        // A second background session started by the yield window.
        let pidfile = h.dir.path().join("fg");
        let fg = format!("echo $$ > {}; sleep 30", pidfile.display());
        let r = h
            .exec(json!({"command": fg, "yieldMs": 100}))
            .await
            .unwrap();
        assert_eq!(r.details["status"], "running");
        let fg_pid: u32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(pid_alive(grandchild) && pid_alive(leader) && pid_alive(fg_pid));
        let Harness {
            dir,
            registry,
            exec,
            process,
        } = h;
        drop(exec);
        drop(process);
        assert_eq!(Arc::strong_count(&registry), 1);
        drop(registry);
        for pid in [grandchild, leader, fg_pid] {
            assert!(
                wait_gone(pid, Duration::from_secs(3)).await,
                "{pid} survived the registry"
            );
        }
        drop(dir);
    })
    .await;
}

#[tokio::test]
async fn shutdown_kills_and_refuses_new_commands() {
    bounded(async {
        let h = Harness::new();
        let r = h
            .exec(json!({"command": "sleep 30 & echo child=$!; wait", "background": true}))
            .await
            .unwrap();
        let id = r.details["sessionId"].as_str().unwrap().to_owned();
        let seen = h.poll_until_contains(&id, "child=").await;
        let grandchild = number_after(&seen, "child=");
        h.registry.shutdown().await;
        assert_eq!(h.registry.running_count(), 0);
        assert!(wait_gone(grandchild, Duration::from_secs(3)).await);
        let err = h.exec(json!({"command": "echo late"})).await.unwrap_err();
        assert!(err.to_string().contains("shut down"), "{err}");
    })
    .await;
}
