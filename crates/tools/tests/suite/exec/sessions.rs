//! Background sessions through the `process` tool.

use std::time::Duration;

use serde_json::json;
use talon_tools::{ExecConfig, RegistryOptions};

use super::common::{Harness, bounded, small_options, wait_gone};

#[tokio::test]
async fn yield_background_poll_log_write_kill() {
    bounded(async {
        let h = Harness::new();
        let r = h
            .exec(json!({
                "command": "echo start; while read line; do echo \"got:$line\"; done",
                "yieldMs": 200
            }))
            .await
            .unwrap();
        assert_eq!(r.details["status"], "running");
        let id = r.details["sessionId"].as_str().unwrap().to_owned();
        assert!(id.starts_with("exec-"), "{id}");
        let text = r.text();
        assert!(
            text.contains("still running after 200ms") && text.contains(&id),
            "{text}"
        );
        assert!(text.contains("start"), "{text}");
        let pid = r.details["pid"].as_u64().unwrap() as u32;

        let list = h.process(json!({"action": "list"})).await.unwrap();
        assert_eq!(list.details["sessions"][0]["sessionId"], id.as_str());
        assert_eq!(list.details["sessions"][0]["status"], "running");
        assert!(list.text().contains(&id));

        let first = h.poll_until_contains(&id, "start").await;
        assert!(first.contains("start"));
        let quiet = h
            .process(json!({"action": "poll", "sessionId": id}))
            .await
            .unwrap();
        assert_eq!(quiet.details["output"], "");
        assert!(
            quiet.text().contains("Process still running."),
            "{}",
            quiet.text()
        );

        let w = h
            .process(json!({"action": "write", "sessionId": id, "data": "hello\n"}))
            .await
            .unwrap();
        assert_eq!(w.details["bytes"], 6);
        let got = h.poll_until_contains(&id, "got:hello").await;
        assert!(!got.contains("start"), "poll repeated old output: {got}");

        let log = h
            .process(json!({"action": "log", "sessionId": id}))
            .await
            .unwrap();
        assert_eq!(log.text(), "start\ngot:hello");
        let log = h
            .process(json!({"action": "log", "sessionId": id, "offset": 1, "limit": 1}))
            .await
            .unwrap();
        assert_eq!(log.text(), "got:hello");

        let k = h
            .process(json!({"action": "kill", "sessionId": id}))
            .await
            .unwrap();
        assert!(k.text().contains("Killed session"), "{}", k.text());
        assert_eq!(k.details["status"], "failed");
        assert_eq!(k.details["killedBy"], "user");
        assert_eq!(k.details["signal"], 9);
        assert!(wait_gone(pid, Duration::from_secs(3)).await);

        let p = h
            .process(json!({"action": "poll", "sessionId": id}))
            .await
            .unwrap();
        assert!(
            p.text().contains("(Command was killed on request)"),
            "{}",
            p.text()
        );
        let err = h
            .process(json!({"action": "write", "sessionId": id, "data": "late\n"}))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("already exited"), "{err}");

        let c = h.process(json!({"action": "clear"})).await.unwrap();
        assert_eq!(c.details["cleared"], json!([id]));
        let err = h
            .process(json!({"action": "poll", "sessionId": id}))
            .await
            .unwrap_err();
        assert_eq!(err.param(), Some("sessionId"));
    })
    .await;
}

#[tokio::test]
async fn write_with_eof_closes_stdin() {
    bounded(async {
        let h = Harness::new();
        let r = h
            .exec(json!({"command": "tr a-z A-Z", "background": true}))
            .await
            .unwrap();
        assert!(
            r.text().contains("started in the background"),
            "{}",
            r.text()
        );
        let id = r.details["sessionId"].as_str().unwrap().to_owned();
        h.process(json!({"action": "write", "sessionId": id, "data": "abc", "eof": true}))
            .await
            .unwrap();
        let (seen, last) = h.poll_until_done(&id).await;
        assert_eq!(seen, "ABC");
        assert_eq!(last.details["status"], "completed");
        assert!(
            last.text().contains("Process exited with code 0."),
            "{}",
            last.text()
        );
    })
    .await;
}

#[tokio::test]
async fn pty_sessions_take_input() {
    bounded(async {
        let h = Harness::new();
        let r = h
            .exec(
                json!({"command": "read x; echo \"tty-got:$x\"", "pty": true, "background": true}),
            )
            .await
            .unwrap();
        let id = r.details["sessionId"].as_str().unwrap().to_owned();
        h.process(json!({"action": "write", "sessionId": id, "data": "hi\n"}))
            .await
            .unwrap();
        let (seen, last) = h.poll_until_done(&id).await;
        assert!(seen.contains("tty-got:hi"), "{seen}");
        assert_eq!(last.details["exitCode"], 0);
    })
    .await;
}

#[tokio::test]
async fn sessions_are_scoped_to_their_session_key() {
    bounded(async {
        let h = Harness::new();
        let abort = talon_tool_catalog::CancellationToken::new();
        let r = h
            .exec_as(
                "agent:main:alice",
                json!({"command": "sleep 30", "background": true}),
                &abort,
            )
            .await
            .unwrap();
        let id = r.details["sessionId"].as_str().unwrap().to_owned();
        let other = "agent:main:bob";
        let list = h
            .process_as(other, json!({"action": "list"}))
            .await
            .unwrap();
        assert_eq!(list.details["sessions"], json!([]));
        for action in ["poll", "log", "kill", "remove"] {
            let err = h
                .process_as(other, json!({"action": action, "sessionId": id}))
                .await
                .unwrap_err();
            assert_eq!(err.param(), Some("sessionId"), "{action}: {err}");
            assert!(err.to_string().contains("no background session"), "{err}");
        }
        let err = h
            .process_as(
                other,
                json!({"action": "write", "sessionId": id, "data": "x"}),
            )
            .await
            .unwrap_err();
        assert_eq!(err.param(), Some("sessionId"));
        // The owner still has it, running.
        let list = h
            .process_as("agent:main:alice", json!({"action": "list"}))
            .await
            .unwrap();
        assert_eq!(list.details["sessions"][0]["status"], "running");
        let removed = h
            .process_as(
                "agent:main:alice",
                json!({"action": "remove", "sessionId": id}),
            )
            .await
            .unwrap();
        assert_eq!(removed.details["removed"], true);
        let list = h
            .process_as("agent:main:alice", json!({"action": "list"}))
            .await
            .unwrap();
        assert_eq!(list.details["sessions"], json!([]));
    })
    .await;
}

