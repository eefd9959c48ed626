//! `talon tools call` with the built-in tools against a copy of the
//! fixture workspace: every tool from the CLI, through the full gate, on
//! the agent's workspace (`--workspace` or `agents.defaults.workspace`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::util::{Run, cli};

struct Ws {
    dir: tempfile::TempDir,
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

impl Ws {
    /// A config dir whose config says `config`, with the fixture workspace
    /// copied to `<dir>/ws`.
    fn new(config: &str) -> Ws {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("talon.json"), config).unwrap();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/workspace");
        copy_tree(&fixture, &dir.path().join("ws"));
        Ws { dir }
    }

    fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    fn call(&self, tool: &str, params: Value, extra: &[&str]) -> Run {
        let params = params.to_string();
        cli()
            .config(self.dir.path().join("talon.json"))
            .home(self.dir.path())
            .state_dir(self.dir.path().join("state"))
            .args([
                "--session",
                "agent:main:cli",
                "tools",
                "call",
                tool,
                "--params",
            ])
            .arg(&params)
            .args(["--json", "--approve", "allow-once"])
            .args(extra)
            .run()
    }
}

const CONFIG: &str = r#"{ agents: { defaults: { workspace: "./ws" } } }"#;

#[test]
fn file_tools_work_on_the_configured_workspace_and_stay_inside_it() {
    let w = Ws::new(CONFIG);
    let r = w.call("read", serde_json::json!({ "path": "README.md" }), &[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("Demo workspace"), "{}", r.stdout);

    let r = w.call(
        "write",
        serde_json::json!({ "path": "out/new.txt", "content": "alpha\nbeta\n" }),
        &[],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        std::fs::read_to_string(w.ws().join("out/new.txt")).unwrap(),
        "alpha\nbeta\n"
    );

    let r = w.call(
        "edit",
        serde_json::json!({ "path": "out/new.txt", "oldText": "beta", "newText": "gamma" }),
        &[],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        std::fs::read_to_string(w.ws().join("out/new.txt")).unwrap(),
        "alpha\ngamma\n"
    );

    let patch = "*** Begin Patch\n*** Add File: out/added.txt\n+added\n*** Update File: out/new.txt\n@@\n alpha\n-gamma\n+delta\n*** End Patch";
    let r = w.call("apply_patch", serde_json::json!({ "input": patch }), &[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        std::fs::read_to_string(w.ws().join("out/new.txt")).unwrap(),
        "alpha\ndelta\n"
    );
    assert_eq!(
        std::fs::read_to_string(w.ws().join("out/added.txt")).unwrap(),
        "added\n"
    );

    // Outside the workspace: `..`, an absolute path, a symlink.
    std::fs::write(w.dir.path().join("secret.txt"), "top secret").unwrap();
    std::os::unix::fs::symlink(w.dir.path().join("secret.txt"), w.ws().join("link")).unwrap();
    for path in [
        "../secret.txt",
        w.dir.path().join("secret.txt").to_str().unwrap(),
        "link",
    ] {
        let r = w.call("read", serde_json::json!({ "path": path }), &[]);
        assert_eq!(r.code, 2, "{path}: {r:?}");
        assert!(!r.stdout.contains("top secret"), "{path}: {}", r.stdout);
    }
    let r = w.call(
        "write",
        serde_json::json!({ "path": "../escaped.txt", "content": "x" }),
        &[],
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert!(!w.dir.path().join("escaped.txt").exists());
}

#[test]
fn workspace_flag_wins_over_the_config() {
    let w = Ws::new(CONFIG);
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("only-here.txt"), "flagged").unwrap();
    let r = w.call(
        "read",
        serde_json::json!({ "path": "only-here.txt" }),
        &["--workspace", other.path().to_str().unwrap()],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("flagged"), "{}", r.stdout);
}

#[test]
fn exec_runs_in_the_workspace_and_refuses_dangerous_env() {
    let w = Ws::new(CONFIG);
    let r = w.call("exec", serde_json::json!({ "command": "pwd; ls src" }), &[]);
    assert_eq!(r.code, 0, "{r:?}");
    let ws = std::fs::canonicalize(w.ws()).unwrap();
    assert!(r.stdout.contains(ws.to_str().unwrap()), "{}", r.stdout);
    assert!(r.stdout.contains("main.rs"), "{}", r.stdout);

    let r = w.call(
        "exec",
        serde_json::json!({ "command": "true", "env": { "LD_PRELOAD": "/x.so" } }),
        &[],
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stdout.contains("LD_PRELOAD"), "{}", r.stdout);

    let r = w.call(
        "exec",
        serde_json::json!({ "command": "sleep 5", "timeout": 1 }),
        &[],
    );
    assert_eq!(r.json()["result"]["details"]["timedOut"], true, "{r:?}");
}

#[test]
fn web_fetch_refuses_private_addresses_before_connecting() {
    let w = Ws::new(CONFIG);
    for url in [
        "http://127.0.0.1:9/",
        "http://2130706433/",
        "http://0x7f.1/",
        "http://[::ffff:127.0.0.1]/",
    ] {
        let r = w.call("web_fetch", serde_json::json!({ "url": url }), &[]);
        assert_eq!(r.code, 2, "{url}: {r:?}");
        assert!(r.stdout.contains("ssrf_blocked"), "{url}: {}", r.stdout);
    }
    // A cloud metadata endpoint is its own class, whatever is configured.
    let r = w.call(
        "web_fetch",
        serde_json::json!({ "url": "http://169.254.169.254/latest/meta-data/" }),
        &[],
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stdout.contains("web.metadata_blocked"), "{}", r.stdout);
}

#[test]
fn gateway_reads_the_config_with_secrets_redacted() {
    let w = Ws::new(
        r#"{ agents: { defaults: { workspace: "./ws" } }, tools: { web: { search: { apiKey: "sk-very-secret" } } } }"#,
    );
    let r = w.call(
        "gateway",
        serde_json::json!({ "action": "config.get" }),
        &[],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!r.stdout.contains("sk-very-secret"), "{}", r.stdout);
    assert!(r.stdout.contains("REDACTED"), "{}", r.stdout);
    let r = w.call(
        "gateway",
        serde_json::json!({ "action": "config.schema.lookup", "path": "tools.exec" }),
        &[],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("timeoutSec"), "{}", r.stdout);
}

#[test]
fn process_and_web_search_answer_from_the_cli() {
    let w = Ws::new(CONFIG);
    // Background sessions belong to the process that started them; a fresh
    // CLI process has none.
    let r = w.call("process", serde_json::json!({ "action": "list" }), &[]);
    assert_eq!(r.code, 0, "{r:?}");
    let r = w.call(
        "process",
        serde_json::json!({ "action": "poll", "sessionId": "nope" }),
        &[],
    );
    assert_eq!(r.code, 2, "{r:?}");
    // No key anywhere: the error names the config key and the variable.
    let r = cli()
        .config(w.dir.path().join("talon.json"))
        .home(w.dir.path())
        .state_dir(w.dir.path().join("state"))
        .env_remove("BRAVE_API_KEY")
        .args([
            "tools",
            "call",
            "web_search",
            "--params",
            r#"{"query":"rust"}"#,
        ])
        .run();
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stdout.contains("BRAVE_API_KEY"), "{r:?}");
}
