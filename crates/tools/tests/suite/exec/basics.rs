//! Foreground runs: output, exit codes, signals, workdir, PTY.

use serde_json::json;

use super::common::{Harness, bounded};

#[tokio::test]
async fn happy_path_returns_stdout_and_stderr() {
    bounded(async {
        let h = Harness::new();
        let r = h
            .exec(json!({"command": "echo hello; echo oops >&2"}))
            .await
            .unwrap();
        let text = r.text();
        assert!(text.contains("hello") && text.contains("oops"), "{text}");
        assert!(!text.contains("(Command"), "{text}");
        assert_eq!(r.details["status"], "completed");
        assert_eq!(r.details["exitCode"], 0);
        assert_eq!(r.details["timedOut"], false);
        assert_eq!(r.details["host"], "gateway");
        assert!(r.details.get("sessionId").is_none());
        // A foreground run is not kept.
        assert_eq!(h.registry.running_count(), 0);
        let list = h.process(json!({"action": "list"})).await.unwrap();
        assert_eq!(list.details["sessions"], json!([]));
    })
    .await;
}

#[tokio::test]
async fn silent_success_says_no_output() {
    bounded(async {
        let h = Harness::new();
        let r = h.exec(json!({"command": "true"})).await.unwrap();
        assert_eq!(r.text(), "(no output)");
    })
    .await;
}

#[tokio::test]
async fn exit_codes_are_reported() {
    bounded(async {
        let h = Harness::new();
        for code in [1, 3, 42] {
            let r = h
                .exec(json!({"command": format!("echo before; exit {code}")}))
                .await
                .unwrap();
            assert_eq!(r.details["status"], "failed");
            assert_eq!(r.details["exitCode"], code);
            assert!(r.details["signal"].is_null());
            let text = r.text();
            assert!(text.starts_with("before"), "{text}");
            assert!(
                text.ends_with(&format!("(Command exited with code {code})")),
                "{text}"
            );
        }
    })
    .await;
}

#[tokio::test]
async fn signals_are_reported() {
    bounded(async {
        let h = Harness::new();
        let r = h.exec(json!({"command": "kill -TERM $$"})).await.unwrap();
        assert_eq!(r.details["status"], "failed");
        assert_eq!(r.details["signal"], 15);
        assert!(r.details["exitCode"].is_null());
        assert!(
            r.text().contains("killed by signal 15 (SIGTERM)"),
            "{}",
            r.text()
        );
    })
    .await;
}

#[tokio::test]
async fn markers_are_set() {
    bounded(async {
        let h = Harness::new();
        let r = h
            .exec(
                json!({"command": "echo cli=$OPENCLAW_CLI talon=$TALON_CLI shell=$OPENCLAW_SHELL"}),
            )
            .await
            .unwrap();
        assert!(
            r.text().contains("cli=1 talon=1 shell=exec"),
            "{}",
            r.text()
        );
    })
    .await;
}

#[tokio::test]
async fn workdir_inside_the_workspace_is_used() {
    bounded(async {
        let h = Harness::new();
        std::fs::create_dir_all(h.dir.path().join("a/b")).unwrap();
        let root = std::fs::canonicalize(h.dir.path()).unwrap();
        let r = h.exec(json!({"command": "pwd"})).await.unwrap();
        assert_eq!(r.text().trim(), root.to_str().unwrap());
        let r = h
            .exec(json!({"command": "pwd", "workdir": "a/b"}))
            .await
            .unwrap();
        assert_eq!(r.text().trim(), root.join("a/b").to_str().unwrap());
        let abs = root.join("a");
        let r = h
            .exec(json!({"command": "pwd", "workdir": abs.to_str().unwrap()}))
            .await
            .unwrap();
        assert_eq!(r.text().trim(), abs.to_str().unwrap());
    })
    .await;
}

#[tokio::test]
async fn workdir_outside_the_workspace_is_refused_and_nothing_runs() {
    bounded(async {
        let h = Harness::new();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), h.dir.path().join("escape")).unwrap();
        let marker = outside.path().join("ran");
        for workdir in [
            "/".to_owned(),
            "..".to_owned(),
            "escape".to_owned(),
            outside.path().to_str().unwrap().to_owned(),
            "missing-dir".to_owned(),
        ] {
            let err = h
                .exec(json!({"command": format!("touch {}", marker.display()), "workdir": workdir}))
                .await
                .unwrap_err();
            assert_eq!(err.param(), Some("workdir"), "{workdir}: {err}");
            assert!(err.to_string().contains(&format!("{workdir:?}")), "{err}");
        }
        assert!(!marker.exists(), "a refused call ran");
    })
    .await;
}

#[tokio::test]
async fn pty_gives_a_terminal_and_pipes_do_not() {
    bounded(async {
        let h = Harness::new();
        let r = h.exec(json!({"command": "tty", "pty": true})).await.unwrap();
        assert!(r.text().starts_with("/dev/pts/"), "{}", r.text());
        assert_eq!(r.details["pty"], true);
        assert_eq!(r.details["exitCode"], 0);
        let r = h.exec(json!({"command": "tty"})).await.unwrap();
        assert!(r.text().contains("not a tty"), "{}", r.text());
        // Under a PTY stderr is merged into the one stream.
        let r = h
            .exec(json!({"command": "echo out; echo err >&2; test -t 2 && echo err-is-tty", "pty": true}))
            .await
            .unwrap();
        let text = r.text();
        assert!(text.contains("out") && text.contains("err") && text.contains("err-is-tty"), "{text}");
    })
    .await;
}

#[tokio::test]
async fn escape_sequences_in_output_are_made_visible() {
    bounded(async {
        let h = Harness::new();
        let r = h
            .exec(json!({"command": "printf 'red:\\033[31mX\\n'"}))
            .await
            .unwrap();
        assert!(r.text().contains("red:\\u{1b}[31mX"), "{}", r.text());
    })
    .await;
}

#[tokio::test]
async fn a_sandboxed_session_is_refused_on_the_host() {
    bounded(async {
        let h = Harness::new();
        let marker = h.dir.path().join("ran");
        let ctx = talon_tool_catalog::ToolContext::new("main", super::common::KEY).sandboxed(true);
        let err = talon_tool_catalog::Tool::execute(
            &h.exec,
            &super::common::call(
                "exec",
                json!({"command": format!("touch {}", marker.display())}),
            ),
            &ctx,
            &talon_tool_catalog::CancellationToken::new(),
        )
        .await
        .unwrap_err();
        assert_eq!(err.status(), 403, "{err}");
        assert!(err.to_string().contains("sandboxed"), "{err}");
        assert!(!marker.exists(), "a refused call ran");
    })
    .await;
}