#[tokio::test]
async fn finished_sessions_are_cleaned_up_after_the_retention() {
    bounded(async {
        let options = RegistryOptions {
            retention: Duration::from_millis(300),
            ..small_options()
        };
        let h = Harness::with(options, ExecConfig::default(), |l| l);
        let done = h
            .exec(json!({"command": "echo hi", "background": true}))
            .await
            .unwrap();
        let done_id = done.details["sessionId"].as_str().unwrap().to_owned();
        let running = h
            .exec(json!({"command": "sleep 30", "background": true}))
            .await
            .unwrap();
        let running_id = running.details["sessionId"].as_str().unwrap().to_owned();
        let (seen, _) = h.poll_until_done(&done_id).await;
        assert_eq!(seen, "hi\n");
        let list = h.process(json!({"action": "list"})).await.unwrap();
        assert_eq!(list.details["sessions"].as_array().unwrap().len(), 2);
        tokio::time::sleep(Duration::from_millis(700)).await;
        let list = h.process(json!({"action": "list"})).await.unwrap();
        let ids: Vec<&str> = list.details["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["sessionId"].as_str().unwrap())
            .collect();
        assert_eq!(
            ids,
            [running_id.as_str()],
            "a running session must never be swept"
        );
        let err = h
            .process(json!({"action": "log", "sessionId": done_id}))
            .await
            .unwrap_err();
        assert_eq!(err.param(), Some("sessionId"));
        h.process(json!({"action": "remove", "sessionId": running_id}))
            .await
            .unwrap();
    })
    .await;
}

#[tokio::test]
async fn clear_refuses_a_running_session_and_bad_actions_are_named() {
    bounded(async {
        let h = Harness::new();
        let r = h
            .exec(json!({"command": "sleep 30", "background": true}))
            .await
            .unwrap();
        let id = r.details["sessionId"].as_str().unwrap().to_owned();
        let err = h
            .process(json!({"action": "clear", "sessionId": id}))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("still running"), "{err}");
        let err = h
            .process(json!({"action": "send-keys", "sessionId": id}))
            .await
            .unwrap_err();
        assert_eq!(err.param(), Some("action"));
        let err = h.process(json!({"action": "poll"})).await.unwrap_err();
        assert_eq!(err.param(), Some("sessionId"));
        let err = h
            .process(json!({"action": "poll", "sessionId": id, "timeout": 999_999}))
            .await
            .unwrap_err();
        assert_eq!(err.param(), Some("timeout"));
        h.process(json!({"action": "remove", "sessionId": id}))
            .await
            .unwrap();
    })
    .await;
}

#[tokio::test]
async fn running_commands_per_session_key_are_capped() {
    bounded(async {
        let options = RegistryOptions {
            max_running_per_key: 2,
            ..small_options()
        };
        let h = Harness::with(options, ExecConfig::default(), |l| l);
        let mut ids = Vec::new();
        for _ in 0..2 {
            let r = h
                .exec(json!({"command": "sleep 30", "background": true}))
                .await
                .unwrap();
            ids.push(r.details["sessionId"].as_str().unwrap().to_owned());
        }
        let marker = h.dir.path().join("third");
        let err = h
            .exec(json!({"command": format!("touch {}", marker.display()), "background": true}))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("the limit is 2"), "{err}");
        assert!(!marker.exists());
        // Another session key has its own budget.
        let other = h
            .exec_as(
                "agent:main:other",
                json!({"command": "echo ok"}),
                &talon_tool_catalog::CancellationToken::new(),
            )
            .await
            .unwrap();
        assert_eq!(other.text(), "ok\n");
        // Stopping one frees a slot.
        h.process(json!({"action": "kill", "sessionId": ids[0]}))
            .await
            .unwrap();
        let r = h.exec(json!({"command": "echo again"})).await.unwrap();
        assert_eq!(r.text(), "again\n");
        h.process(json!({"action": "remove", "sessionId": ids[1]}))
            .await
            .unwrap();
    })
    .await;
}

#[tokio::test]
async fn log_defaults_to_the_last_200_lines_with_a_paging_hint() {
    bounded(async {
        let h = Harness::new();
        let r = h
            .exec(json!({"command": "seq 1 250", "background": true}))
            .await
            .unwrap();
        let id = r.details["sessionId"].as_str().unwrap().to_owned();
        h.poll_until_done(&id).await;
        let log = h
            .process(json!({"action": "log", "sessionId": id}))
            .await
            .unwrap();
        let text = log.text();
        assert!(text.starts_with("51\n52\n"), "{}", &text[..20]);
        assert!(
            text.contains("250\n\n[showing lines 50..250 of 250;"),
            "{text}"
        );
        assert_eq!(log.details["totalLines"], 250);
        let log = h
            .process(json!({"action": "log", "sessionId": id, "limit": 3}))
            .await
            .unwrap();
        assert_eq!(log.text(), "248\n249\n250");
    })
    .await;
}
