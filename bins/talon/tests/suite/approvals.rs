//! `talon approvals allowlist …` and exec approvals through `talon tools
//! call` (a real exec on the host, a real allowlist file).

use std::os::unix::fs::PermissionsExt as _;

use pretty_assertions::assert_eq;

use super::util::{Run, cli};

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new(config: &str) -> Env {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("talon.json"), config).unwrap();
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        Env { dir }
    }

    fn talon(&self, args: &[&str]) -> Run {
        cli()
            .config(self.dir.path().join("talon.json"))
            .home(self.dir.path())
            .state_dir(self.dir.path().join("state"))
            .args(args)
            .run()
    }

    fn file(&self) -> std::path::PathBuf {
        self.dir.path().join("state/exec-approvals.json")
    }

    fn ran(&self, marker: &str) -> bool {
        self.dir.path().join("ws").join(marker).exists()
    }
}

const CONFIG: &str = r#"{ tools: { profile: "coding", exec: { security: "allowlist", ask: "on-miss" } },
  agents: { defaults: { workspace: "./ws" } } }"#;

#[test]
fn allowlist_add_list_remove() {
    let env = Env::new(CONFIG);
    let r = env.talon(&["approvals", "allowlist", "list"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("the exec allowlist is empty"),
        "{}",
        r.stdout
    );

    let r = env.talon(&[
        "approvals",
        "allowlist",
        "add",
        "git",
        "--arg-pattern",
        "^status$",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("added git"), "{}", r.stdout);
    let r = env.talon(&[
        "approvals",
        "allowlist",
        "add",
        "/usr/bin/*",
        "--agent",
        "ops",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["added"], 1);
    let mode = std::fs::metadata(env.file()).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);

    let v = env
        .talon(&["approvals", "allowlist", "list", "--json"])
        .json();
    let patterns: Vec<&str> = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["pattern"].as_str().unwrap())
        .collect();
    assert_eq!(patterns, vec!["git"]);
    assert_eq!(v["entries"][0]["argPattern"], "^status$");
    assert_eq!(v["entries"][0]["source"], "cli");

    // A bad pattern changes nothing and says why.
    let before = std::fs::read(env.file()).unwrap();
    let r = env.talon(&["approvals", "allowlist", "add", "~/bin/x"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stderr.contains("absolute path"), "{}", r.stderr);
    assert_eq!(std::fs::read(env.file()).unwrap(), before);

    let r = env.talon(&["approvals", "allowlist", "remove", "git"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = env.talon(&["approvals", "allowlist", "remove", "git"]);
    assert_eq!(r.code, 1, "removing nothing is a 'no': {}", r.stdout);
    let v = env
        .talon(&["approvals", "allowlist", "list", "--agent", "ops", "--json"])
        .json();
    assert_eq!(v["entries"][0]["pattern"], "/usr/bin/*");
}

#[test]
fn a_corrupt_file_is_reported_with_its_line() {
    let env = Env::new(CONFIG);
    std::fs::create_dir_all(env.dir.path().join("state")).unwrap();
    std::fs::write(env.file(), "{\"version\": 1,\n \"agents\": [}\n").unwrap();
    let r = env.talon(&["approvals", "allowlist", "list"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("exec-approvals.json:2:"), "{}", r.stderr);
    let r = env.talon(&[
        "tools",
        "call",
        "exec",
        "--params",
        r#"{"command":"touch corrupt"}"#,
        "--approve",
        "allow-once",
        "--json",
    ]);
    assert_eq!(r.code, 1, "{} {}", r.stdout, r.stderr);
    assert!(!env.ran("corrupt"));
}

#[test]
fn tools_call_asks_on_a_miss_and_allow_always_is_remembered() {
    let env = Env::new(CONFIG);
    let call = |command: &str, approve: Option<&str>| {
        let params = serde_json::json!({ "command": command }).to_string();
        let mut args = vec![
            "--session",
            "agent:main:cli",
            "tools",
            "call",
            "exec",
            "--params",
            params.as_str(),
            "--json",
        ];
        if let Some(a) = approve {
            args.extend(["--approve", a]);
        }
        env.talon(&args)
    };
    // No approver (stdin is not a terminal): askFallback deny refuses.
    let r = call("touch nobody", None);
    assert_eq!(r.code, 1, "{} {}", r.stdout, r.stderr);
    assert!(!env.ran("nobody"));
    // deny refuses.
    let r = call("touch denied", Some("deny"));
    assert_eq!(r.code, 1);
    assert!(!env.ran("denied"));
    // allow-always runs it and records `touch kept`.
    let r = call("touch kept", Some("allow-always"));
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
    assert!(env.ran("kept"));
    let v = env
        .talon(&["approvals", "allowlist", "list", "--json"])
        .json();
    assert_eq!(v["entries"][0]["pattern"], "touch");
    assert_eq!(v["entries"][0]["args"], serde_json::json!(["kept"]));
    std::fs::remove_file(env.dir.path().join("ws/kept")).unwrap();
    // Now the same command runs with nobody to ask; a chained miss does not.
    let r = call("touch kept", None);
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
    assert!(env.ran("kept"));
    let r = call("touch kept; touch sneaky", None);
    assert_eq!(r.code, 1);
    assert!(!env.ran("sneaky"));
}
