//! The exec environment carries no secrets of the operator: real `talon`
//! processes whose environment holds fake model keys, cloud and database
//! credentials and the gateway token start real children (host `exec`,
//! bubblewrap and Docker sandboxed `exec`, a stdio MCP server, a command
//! hook), and each child's environment is read back.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::util::{Cli, Run, cli};

/// The operator's secrets in the parent's environment, with values no
/// child may ever show.
const SECRETS: [(&str, &str); 7] = [
    ("OPENAI_API_KEY", "fake-secret-openai"),
    ("ANTHROPIC_API_KEY", "fake-secret-anthropic"),
    ("AWS_SECRET_ACCESS_KEY", "fake-secret-aws"),
    ("GITHUB_TOKEN", "fake-secret-github"),
    ("DB_PASSWORD", "fake-secret-db"),
    ("TALON_GATEWAY_TOKEN", "fake-secret-gateway"),
    ("MY_SERVICE_SECRET", "fake-secret-service"),
];

struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new(config: Value) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        std::fs::write(dir.path().join("talon.json"), config.to_string()).unwrap();
        Setup { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// `talon` with the secrets (and a harmless variable) in its
    /// environment.
    fn talon(&self) -> Cli {
        let mut c = cli()
            .config(self.path("talon.json"))
            .home(self.dir.path())
            .state_dir(self.path("state"))
            .env("HARMLESS_SETTING", "visible-value")
            // No Landlock helper for the local backend (its own tests
            // cover it) and no engine but the machine's.
            .env("TALON_SANDBOX_EXEC", self.path("no-such-helper"));
        for (k, v) in SECRETS {
            c = c.env(k, v);
        }
        c
    }

    fn exec(&self, params: Value) -> Run {
        self.talon()
            .args([
                "--session",
                "agent:main:cli",
                "tools",
                "call",
                "exec",
                "--params",
            ])
            .arg(params.to_string())
            .args(["--json", "--approve", "allow-once"])
            .run()
    }
}

/// The `env` output of an exec call, as `NAME=value` lines.
fn env_of(run: &Run) -> String {
    assert_eq!(run.code, 0, "{run:?}");
    let doc = run.json();
    let text = doc["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {doc}"));
    assert_eq!(doc["result"]["details"]["exitCode"], 0, "{doc}");
    text.to_owned()
}

fn names(env: &str) -> Vec<&str> {
    env.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, _)| k)
        .collect()
}

/// Asserts that no secret name or value is in `env`.
fn assert_no_secrets(env: &str) {
    let names = names(env);
    for (k, v) in SECRETS {
        assert!(!names.contains(&k), "{k} reached the child:\n{env}");
        assert!(
            !env.contains(v),
            "the value of {k} reached the child:\n{env}"
        );
    }
    assert!(!env.contains("fake-secret"), "{env}");
}

const HOST: fn() -> Value = || json!({ "agents": { "defaults": { "workspace": "./ws" } } });

#[test]
fn a_host_exec_child_sees_no_operator_secret() {
    let s = Setup::new(HOST());
    let env = env_of(&s.exec(json!({ "command": "env" })));
    assert_no_secrets(&env);
    let names = names(&env);
    for needed in ["PATH", "HOME"] {
        assert!(names.contains(&needed), "{needed} missing:\n{env}");
    }
    // `inherit: core` (the default) leaves out everything else.
    assert!(!names.contains(&"HARMLESS_SETTING"), "{env}");
    assert!(!names.contains(&"TALON_STATE_DIR"), "{env}");
    assert!(!names.contains(&"TALON_SANDBOX_EXEC"), "{env}");
}

#[test]
fn inherit_all_keeps_other_variables_and_set_adds_the_configured_ones() {
    let s = Setup::new(json!({
        "agents": { "defaults": { "workspace": "./ws" } },
        "tools": { "exec": { "env": {
            "inherit": "all",
            "exclude": ["HOME_*"],
            "set": { "CONFIGURED_VAR": "from-config" }
        } } }
    }));
    let run = s
        .talon()
        .env("HOME_EXTRA", "excluded-by-config")
        .args([
            "--session",
            "agent:main:cli",
            "tools",
            "call",
            "exec",
            "--params",
        ])
        .arg(json!({ "command": "env", "env": { "CALL_VAR": "from-call" } }).to_string())
        .args(["--json", "--approve", "allow-once"])
        .run();
    let env = env_of(&run);
    assert_no_secrets(&env);
    for line in [
        "HARMLESS_SETTING=visible-value",
        "CONFIGURED_VAR=from-config",
        "CALL_VAR=from-call",
    ] {
        assert!(env.lines().any(|l| l == line), "{line} missing:\n{env}");
    }
    assert!(!env.contains("excluded-by-config"), "{env}");
    // Talon's own variables stay out under `all` too (only the markers
    // Talon sets itself, `TALON_CLI` and the process-tree label, are there).
    let talon: Vec<&str> = names(&env)
        .into_iter()
        .filter(|n| n.starts_with("TALON_"))
        .collect();
    for name in &talon {
        assert!(
            ["TALON_CLI", "TALON_PROC_LEAF"].contains(name),
            "{name} reached the child:\n{env}"
        );
    }
    assert!(talon.contains(&"TALON_CLI"), "{env}");
}

