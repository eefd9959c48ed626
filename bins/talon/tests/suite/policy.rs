use pretty_assertions::assert_eq;
use serde_json::json;

use super::util::{fixture, talon};

#[test]
fn check_denied_by_sandbox_names_layer_rule_and_key() {
    let cfg = fixture("example/talon.json");
    let r = talon(&[
        "--config",
        &cfg,
        "--session",
        "agent:main:telegram:dm:7",
        "policy",
        "check",
        "exec",
        "--json",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.json(),
        json!({"tool": "exec", "allowed": false, "removedBy": {"layer": "sandbox", "rule": "deny exec", "configKey": "tools.sandbox.tools.deny"}, "provided": true, "providedBy": "runtime"})
    );
    let human = talon(&[
        "--config",
        &cfg,
        "--session",
        "agent:main:telegram:dm:7",
        "policy",
        "check",
        "exec",
    ]);
    assert_eq!(human.code, 1);
    assert!(
        human.stdout.contains("edit `tools.sandbox.tools.deny`"),
        "{}",
        human.stdout
    );
}

#[test]
fn check_normalises_names_and_allows_in_main_session() {
    let cfg = fixture("example/talon.json");
    let r = talon(&["--config", &cfg, "policy", "check", "  BASH ", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.json(),
        json!({"tool": "exec", "allowed": true, "removedBy": null, "provided": true, "providedBy": "runtime"})
    );
}

#[test]
fn unknown_names_are_plugin_tools() {
    let cfg = fixture("example/talon.json");
    let r = talon(&[
        "--config",
        &cfg,
        "policy",
        "check",
        "my_plugin_tool",
        "--json",
    ]);
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["removedBy"]["layer"], "profile");
    assert_eq!(r.json()["known"], json!(false));
}

/// A name no core tool has is said to be unknown, with the likely typo,
/// never a hint to add it to `alsoAllow`; exit 1 even where a plugin of
/// that name would be allowed.
#[test]
fn a_name_that_is_no_tool_is_said_to_be_unknown() {
    let cfg = fixture("example/talon.json");
    let r = talon(&["--config", &cfg, "policy", "check", "exce"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stdout
            .contains("no core tool of this build has this name"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("did you mean `exec`?"), "{}", r.stdout);
    assert!(!r.stdout.contains("alsoAllow"), "{}", r.stdout);
    let r = talon(&["--config", &cfg, "policy", "check", "exce", "--json"]);
    assert_eq!(r.json()["suggestion"], json!("exec"), "{}", r.stdout);
    // A known tool carries no such fields.
    let r = talon(&["--config", &cfg, "policy", "check", "read", "--json"]);
    assert!(r.json().get("known").is_none(), "{}", r.stdout);
}

/// Config keys are the paths of the user's file (`agents.list[1]`), not
/// the agent's id.
#[test]
fn agent_and_provider_layers() {
    let cfg = fixture("example/talon.json");
    let r = talon(&[
        "--config", &cfg, "--agent", "reviewer", "policy", "check", "write", "--json",
    ]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.json()["removedBy"],
        json!({"layer": "agent", "rule": "deny write", "configKey": "agents.list[1].tools.deny"})
    );
    let r = talon(&[
        "--config",
        &cfg,
        "--provider",
        "openai",
        "--model",
        "gpt-4o-mini",
        "policy",
        "check",
        "exec",
        "--json",
    ]);
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["removedBy"]["layer"], "provider-profile");
}

#[test]
fn subagent_with_parent_tools() {
    let cfg = fixture("example/talon.json");
    let r = talon(&[
        "--config",
        &cfg,
        "--subagent",
        "--parent-tools",
        "read,exec",
        "policy",
        "explain",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["tools"], json!(["read", "exec"]));
}

#[test]
fn typo_in_config_fails_with_key_path_and_line() {
    let cfg = fixture("configs/typo.json");
    let r = talon(&["--config", &cfg, "policy", "check", "exec"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("typo.json:4:5: tools.alow: unknown key `alow` (did you mean `allow`?)"),
        "{}",
        r.stderr
    );
}

#[test]
fn explain_json_shape() {
    let cfg = fixture("example/talon.json");
    let r = talon(&[
        "--config",
        &cfg,
        "--session",
        "agent:main:discord:g:1",
        "policy",
        "explain",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let ids: Vec<&str> = v["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        &ids[3..],
        [
            "profile",
            "provider-profile",
            "global",
            "global-provider",
            "agent",
            "agent-provider",
            "group",
            "sender",
            "sandbox",
            "owner-only",
            "subagent",
            "inherited"
        ]
    );
    assert_eq!(v["context"]["sandboxed"], true);
    let mut redacted = v.clone();
    redacted["config"] = json!("<config>");
    insta::assert_json_snapshot!("explain_sandboxed_example", redacted);
}

#[test]
fn missing_explicit_config_is_a_load_error() {
    let r = talon(&["--config", "/nonexistent/talon.json", "policy", "explain"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("cannot read config file /nonexistent/talon.json"),
        "{}",
        r.stderr
    );
}

/// `--agent` naming an agent the config does not have is a usage error
/// naming the configured ones, for every command that evaluates a run,
/// never an evaluation with defaults that apply to no real run.
#[test]
fn an_unknown_agent_is_an_error_naming_the_configured_ones() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("talon.json");
    std::fs::write(
        &cfg,
        r#"{ "agents": { "list": [ { "id": "main" }, { "id": "reviewer", "tools": { "deny": ["exec"] } } ] } }"#,
    )
    .unwrap();
    let cfg = cfg.display().to_string();
    for args in [
        &["policy", "check", "exec"][..],
        &["policy", "explain"][..],
        &["sandbox", "explain"][..],
    ] {
        let mut all = vec!["--config", cfg.as_str(), "--agent", "nobody"];
        all.extend_from_slice(args);
        let r = talon(&all);
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
        assert!(
            r.stderr.contains("`nobody` is not a configured agent")
                && r.stderr.contains("main, reviewer"),
            "{args:?}: {}",
            r.stderr
        );
    }
    let r = talon(&[
        "--config", &cfg, "--agent", "Reviewer", "policy", "check", "exec",
    ]);
    assert_eq!(r.code, 1, "{r:?}");
    // Without agents configured, the implicit `main` is the one agent.
    let r = talon(&["--agent", "main", "policy", "check", "read"]);
    assert_eq!(r.code, 0, "{r:?}");
}

/// An imported restriction Talon cannot enforce stops every command with
/// the key and the way out; dropped knowingly, `explain` says so.
#[test]
fn unenforced_restrictions_are_refused_or_shown() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("talon.json");
    let key = "channels.telegram.direct.42.tools";
    std::fs::write(
        &cfg,
        r#"{ channels: { telegram: { direct: { "42": { tools: { deny: ["exec"] } } } } } }"#,
    )
    .unwrap();
    let cfg_s = cfg.to_str().unwrap();
    let r = talon(&["--config", cfg_s, "policy", "explain"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains(&format!("{key}:")), "{}", r.stderr);
    assert!(r.stderr.contains("acceptUnenforced"), "{}", r.stderr);

    std::fs::write(
        &cfg,
        format!(
            r#"{{ acceptUnenforced: ["{key}"], channels: {{ telegram: {{ direct: {{ "42": {{ tools: {{ deny: ["exec"] }} }} }} }} }} }}"#
        ),
    )
    .unwrap();
    let r = talon(&["--config", cfg_s, "policy", "explain"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.contains(&format!(
            "not enforced (dropped knowingly by acceptUnenforced): {key}"
        )),
        "{}",
        r.stdout
    );
    let r = talon(&["--config", cfg_s, "policy", "explain", "--json"]);
    assert_eq!(r.json()["droppedRestrictions"], json!([key]));
}

/// A channel group's policy is explained for the run the flags describe:
/// the group layer names the channel key that produced it, for a given
/// channel, group and sender, or for a session key naming the group.
#[test]
fn channel_policies_are_explained_per_channel_group_and_sender() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("talon.json");
    std::fs::write(
        &cfg,
        r#"{ channels: { telegram: { botToken: "x", groups: {
            "-100": { tools: { deny: ["exec"] }, toolsBySender: { "username:boss": { deny: ["cron"] } } }
        } } } }"#,
    )
    .unwrap();
    let cfg_s = cfg.to_str().unwrap();
    let r = talon(&[
        "--config",
        cfg_s,
        "policy",
        "explain",
        "--channel",
        "telegram",
        "--group=-100",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout
            .contains("group tools.allow (channels.telegram.groups.-100.tools)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("change: channels.telegram.groups.-100.tools.deny"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("channel: telegram  group: -100"),
        "{}",
        r.stdout
    );
    let r = talon(&[
        "--config",
        cfg_s,
        "policy",
        "check",
        "cron",
        "--channel",
        "telegram",
        "--group=-100",
        "--sender-username",
        "@Boss",
        "--json",
    ]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(
        r.json()["removedBy"]["configKey"],
        json!("channels.telegram.groups.-100.toolsBySender.username:boss.deny")
    );
    // Another group, or no channel: nothing from the channel section.
    for extra in [&["--channel", "telegram", "--group=-200"][..], &[][..]] {
        let mut args = vec!["--config", cfg_s, "policy", "check", "exec"];
        args.extend_from_slice(extra);
        assert_eq!(talon(&args).code, 0, "{extra:?}");
    }
    // A session key naming the group conversation is that group.
    let r = talon(&[
        "--config",
        cfg_s,
        "--session",
        "agent:main:telegram:group:-100",
        "policy",
        "check",
        "exec",
        "--json",
    ]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.json()["removedBy"]["layer"], json!("group"));
}

/// `plugins` switches are enforced: `policy check` of a plugin tool names
/// the `plugins` layer and the key, and `policy explain` lists the layer.
#[test]
fn plugin_switches_are_explained() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("talon.json");
    std::fs::write(&cfg, r#"{ plugins: { deny: ["my_plugin_tool"] } }"#).unwrap();
    let cfg_s = cfg.to_str().unwrap();
    let r = talon(&[
        "--config",
        cfg_s,
        "policy",
        "check",
        "my_plugin_tool",
        "--json",
    ]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.json()["removedBy"]["layer"], json!("plugins"));
    assert_eq!(r.json()["removedBy"]["configKey"], json!("plugins.deny"));
    let r = talon(&["--config", cfg_s, "policy", "check", "read", "--json"]);
    assert_eq!(
        r.code, 0,
        "a plugin switch never removes a core tool: {r:?}"
    );

    let r = talon(&["--config", cfg_s, "policy", "explain", "--json"]);
    assert_eq!(r.code, 0, "{r:?}");
    let layers = r.json()["layers"].clone();
    assert!(
        layers
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["id"] == json!("plugins")),
        "{layers}"
    );
}
