//! `talon sandbox explain|validate|resolve` on fixture configs and real
//! temp dirs with real symlinks.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::util::{Run, cli, fixture};

/// Run with a fake HOME and state dir under `home`.
fn talon(home: &Path, args: &[&str]) -> Run {
    cli()
        .home(home)
        .state_dir(home.join("state"))
        .args(args)
        .run()
}

fn temp_home() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    (tmp, root)
}

fn codes_and_keys(doc: &Value) -> Vec<(String, String)> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_owned(),
                f["key"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn explain_json_for_a_group_session_and_the_main_session() {
    let (_t, home) = temp_home();
    let config = fixture("sandbox/safe.json5");
    let run = talon(
        &home,
        &[
            "--config",
            &config,
            "sandbox",
            "explain",
            "--session",
            "agent:main:telegram:group:-100123",
            "--json",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let doc = run.json();
    assert_eq!(doc["sandboxed"], Value::Bool(true));
    assert_eq!(doc["mode"], "non-main");
    assert_eq!(doc["modeKey"], "agents.defaults.sandbox.mode");
    assert_eq!(doc["backend"], "docker");
    assert_eq!(doc["scope"], "agent");
    assert_eq!(doc["scopeKey"], "agent:main");
    assert_eq!(doc["sandboxName"], "talon-sbx-agent-main-f331f052");
    assert_eq!(doc["workspaceAccess"], "ro");
    let mounts: Vec<(String, bool)> = doc["mounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["containerPath"].as_str().unwrap().to_owned(),
                m["readOnly"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        mounts,
        vec![
            ("/workspace".to_owned(), false),
            ("/agent".to_owned(), true)
        ]
    );
    assert_eq!(
        doc["mounts"][0]["hostPath"],
        home.join("state/sandboxes/agent-main-f331f052")
            .display()
            .to_string()
    );
    let allow: Vec<&str> = doc["toolPolicy"]["allow"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        allow.contains(&"web_fetch") && allow.contains(&"exec"),
        "{allow:?}"
    );
    assert_eq!(doc["toolPolicy"]["allowKey"], "tools.sandbox.tools.allow");
    let hash = doc["configHash"].as_str().unwrap();
    assert_eq!(hash.len(), 64);
    assert_eq!(doc["docker"]["network"], "bridge");
    assert_eq!(doc["security"], Value::Array(vec![]));

    let run = talon(
        &home,
        &[
            "--config",
            &config,
            "sandbox",
            "explain",
            "--session",
            "main",
            "--json",
        ],
    );
    assert_eq!(run.code, 0);
    let doc = run.json();
    assert_eq!(doc["sandboxed"], Value::Bool(false));
    assert!(doc["reason"].as_str().unwrap().contains("main session"));
    // The same sandbox either way: the hash depends on config, not session.
    assert_eq!(doc["configHash"].as_str().unwrap(), hash);

    // Human output names the mounts with their access.
    let run = talon(
        &home,
        &[
            "--config",
            &config,
            "sandbox",
            "explain",
            "--session",
            "agent:main:discord:channel:1",
        ],
    );
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains("sandboxed: yes"), "{}", run.stdout);
    assert!(run.stdout.contains("/agent      ro"), "{}", run.stdout);
}

#[test]
fn explain_shared_scope_ignores_the_agents_docker_block() {
    let (_t, home) = temp_home();
    let config = fixture("sandbox/safe.json5");
    let run = talon(
        &home,
        &[
            "--config", &config, "--agent", "shared", "sandbox", "explain", "--json",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let doc = run.json();
    assert_eq!(doc["scope"], "shared");
    assert_eq!(doc["sandboxName"], "talon-sbx-shared");
    assert_eq!(doc["sandboxed"], Value::Bool(true));
    // `network: host` in the agent's block is ignored under a shared scope.
    assert_eq!(doc["docker"]["network"], "bridge");
}

#[test]
fn explain_hash_follows_the_config() {
    let (_t, home) = temp_home();
    let a = home.join("a.json");
    let b = home.join("b.json");
    std::fs::write(
        &a,
        r#"{ agents: { defaults: { sandbox: { mode: "all", docker: { image: "x:1" } } } } }"#,
    )
    .unwrap();
    std::fs::write(
        &b,
        r#"{ agents: { defaults: { sandbox: { docker: { image: "x:2" }, mode: "all" } } } }"#,
    )
    .unwrap();
    let hash = |p: &Path| {
        let run = talon(
            &home,
            &[
                "--config",
                p.to_str().unwrap(),
                "sandbox",
                "explain",
                "--json",
            ],
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.json()["configHash"].as_str().unwrap().to_owned()
    };
    let (ha, hb) = (hash(&a), hash(&b));
    assert_ne!(ha, hb);
    assert_eq!(ha, hash(&a));
}

#[test]
fn validate_lists_every_blocked_setting_and_exits_1() {
    let (_t, home) = temp_home();
    let run = talon(
        &home,
        &[
            "--config",
            &fixture("sandbox/blocked.json5"),
            "sandbox",
            "validate",
            "--json",
        ],
    );
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let doc = run.json();
    assert_eq!(doc["valid"], Value::Bool(false));
    let d = "agents.defaults.sandbox.docker";
    let expected: Vec<(String, String)> = [
        ("bind-blocked-path", format!("{d}.binds[0]")),
        ("bind-blocked-path", format!("{d}.binds[1]")),
        // The socket's target is a container system dir as well.
        ("bind-system-target", format!("{d}.binds[1]")),
        ("bind-covers-blocked-path", format!("{d}.binds[2]")),
        ("bind-covers-blocked-path", format!("{d}.binds[3]")),
        ("bind-not-absolute", format!("{d}.binds[4]")),
        ("bind-not-absolute", format!("{d}.binds[5]")),
        ("seccomp-unconfined", format!("{d}.seccompProfile")),
        ("apparmor-unconfined", format!("{d}.apparmorProfile")),
        (
            "bind-outside-allowed-roots",
            "agents.list[1].sandbox.docker.binds[0]".to_owned(),
        ),
        (
            "bind-reserved-target",
            "agents.list[1].sandbox.docker.binds[0]".to_owned(),
        ),
        (
            "bind-outside-allowed-roots",
            "agents.list[1].sandbox.docker.binds[1]".to_owned(),
        ),
        (
            "bind-reserved-target",
            "agents.list[1].sandbox.docker.binds[1]".to_owned(),
        ),
        (
            "network-host",
            "agents.list[1].sandbox.docker.network".to_owned(),
        ),
        (
            "privileged",
            "agents.list[1].sandbox.docker.privileged".to_owned(),
        ),
        (
            "cap-add",
            "agents.list[1].sandbox.docker.capAdd[0]".to_owned(),
        ),
        (
            "cap-add",
            "agents.list[1].sandbox.docker.capAdd[1]".to_owned(),
        ),
        (
            "network-container-join",
            "agents.list[2].sandbox.docker.network".to_owned(),
        ),
    ]
    .into_iter()
    .map(|(c, k)| (c.to_owned(), k))
    .collect();
    assert_eq!(codes_and_keys(&doc), expected);
    let first = &doc["findings"][0];
    assert_eq!(first["value"], "/etc:/host-etc:ro");
    assert!(
        first["message"]
            .as_str()
            .unwrap()
            .starts_with("Sandbox security: ")
    );
    // A defaults finding applies to the defaults and every agent.
    assert_eq!(
        first["scopes"],
        serde_json::json!(["defaults", "main", "ops", "joiner"])
    );
    assert_eq!(doc["findings"][17]["scopes"], serde_json::json!(["joiner"]));

    let human = talon(
        &home,
        &[
            "--config",
            &fixture("sandbox/blocked.json5"),
            "sandbox",
            "validate",
        ],
    );
    assert_eq!(human.code, 1);
    assert!(
        human.stdout.contains("18 blocked sandbox settings"),
        "{}",
        human.stdout
    );
}

#[test]
fn validate_passes_a_safe_config() {
    let (_t, home) = temp_home();
    let run = talon(
        &home,
        &[
            "--config",
            &fixture("sandbox/safe.json5"),
            "sandbox",
            "validate",
            "--json",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    let doc = run.json();
    assert_eq!(doc["valid"], Value::Bool(true));
    assert_eq!(doc["findings"], Value::Array(vec![]));
}

#[test]
fn validate_catches_a_symlink_to_etc_and_a_parent_of_home_ssh() {
    let (_t, root) = temp_home();
    let home = root.join("home/user");
    let ws = home.join("ws");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    std::os::unix::fs::symlink("/etc", ws.join("conf")).unwrap();
    let config = root.join("talon.json");
    std::fs::write(
        &config,
        format!(
            r#"{{ agents: {{ defaults: {{ workspace: "{ws}", sandbox: {{ docker: {{ binds: ["{link}:/conf:ro", "{parent}:/home-all", "{ok}:/data"] }} }} }} }} }}"#,
            ws = ws.display(),
            link = ws.join("conf").display(),
            parent = root.join("home").display(),
            ok = ws.display(),
        ),
    )
    .unwrap();
    let run = talon(
        &home,
        &[
            "--config",
            config.to_str().unwrap(),
            "sandbox",
            "validate",
            "--json",
        ],
    );
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let doc = run.json();
    let d = "agents.defaults.sandbox.docker";
    assert_eq!(
        codes_and_keys(&doc),
        vec![
            ("bind-blocked-path".to_owned(), format!("{d}.binds[0]")),
            // It covers ~/.ssh, and first of all Talon's own state dir
            // (~/.talon).
            ("bind-talon-state".to_owned(), format!("{d}.binds[1]")),
        ]
    );
    assert_eq!(doc["findings"][0]["resolved"], "/etc");
    let msg = doc["findings"][1]["message"].as_str().unwrap();
    assert!(msg.contains("Talon's own state"), "{msg}");
}

fn resolve_setup(access: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let (t, root) = temp_home();
    let ws = root.join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/a.txt"), "hi").unwrap();
    std::os::unix::fs::symlink("/etc", ws.join("etc-link")).unwrap();
    std::os::unix::fs::symlink("src", ws.join("inner")).unwrap();
    let config = root.join("talon.json");
    std::fs::write(
        &config,
        format!(r#"{{ agents: {{ defaults: {{ workspace: "ws", sandbox: {{ mode: "all", workspaceAccess: "{access}" }} }} }} }}"#),
    )
    .unwrap();
    (t, root, config)
}

#[test]
fn resolve_maps_paths_and_refuses_a_symlink_escape() {
    let (_t, root, config) = resolve_setup("rw");
    let cfg = config.to_str().unwrap();
    let run = talon(
        &root,
        &[
            "--config",
            cfg,
            "sandbox",
            "resolve",
            "/workspace/inner/a.txt",
            "--session",
            "s1",
            "--json",
        ],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        run.json(),
        serde_json::json!({
            "containerPath": "/workspace/inner/a.txt",
            "hostPath": root.join("ws/src/a.txt").display().to_string(),
            "mount": "/workspace",
            "readOnly": false,
        })
    );
    // A relative path starts at the workdir; a new file resolves for --write.
    let run = talon(
        &root,
        &[
            "--config",
            cfg,
            "sandbox",
            "resolve",
            "src/new.txt",
            "--write",
            "--json",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(
        run.json()["hostPath"],
        root.join("ws/src/new.txt").display().to_string()
    );

    let run = talon(
        &root,
        &[
            "--config",
            cfg,
            "sandbox",
            "resolve",
            "/workspace/etc-link/passwd",
            "--session",
            "s1",
            "--json",
        ],
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    let doc = run.json();
    assert_eq!(doc["containerPath"], "/workspace/etc-link/passwd");
    assert_eq!(doc["refused"], "escape");
    assert!(doc["reason"].as_str().unwrap().contains("outside"), "{doc}");
    assert!(doc.get("hostPath").is_none());

    let run = talon(
        &root,
        &[
            "--config",
            cfg,
            "sandbox",
            "resolve",
            "/etc/passwd",
            "--json",
        ],
    );
    assert_eq!(run.code, 1);
    assert_eq!(run.json()["refused"], "outside-mounts");
}

#[test]
fn resolve_refuses_writes_to_read_only_mounts() {
    let (_t, root, config) = resolve_setup("ro");
    let cfg = config.to_str().unwrap();
    // The sandbox copy must exist to resolve against; find where it goes.
    let explain = talon(&root, &["--config", cfg, "sandbox", "explain", "--json"]).json();
    let copy = PathBuf::from(explain["workspaceDir"].as_str().unwrap());
    let missing = talon(
        &root,
        &[
            "--config",
            cfg,
            "sandbox",
            "resolve",
            "/workspace/x",
            "--json",
        ],
    );
    assert_eq!(missing.code, 2, "{}", missing.stdout);
    assert!(
        missing.stderr.contains("does not exist yet"),
        "{}",
        missing.stderr
    );
    std::fs::create_dir_all(&copy).unwrap();

    let run = talon(
        &root,
        &[
            "--config",
            cfg,
            "sandbox",
            "resolve",
            "/agent/src/a.txt",
            "--json",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(run.json()["readOnly"], Value::Bool(true));
    let run = talon(
        &root,
        &[
            "--config",
            cfg,
            "sandbox",
            "resolve",
            "/agent/src/a.txt",
            "--write",
            "--json",
        ],
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(run.json()["refused"], "read-only");
    let human = talon(
        &root,
        &[
            "--config",
            cfg,
            "sandbox",
            "resolve",
            "/agent/src/a.txt",
            "--write",
        ],
    );
    assert_eq!(human.code, 1);
    assert!(
        human.stdout.contains("refused (read-only)"),
        "{}",
        human.stdout
    );
}

#[test]
fn a_bad_docker_key_is_a_load_error() {
    let (_t, root) = temp_home();
    let config = root.join("talon.json");
    std::fs::write(
        &config,
        "{ agents: { defaults: { sandbox: { docker: { netwrok: 'none' } } } } }",
    )
    .unwrap();
    let run = talon(
        &root,
        &[
            "--config",
            config.to_str().unwrap(),
            "sandbox",
            "validate",
            "--json",
        ],
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("agents.defaults.sandbox.docker.netwrok"),
        "{}",
        run.stderr
    );
    // With --json the same error is a JSON object on stdout.
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("agents.defaults.sandbox.docker.netwrok")),
        "{v}"
    );
}

#[test]
fn explain_never_prints_env_values() {
    let (_t, home) = temp_home();
    let config = home.join("talon.json");
    std::fs::write(
        &config,
        r#"{ agents: { defaults: { sandbox: { mode: "all", docker: { env: { API_TOKEN: "sk-secret-value" } } } } } }"#,
    )
    .unwrap();
    for json in [true, false] {
        let mut args = vec!["--config", config.to_str().unwrap(), "sandbox", "explain"];
        if json {
            args.push("--json");
        }
        let run = talon(&home, &args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(!run.stdout.contains("sk-secret-value"), "{}", run.stdout);
        if json {
            assert_eq!(run.json()["docker"]["env"]["API_TOKEN"], "<redacted>");
        }
    }
}

#[test]
fn resolve_leaves_out_binds_that_validation_refuses() {
    let (_t, root) = temp_home();
    let ws = root.join("ws");
    let data = ws.join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("f.txt"), "x").unwrap();
    let config = root.join("talon.json");
    std::fs::write(
        &config,
        format!(
            r#"{{ agents: {{ defaults: {{ workspace: "ws", sandbox: {{ mode: "all", workspaceAccess: "rw", docker: {{ binds: ["/etc:/host-etc:ro", "{data}:/data:ro"] }} }} }} }} }}"#,
            data = data.display()
        ),
    )
    .unwrap();
    let cfg = config.to_str().unwrap();
    let run = talon(
        &root,
        &[
            "--config",
            cfg,
            "sandbox",
            "resolve",
            "/host-etc/passwd",
            "--json",
        ],
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(run.json()["refused"], "outside-mounts");
    let run = talon(
        &root,
        &[
            "--config",
            cfg,
            "sandbox",
            "resolve",
            "/data/f.txt",
            "--json",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(run.json()["readOnly"], Value::Bool(true));
    assert_eq!(
        run.json()["hostPath"],
        data.join("f.txt").display().to_string()
    );
    let human = talon(
        &root,
        &["--config", cfg, "sandbox", "resolve", "/data/f.txt"],
    );
    assert!(
        human.stdout.contains("1 bind(s) refused"),
        "{}",
        human.stdout
    );
}

/// Which keys are the main session of agent `main` under the default
/// session settings, `session.mainKey: "work"` and `session.scope:
/// "global"`.
const KEYS: &[(&str, [bool; 3])] = &[
    ("main", [true, true, true]),
    ("MAIN", [true, true, true]),
    (" main ", [true, true, true]),
    ("", [true, true, true]),
    ("agent:main:main", [true, true, true]),
    ("agent:main:work", [false, true, false]),
    ("work", [false, true, false]),
    ("global", [false, false, true]),
    ("agent:main:telegram:group:-100123", [false, false, false]),
    ("agent:main:discord:channel:42", [false, false, false]),
    ("agent:main:whatsapp:dm:+15550100", [false, false, false]),
    ("agent:main:cron:job-1", [false, false, false]),
    ("agent:main:subagent:abc123", [false, false, false]),
    ("agent:ops:main", [false, false, false]),
];

const SESSIONS: [&str; 3] = [
    "",
    r#""session": { "mainKey": "work" },"#,
    r#""session": { "scope": "global" },"#,
];

/// `talon sandbox explain --json`, the library function behind it
/// (`talon_runtime::resolve_run_sandbox`), `talon policy explain --json`
/// (the policy's `sandbox` layer) and a real run (`talon tools call
/// session_status`) give the same answer for every key, mode and session
/// setting.
#[test]
fn explain_policy_and_the_run_agree_on_every_session_key() {
    let (_t, home) = temp_home();
    let ws = home.join("ws");
    for mode in ["off", "non-main", "all"] {
        for (s, session) in SESSIONS.iter().enumerate() {
            let text = format!(
                r#"{{ {session} "agents": {{ "defaults": {{ "workspace": "{ws}", "sandbox": {{ "mode": "{mode}" }} }} }} }}"#,
                ws = ws.display()
            );
            let path = home.join(format!("talon-{mode}-{s}.json"));
            std::fs::write(&path, &text).unwrap();
            let path = path.display().to_string();
            let config = talon_config::load_str(&text, "talon.json").unwrap().config;
            for (key, main) in KEYS {
                let expected = match mode {
                    "off" => false,
                    "all" => true,
                    _ => !main[s],
                };
                let what = format!("mode {mode}, {session:?}, key {key:?}");
                let mut ctx = talon_tool_policy::RunContext::new("main");
                ctx.session_key = key.trim().to_owned();
                let library = talon_runtime::resolve_run_sandbox(
                    &config,
                    &ctx,
                    &home.join("state"),
                    Some(&home),
                );
                assert_eq!(library.sandboxed, expected, "library: {what}");

                let args = ["--config", &path, "--session", key];
                let explain = talon(
                    &home,
                    &[&args[..], &["sandbox", "explain", "--json"]].concat(),
                );
                assert_eq!(explain.code, 0, "{what}: {}", explain.stderr);
                let explain = explain.json();
                assert_eq!(
                    explain["sandboxed"],
                    Value::Bool(expected),
                    "explain: {what}"
                );
                assert_eq!(explain["forced"], Value::Bool(false), "explain: {what}");
                assert_eq!(
                    explain["mainSessionKey"], library.status.main_session_key,
                    "{what}"
                );

                let policy = talon(
                    &home,
                    &[&args[..], &["policy", "explain", "--json"]].concat(),
                );
                assert_eq!(policy.code, 0, "{what}: {}", policy.stderr);
                let policy = policy.json();
                assert_eq!(
                    policy["context"]["sandboxed"],
                    Value::Bool(expected),
                    "policy: {what}"
                );
                assert_eq!(
                    policy["sandbox"]["sandboxed"],
                    Value::Bool(expected),
                    "policy: {what}"
                );
                let layer = policy["layers"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|l| l["id"] == "sandbox")
                    .unwrap();
                assert_eq!(
                    layer["active"],
                    Value::Bool(expected),
                    "sandbox layer: {what}"
                );

                if mode == "non-main" {
                    let call = talon(
                        &home,
                        &[&args[..], &["tools", "call", "session_status", "--json"]].concat(),
                    );
                    assert_eq!(call.code, 0, "{what}: {}", call.stderr);
                    let text = call.json()["result"]["content"][0]["text"]
                        .as_str()
                        .unwrap()
                        .to_owned();
                    let status: Value = serde_json::from_str(&text).unwrap();
                    assert_eq!(status["sandboxed"], Value::Bool(expected), "run: {what}");
                }
            }
        }
    }
}

#[test]
fn the_sandboxed_flag_forces_a_sandbox_on_a_mode_off_config() {
    let (_t, home) = temp_home();
    let path = home.join("talon.json");
    std::fs::write(&path, "{}").unwrap();
    let path = path.display().to_string();
    let explain = talon(
        &home,
        &[
            "--config",
            &path,
            "--sandboxed",
            "sandbox",
            "explain",
            "--json",
        ],
    );
    assert_eq!(explain.code, 0, "{}", explain.stderr);
    let doc = explain.json();
    assert_eq!(doc["sandboxed"], Value::Bool(true));
    assert_eq!(doc["forced"], Value::Bool(true));
    assert_eq!(doc["mode"], "off");
    let policy = talon(
        &home,
        &[
            "--config",
            &path,
            "--sandboxed",
            "policy",
            "explain",
            "--json",
        ],
    )
    .json();
    assert_eq!(policy["context"]["sandboxed"], Value::Bool(true));
    assert_eq!(policy["sandbox"]["forced"], Value::Bool(true));
}

#[test]
fn validate_reports_a_home_workspace_an_empty_cap_drop_and_the_config_file_in_the_workspace() {
    let (_t, root) = temp_home();
    let home = root.join("home/user");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let project = root.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let config = project.join("talon.json");
    std::fs::write(
        &config,
        format!(
            r#"{{ agents: {{ defaults: {{ workspace: "{home}", sandbox: {{ workspaceAccess: "rw", docker: {{ capDrop: [] }} }} }}, list: [ {{ id: "main", default: true }}, {{ id: "proj", workspace: "{project}", sandbox: {{ workspaceAccess: "ro" }} }} ] }} }}"#,
            home = home.display(),
            project = project.display(),
        ),
    )
    .unwrap();
    let run = talon(
        &home,
        &[
            "--config",
            config.to_str().unwrap(),
            "sandbox",
            "validate",
            "--json",
        ],
    );
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let doc = run.json();
    let found = codes_and_keys(&doc);
    for (code, key) in [
        ("cap-drop-not-all", "agents.defaults.sandbox.docker.capDrop"),
        ("workspace-home-dir", "agents.defaults.workspace"),
        ("workspace-home-dir", "agents.list[0].workspace"),
        ("workspace-talon-state", "agents.list[1].workspace"),
    ] {
        assert!(
            found.contains(&(code.to_owned(), key.to_owned())),
            "{code} at {key} in {found:?}"
        );
    }
    let explain = talon(
        &home,
        &[
            "--config",
            config.to_str().unwrap(),
            "sandbox",
            "explain",
            "--json",
        ],
    );
    let doc = explain.json();
    let text = doc.to_string();
    assert!(text.contains("workspace-home-dir"), "{text}");
}

/// Docker settings the Docker backend would refuse when it creates the
/// container are refused by both validators, every one of them, before
/// any sandboxed call; the same values on an agent using another backend
/// are not Docker's to judge.
#[test]
fn validators_refuse_docker_settings_the_backend_would_refuse() {
    let (_t, home) = temp_home();
    let config = home.join("talon.json");
    std::fs::write(
        &config,
        r#"{
          agents: {
            defaults: { sandbox: { mode: "all", docker: {
              memory: "lots", tmpfsSize: "huge", ulimits: { nofile: "abc" },
              image: "bad image", gpus: "all"
            } } },
            list: [
              { id: "main", default: true },
              { id: "local", sandbox: { backend: "local", docker: { memory: "lots" } } }
            ]
          }
        }"#,
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let run = talon(
        &home,
        &["--config", config, "sandbox", "validate", "--json"],
    );
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let doc = run.json();
    assert_eq!(doc["valid"], Value::Bool(false));
    let errors = doc["dockerSettings"].as_array().unwrap();
    let messages: Vec<&str> = errors
        .iter()
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    for needle in [
        "docker.gpus",
        "\"bad image\"",
        "agents.defaults.sandbox.docker.memory: `lots`",
        "agents.defaults.sandbox.docker.tmpfsSize: `huge`",
        "ulimits.nofile",
    ] {
        assert!(
            messages.iter().any(|m| m.contains(needle)),
            "{needle} not in {messages:#?}"
        );
    }
    assert_eq!(messages.len(), 5, "{messages:#?}");
    for e in errors {
        let scopes: Vec<&str> = e["scopes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        assert!(scopes.contains(&"main"), "{e}");
        assert!(
            !scopes.contains(&"local"),
            "the local backend's sandbox: {e}"
        );
    }
    let run = talon(&home, &["--config", config, "config", "validate", "--json"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let doc = run.json();
    assert_eq!(doc["valid"], Value::Bool(false));
    let text = doc["errors"].to_string();
    assert!(text.contains("docker.memory: `lots`"), "{text}");
    // Fixed, both pass.
    std::fs::write(
        home.join("talon.json"),
        r#"{ agents: { defaults: { sandbox: { mode: "all", docker: {
              memory: "1g", tmpfsSize: "64m", ulimits: { nofile: "1024:2048" }
           } } } } }"#,
    )
    .unwrap();
    let run = talon(
        &home,
        &["--config", config, "sandbox", "validate", "--json"],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.json()["dockerSettings"], Value::Array(vec![]));
    let run = talon(&home, &["--config", config, "config", "validate"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
}