/// A refused call runs nothing: its command would create `ran`.
fn assert_refused(s: &Setup, env: Value, key: &str, why: &str) {
    let run = s.exec(json!({ "command": "touch ran", "env": env }));
    assert_eq!(run.code, 2, "{key}: {run:?}");
    assert!(
        run.stdout.contains("exec.env_rejected"),
        "{key}: {}",
        run.stdout
    );
    assert!(run.stdout.contains(key), "{key} not named: {}", run.stdout);
    assert!(run.stdout.contains(why), "{key}: {}", run.stdout);
    assert!(!s.path("ws/ran").exists(), "{key}: the command ran");
}

#[test]
fn tls_verification_switches_from_the_model_are_refused() {
    let s = Setup::new(HOST());
    for key in [
        "NODE_TLS_REJECT_UNAUTHORIZED",
        "PYTHONHTTPSVERIFY",
        "GIT_SSL_NO_VERIFY",
        "requests_ca_bundle",
    ] {
        assert_refused(&s, json!({ key: "0" }), key, "TLS verification");
    }
}

#[test]
fn case_variants_of_blocked_names_are_refused() {
    let s = Setup::new(HOST());
    assert_refused(
        &s,
        json!({ "ld_preload": "/x.so" }),
        "ld_preload",
        "any case",
    );
    assert_refused(&s, json!({ "Path": "/tmp" }), "Path", "PATH cannot be set");
    assert_refused(
        &s,
        json!({ "talon_gateway_token": "x" }),
        "talon_gateway_token",
        "reserved",
    );
    assert_refused(
        &s,
        json!({ "FOO": "1", "foo": "2" }),
        "foo",
        "differ only in case",
    );
}

fn local_sandbox() -> Value {
    json!({ "agents": { "defaults": { "workspace": "./ws", "sandbox": {
        "mode": "all", "backend": "local", "workspaceAccess": "rw"
    } } } })
}

#[test]
fn a_bubblewrap_sandboxed_child_sees_no_operator_secret() {
    let s = Setup::new(local_sandbox());
    let env = env_of(&s.exec(json!({ "command": "env", "env": { "CALL_VAR": "from-call" } })));
    assert_no_secrets(&env);
    assert!(env.lines().any(|l| l == "CALL_VAR=from-call"), "{env}");
    assert!(!names(&env).contains(&"HARMLESS_SETTING"), "{env}");
    assert!(names(&env).contains(&"PATH"), "{env}");
}

#[test]
fn credential_names_from_the_model_are_refused_in_a_sandbox() {
    let s = Setup::new(local_sandbox());
    for key in ["DEPLOY_TOKEN", "openai_api_key", "MY_DB_PASSWORD"] {
        assert_refused(&s, json!({ key: "x" }), key, "sandboxed run");
    }
    // The same names are a model's own business on the host.
    let host = Setup::new(HOST());
    let env =
        env_of(&host.exec(json!({ "command": "env", "env": { "DEPLOY_TOKEN": "model-value" } })));
    assert!(
        env.lines().any(|l| l == "DEPLOY_TOKEN=model-value"),
        "{env}"
    );
}

