//! `talon tools call`: one call through the full gate, end to end.

use std::path::Path;
use std::process::{Command, Stdio};

use pretty_assertions::assert_eq;

use super::util::{Cli, Run, cli};

/// A private config dir and state dir per test.
struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new(config: &str) -> Env {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("talon.json"), config).unwrap();
        Env { dir }
    }

    fn script(&self, name: &str, body: &str) {
        let path = self.dir.path().join(name);
        std::fs::write(&path, format!("#!/bin/sh\ncat >/dev/null\n{body}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn cli(&self, args: &[&str]) -> Cli {
        cli()
            .config(self.dir.path().join("talon.json"))
            .home(self.dir.path())
            .state_dir(self.dir.path().join("state"))
            .args(args)
    }

    fn command(&self, args: &[&str]) -> Command {
        self.cli(args).command()
    }

    fn talon(&self, args: &[&str]) -> Run {
        self.cli(args).run()
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

#[test]
fn an_allowed_call_prints_its_result_and_exits_0() {
    let env = Env::new("{}");
    let r = env.talon(&[
        "--session",
        "agent:main:cli",
        "tools",
        "call",
        "session_status",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["outcome"], "result");
    assert_eq!(v["result"]["details"]["sessionKey"], "agent:main:cli");
    let human = env.talon(&["tools", "call", "session_status"]);
    assert_eq!(human.code, 0);
    assert!(
        human.stdout.contains("\"agentId\": \"main\""),
        "{}",
        human.stdout
    );
}

#[test]
fn a_call_the_policy_removed_is_blocked_with_layer_and_key() {
    let env = Env::new(r#"{ tools: { deny: ["session_status", "exec"] } }"#);
    let r = env.talon(&["tools", "call", "session_status"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stdout
            .starts_with("session_status: blocked by global (tool-policy):"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("to change this, edit `tools.deny`"),
        "{}",
        r.stdout
    );
    let r = env.talon(&[
        "tools",
        "call",
        "bash",
        "--params",
        r#"{"command": "ls"}"#,
        "--json",
    ]);
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["blocked"]["deniedReason"], "tool-policy");
    assert_eq!(r.json()["blocked"]["configKey"], "tools.deny");
}

#[test]
fn a_command_hook_blocks_with_its_id() {
    let env = Env::new(
        r#"{ tools: { hooks: { beforeToolCall: [{ id: "no-status", command: ["./deny.sh"] }] } } }"#,
    );
    env.script(
        "deny.sh",
        r#"echo '{"block": true, "blockReason": "status is off limits"}'"#,
    );
    let r = env.talon(&["tools", "call", "session_status", "--json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["blocked"]["source"], "no-status");
    assert_eq!(v["blocked"]["reason"], "status is off limits");
}

#[test]
fn approvals_deny_unresolved_and_follow_approve_and_remember_allow_always() {
    let env = Env::new(
        r#"{ tools: { hooks: { beforeToolCall: [{ id: "ask", command: ["./ask.sh"] }] } } }"#,
    );
    env.script("ask.sh", r#"echo '{"requireApproval": {"title": "Status?", "description": "Show the session status?"}}'"#);

    let r = env.talon(&["tools", "call", "session_status", "--json"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["blocked"]["deniedReason"], "approval-timeout");
    assert!(r.stderr.contains("--approve"), "{}", r.stderr);

    let r = env.talon(&[
        "tools",
        "call",
        "session_status",
        "--approve",
        "deny",
        "--json",
    ]);
    assert_eq!(
        (r.code, r.json()["blocked"]["deniedReason"].clone()),
        (1, "approval-denied".into())
    );

    let r = env.talon(&[
        "tools",
        "call",
        "session_status",
        "--approve",
        "allow-once",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["approval"]["decision"], "allow-once");

    // allow-once is not remembered.
    assert_eq!(env.talon(&["tools", "call", "session_status"]).code, 1);

    // allow-always must name the session it grants.
    let r = env.talon(&[
        "tools",
        "call",
        "session_status",
        "--approve",
        "allow-always",
    ]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--session"), "{}", r.stderr);

    let session = ["--session", "agent:main:cli-test"];
    let r = env.talon(
        &[
            &session[..],
            &[
                "tools",
                "call",
                "session_status",
                "--approve",
                "allow-always",
            ],
        ]
        .concat(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // A new process with nobody to ask: the grant in the state dir answers.
    let r = env.talon(&[&session[..], &["tools", "call", "session_status", "--json"]].concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["approval"]["remembered"], true);
    // The grant is for that session only.
    assert_eq!(env.talon(&["tools", "call", "session_status"]).code, 1);
    assert!(env.path().join("state/approvals.sqlite").exists());

    assert_eq!(
        env.talon(&["tools", "call", "session_status", "--approve", "maybe"])
            .code,
        2
    );
}

#[test]
fn an_approval_is_asked_on_an_attached_terminal() {
    let env = Env::new(
        r#"{ tools: { hooks: { beforeToolCall: [{ id: "ask", command: ["./ask.sh"] }] } } }"#,
    );
    env.script(
        "ask.sh",
        r#"echo '{"requireApproval": {"title": "Status?", "description": "Show it?"}}'"#,
    );
    let cmd = env.command(&["tools", "call", "session_status"]);
    let line: Vec<String> = std::iter::once(cmd.get_program().to_string_lossy().into_owned())
        .chain(cmd.get_args().map(|a| format!("'{}'", a.to_string_lossy())))
        .collect();
    let mut script = Command::new("script");
    script.args(["-qec", &line.join(" "), "/dev/null"]);
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => script.env(k, v),
            None => script.env_remove(k),
        };
    }
    let mut child = script
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        // Give the prompt a moment, then answer "once".
        std::thread::sleep(std::time::Duration::from_millis(800));
        stdin.write_all(b"once\n").unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Approval requested by `ask` for `session_status`"),
        "{text}"
    );
    assert!(
        text.contains("\"agentId\": \"main\""),
        "the call did not run after the answer: {text}"
    );
    assert_eq!(out.status.code(), Some(0), "{text}");
}

#[test]
fn bad_input_and_unknown_tools_exit_2() {
    let env = Env::new("{}");
    let r = env.talon(&["tools", "call", "session_status", "--params", "{nope"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--params is not valid JSON"),
        "{}",
        r.stderr
    );
    assert_eq!(
        env.talon(&["tools", "call", "session_status", "--params", "[1]"])
            .code,
        2
    );
    let r = env.talon(&["tools", "call", "teleport", "--json"]);
    assert_eq!(r.code, 2);
    assert_eq!(r.json()["outcome"], "error");
    assert!(
        r.json()["message"]
            .as_str()
            .unwrap()
            .starts_with("unknown tool: teleport")
    );
    let r = env.talon(&[
        "tools",
        "call",
        "session_status",
        "--params",
        r#"{"sessionKey": "agent:other:main"}"#,
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stdout.contains("can only report the current session"),
        "{}",
        r.stdout
    );
}

#[test]
fn the_readme_example_hook_blocks_a_model_change() {
    let state = tempfile::tempdir().unwrap();
    let config = super::util::fixture("example/talon.json");
    let run = |params: &str| {
        let r = cli()
            .config(&config)
            .state_dir(state.path())
            .args(["tools", "call", "session_status", "--params", params])
            .run();
        (Some(r.code), r.stdout)
    };
    let (code, stdout) = run("{}");
    assert_eq!(code, Some(0), "{stdout}");
    let (code, stdout) = run(r#"{"model": "gpt-5"}"#);
    assert_eq!(code, Some(1));
    assert_eq!(
        stdout,
        "session_status: blocked by status-guard (plugin-before-tool-call): changing the session model is reserved to the operator\n"
    );
}

#[test]
fn after_tool_call_observers_finish_before_the_cli_exits() {
    let env = Env::new(
        r#"{ tools: { hooks: { afterToolCall: [{ id: "audit", command: ["./audit.sh"] }] } } }"#,
    );
    let log = env.path().join("audit.log");
    // A slow observer that records the event it was given.
    std::fs::write(
        env.path().join("audit.sh"),
        format!("#!/bin/sh\nsleep 0.3\ncat > '{}'\n", log.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        env.path().join("audit.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let r = env.talon(&["tools", "call", "session_status"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let event: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&log).unwrap()).unwrap();
    assert_eq!(event["hook"], "after_tool_call");
    assert_eq!(event["event"]["toolName"], "session_status");
    assert!(event["event"]["durationMs"].is_u64());
}