#[test]
fn a_docker_sandboxed_child_sees_no_operator_secret() {
    talon_test_support::docker::require_engine();
    let agent = format!("envsbx{}", std::process::id());
    let s = Setup::new(json!({ "agents": {
        "defaults": { "workspace": "./ws", "sandbox": {
            "mode": "all", "workspaceAccess": "rw",
            "docker": { "image": talon_test_support::docker::IMAGE }
        } },
        "list": [{ "id": agent }]
    } }));
    let _cleanup = ContainerCleanup(agent.clone());
    let run = s
        .talon()
        .args(["--agent", &agent, "tools", "call", "exec", "--params"])
        .arg(json!({ "command": "env", "env": { "CALL_VAR": "from-call" } }).to_string())
        .args(["--json", "--approve", "allow-once"])
        .run();
    let env = env_of(&run);
    assert_no_secrets(&env);
    assert!(env.lines().any(|l| l == "CALL_VAR=from-call"), "{env}");
    assert!(!names(&env).contains(&"HARMLESS_SETTING"), "{env}");
}

#[test]
fn an_ssh_sandbox_and_its_local_master_see_no_operator_secret() {
    let dir = tempfile::Builder::new()
        .prefix("envssh")
        .tempdir_in("/tmp")
        .unwrap();
    let d = dir.path();
    let sshd = talon_test_support::sshd::Sshd::start().unwrap_or_else(|e| panic!("{e:#}"));
    // An `ssh` first on PATH that records the environment it was started
    // with (the master's), then runs the real client.
    let bin = d.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let seen = d.join("ssh-env.txt");
    let wrapper = bin.join("ssh");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nenv >> {}\nexec /usr/bin/ssh \"$@\"\n",
            sh_quote(&seen)
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let s = Setup::new(
        json!({ "agents": { "defaults": { "workspace": "./ws", "sandbox": {
        "mode": "all", "backend": "ssh", "workspaceAccess": "rw",
        "ssh": {
            "host": "127.0.0.1", "port": sshd.port, "user": sshd.user,
            "identityFile": sshd.client_key(), "knownHostsFile": sshd.known_hosts(),
            "workspaceRoot": format!("{}/remote/", d.display())
        }
    } } } }),
    );
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = s
        .talon()
        .env("PATH", path)
        .env("SSH_AUTH_SOCK", d.join("agent.sock"))
        .args([
            "--session",
            "agent:main:cli",
            "tools",
            "call",
            "exec",
            "--params",
        ])
        .arg(json!({ "command": "env", "env": { "CALL_VAR": "from-call" } }).to_string())
        .args(["--json", "--approve", "allow-once"])
        .run();
    let remote = env_of(&run);
    assert_no_secrets(&remote);
    assert!(
        remote.lines().any(|l| l == "CALL_VAR=from-call"),
        "{remote}"
    );
    let master = std::fs::read_to_string(&seen).unwrap_or_else(|e| panic!("no ssh ran: {e}"));
    assert_no_secrets(&master);
    assert!(!names(&master).contains(&"HARMLESS_SETTING"), "{master}");
    // The client authenticates with the operator's agent (never forwarded).
    assert!(names(&master).contains(&"SSH_AUTH_SOCK"), "{master}");
}

/// Removes the test agent's containers.
struct ContainerCleanup(String);

impl Drop for ContainerCleanup {
    fn drop(&mut self) {
        let label = format!("label=talon.sessionKey=agent:{}", self.0);
        let (_, ids) = talon_test_support::docker::docker(&["ps", "-aq", "--filter", &label]);
        for id in ids.split_whitespace() {
            let _ = talon_test_support::docker::docker(&["rm", "-f", id]);
        }
        let label = format!("label=talon.agentId={}", self.0);
        let (_, ids) = talon_test_support::docker::docker(&["ps", "-aq", "--filter", &label]);
        for id in ids.split_whitespace() {
            let _ = talon_test_support::docker::docker(&["rm", "-f", id]);
        }
    }
}

fn python() -> String {
    std::env::var("TALON_TEST_PYTHON").unwrap_or_else(|_| {
        panic!("TALON_TEST_PYTHON is not set: run `cargo xtask py-env` (or `cargo xtask test`)")
    })
}

fn sh_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "'\\''"))
}

#[test]
fn a_stdio_mcp_server_sees_no_operator_secret() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("server-env.txt");
    let script = format!(
        "env > {}; exec {} -m mcp_server_time --local-timezone UTC",
        sh_quote(&out),
        sh_quote(Path::new(&python()))
    );
    let s = Setup::new(json!({ "mcp": { "servers": { "time": {
        "command": "/bin/sh", "args": ["-c", script], "timeoutMs": 20000,
        "env": { "SERVER_SETTING": "configured" }
    } } } }));
    let run = s.talon().args(["mcp", "tools", "--json"]).run();
    assert_eq!(run.code, 0, "{run:?}");
    let env = std::fs::read_to_string(&out).unwrap();
    assert_no_secrets(&env);
    assert!(
        env.lines().any(|l| l == "SERVER_SETTING=configured"),
        "{env}"
    );
    assert!(names(&env).contains(&"PATH"), "{env}");
    assert!(!names(&env).contains(&"HARMLESS_SETTING"), "{env}");
}

#[test]
fn a_stdio_mcp_server_follows_the_configured_env_policy() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("server-env.txt");
    let script = format!(
        "env > {}; exec {} -m mcp_server_time --local-timezone UTC",
        sh_quote(&out),
        sh_quote(Path::new(&python()))
    );
    let s = Setup::new(json!({
        "tools": { "exec": { "env": { "inherit": "all", "set": { "CORP_MIRROR": "mirror.example" } } } },
        "mcp": { "servers": { "time": {
            "command": "/bin/sh", "args": ["-c", script], "timeoutMs": 20000
        } } }
    }));
    let run = s.talon().args(["mcp", "tools", "--json"]).run();
    assert_eq!(run.code, 0, "{run:?}");
    let env = std::fs::read_to_string(&out).unwrap();
    // `inherit: all` passes the harmless variable and `set` adds the
    // configured one; the credential and Talon excludes still hold.
    assert_no_secrets(&env);
    assert!(
        env.lines().any(|l| l == "HARMLESS_SETTING=visible-value"),
        "{env}"
    );
    assert!(
        env.lines().any(|l| l == "CORP_MIRROR=mirror.example"),
        "{env}"
    );
}

#[test]
fn a_command_hook_sees_no_operator_secret() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("hook-env.txt");
    let script = format!("env > {}; echo '{{}}'", sh_quote(&out));
    let s = Setup::new(json!({
        "agents": { "defaults": { "workspace": "./ws" } },
        "tools": { "hooks": { "beforeToolCall": [
            { "id": "envdump", "command": ["/bin/sh", "-c", script], "env": { "HOOK_SETTING": "configured" } }
        ] } }
    }));
    let run = s.exec(json!({ "command": "true" }));
    assert_eq!(run.code, 0, "{run:?}");
    let env = std::fs::read_to_string(&out).unwrap();
    assert_no_secrets(&env);
    assert!(env.lines().any(|l| l == "HOOK_SETTING=configured"), "{env}");
    assert!(names(&env).contains(&"PATH"), "{env}");
    assert!(!names(&env).contains(&"HARMLESS_SETTING"), "{env}");
}

#[test]
fn sandbox_explain_shows_the_env_policy_names_only() {
    let s = Setup::new(json!({
        "agents": { "defaults": { "workspace": "./ws" } },
        "tools": { "exec": { "env": {
            "exclude": ["LANG"],
            "set": { "CONFIGURED_VAR": "config-value-never-shown" }
        } } }
    }));
    let run = s
        .talon()
        .env("LANG", "C.UTF-8")
        .args(["sandbox", "explain", "--json"])
        .run();
    assert_eq!(run.code, 0, "{run:?}");
    let doc = run.json();
    let env = &doc["execEnv"];
    assert_eq!(env["inherit"], "core", "{env}");
    assert_eq!(env["sandboxed"], false, "{env}");
    assert_eq!(env["exclude"], json!(["LANG"]), "{env}");
    assert_eq!(env["setNames"], json!(["CONFIGURED_VAR"]), "{env}");
    assert!(
        env["defaultExclude"]
            .as_array()
            .unwrap()
            .contains(&json!("*TOKEN*"))
    );
    let inherited: Vec<&str> = env["inheritedNames"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        inherited.contains(&"PATH") && inherited.contains(&"HOME"),
        "{env}"
    );
    assert!(!inherited.contains(&"LANG"), "{env}");
    for (k, _) in SECRETS {
        assert!(!inherited.contains(&k), "{k}: {env}");
    }
    for value in ["config-value-never-shown", "fake-secret", "visible-value"] {
        assert!(!run.stdout.contains(value), "{value} shown: {}", run.stdout);
    }

    let text = s.talon().args(["sandbox", "explain"]).run();
    assert_eq!(text.code, 0, "{text:?}");
    assert!(
        text.stdout.contains("exec environment (tools.exec.env):"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains("set: CONFIGURED_VAR"),
        "{}",
        text.stdout
    );
    assert!(
        !text.stdout.contains("config-value-never-shown"),
        "{}",
        text.stdout
    );
    assert!(!text.stdout.contains("fake-secret"), "{}", text.stdout);
}
