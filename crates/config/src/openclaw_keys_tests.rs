use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;
use crate::json5_spanned::parse;

fn properties(def: Option<&str>) -> Vec<String> {
    let schema = crate::load::validation_schema();
    let node = match def {
        Some(name) => &schema["$defs"][name],
        None => schema,
    };
    node["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

fn narrowing_keys(table: &[Narrowing]) -> Vec<&'static str> {
    table.iter().map(|(k, _)| *k).collect()
}

#[test]
fn tables_never_hide_keys_talon_interprets() {
    let checks: Vec<(Option<&str>, Vec<&str>)> = vec![
        (None, ROOT_IGNORED.to_vec()),
        (
            Some("ToolsConfig"),
            [TOOLS_IGNORED.to_vec(), narrowing_keys(TOOLS_NARROWING)].concat(),
        ),
        (Some("AgentDefaults"), DEFAULTS_IGNORED.to_vec()),
        (Some("AgentEntry"), AGENT_IGNORED.to_vec()),
        (Some("AgentBody"), AGENT_IGNORED.to_vec()),
        (
            Some("AgentToolsConfig"),
            [
                AGENT_TOOLS_IGNORED.to_vec(),
                narrowing_keys(AGENT_TOOLS_NARROWING),
            ]
            .concat(),
        ),
        (Some("SandboxConfig"), SANDBOX_IGNORED.to_vec()),
        (Some("SessionSection"), SESSION_IGNORED.to_vec()),
        (
            Some("GatewayConfig"),
            [GATEWAY_IGNORED.to_vec(), narrowing_keys(GATEWAY_NARROWING)].concat(),
        ),
        (
            Some("PluginsConfig"),
            [PLUGINS_IGNORED.to_vec(), narrowing_keys(PLUGINS_NARROWING)].concat(),
        ),
        (Some("PluginEntryConfig"), PLUGIN_ENTRY_IGNORED.to_vec()),
        (
            Some("GatewayAuthConfig"),
            [
                GATEWAY_AUTH_IGNORED.to_vec(),
                narrowing_keys(GATEWAY_AUTH_NARROWING),
            ]
            .concat(),
        ),
    ];
    for (def, keys) in checks {
        let props = properties(def);
        for key in keys {
            assert!(
                !props.iter().any(|p| p == key),
                "{key} is interpreted by Talon ({def:?})"
            );
        }
    }
}

#[test]
fn tables_are_sorted_and_unique() {
    for table in [
        ROOT_IGNORED,
        TOOLS_IGNORED,
        DEFAULTS_IGNORED,
        AGENT_IGNORED,
        AGENT_TOOLS_IGNORED,
        SANDBOX_IGNORED,
        SESSION_IGNORED,
        GATEWAY_IGNORED,
        GATEWAY_AUTH_IGNORED,
    ] {
        let mut sorted = table.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, table.to_vec());
    }
}

fn run(text: &str) -> (Value, Findings) {
    let parsed = parse(text).unwrap();
    let mut value = parsed.value;
    let mut findings = Findings::default();
    strip(&mut value, &parsed.spans, &mut findings);
    (value, findings)
}

#[test]
fn strips_each_scope_with_notices() {
    let (value, findings) = run(r#"{
  channels: { telegram: { botToken: "x", groups: { "-1": { requireMention: true, tools: { deny: ["exec"] } } } } },
  tools: { deny: [], elevated: { enabled: true }, fs: { workspaceOnly: false } },
  agents: {
    defaults: { model: "x", workspace: "~/w", sandbox: { mode: "all", sessionToolsVisibility: "all" } },
    list: [{ id: "a", identity: {}, tools: { swarm: {} }, sandbox: { sessionToolsVisibility: "spawned" } }],
    entries: { b: { heartbeat: {} } },
  },
}"#);
    assert_eq!(
        value,
        json!({
            "channels": { "telegram": { "groups": { "-1": { "tools": { "deny": ["exec"] } } } } },
            "tools": { "deny": [], "fs": { "workspaceOnly": false } },
            "agents": {
                "defaults": { "workspace": "~/w", "sandbox": { "mode": "all" } },
                "list": [{ "id": "a", "tools": {}, "sandbox": {} }],
                "entries": { "b": {} }
            }
        })
    );
    assert_eq!(findings.issues, vec![]);
    let notices: Vec<(String, u32)> = findings
        .notices
        .iter()
        .map(|n| (n.key_path.clone(), n.line))
        .collect();
    assert_eq!(
        notices,
        vec![
            ("channels.telegram".to_owned(), 2),
            ("channels.telegram.groups.-1".to_owned(), 2),
            ("tools.elevated".to_owned(), 3),
            ("agents.defaults.model".to_owned(), 5),
            (
                "agents.defaults.sandbox.sessionToolsVisibility".to_owned(),
                5
            ),
            ("agents.list[0].identity".to_owned(), 6),
            ("agents.list[0].tools.swarm".to_owned(), 6),
            (
                "agents.list[0].sandbox.sessionToolsVisibility".to_owned(),
                6
            ),
            ("agents.entries.b.heartbeat".to_owned(), 7),
        ]
    );
    assert_eq!(
        findings.notices[0].message,
        "OpenClaw channel settings not used by Talon (ignored): `botToken`"
    );
    assert_eq!(
        findings.notices[2].message,
        "OpenClaw setting not used by Talon (ignored)"
    );
}

#[test]
fn restricting_settings_talon_cannot_enforce_are_refused() {
    let (_, findings) = run(r#"{
  tools: { fs: { workspaceOnly: true }, message: { allowCrossContextSend: false } },
  agents: { list: [{ id: "a", tools: { exec: { security: "deny", safeBins: ["jq"] }, toolsBySender: { bob: { deny: ["exec"] } } } }] },
  channels: { discord: { guilds: { "1": { tools: { deny: ["exec"] }, channels: { "2": { toolsBySender: { "*": { deny: ["read"] } }, tools: {} } } } }, direct: [{ tools: { allow: ["read"] } }] }, defaults: { tools: { deny: ["exec"] } } },
}"#);
    let paths: Vec<&str> = findings
        .issues
        .iter()
        .map(|i| i.key_path.as_str())
        .collect();
    assert_eq!(
        paths,
        vec![
            "channels.discord.guilds.1.tools",
            "channels.discord.guilds.1.channels.2.toolsBySender",
            "channels.discord.direct[0].tools",
            "channels.defaults.tools",
            "tools.message",
            "agents.list[0].tools.exec.safeBins"
        ]
    );
    assert!(findings.issues[0].message.contains("would widen access"));
    assert!(
        findings.issues[0].message.contains("groups.<id>.tools"),
        "{}",
        findings.issues[0].message
    );
}

#[test]
fn inert_restricting_settings_are_only_noticed() {
    let (_, findings) = run(r#"{ tools: { message: {} } }"#);
    assert_eq!(findings.issues, vec![]);
    assert_eq!(findings.notices.len(), 1);
}

#[test]
fn unenforced_exec_settings_are_refused_and_inert_ones_noticed() {
    let (value, findings) = run(
        r#"{ tools: { exec: { security: "allowlist", ask: "on-miss", host: "sandbox", safeBins: ["jq"], pathPrepend: ["/opt/bin"], timeoutSec: 60 } } }"#,
    );
    let issues: Vec<&str> = findings
        .issues
        .iter()
        .map(|i| i.key_path.as_str())
        .collect();
    assert_eq!(issues, vec!["tools.exec.host", "tools.exec.safeBins"]);
    // `security` and `ask` are enforced (exec approvals), so they stay.
    assert_eq!(
        value,
        json!({ "tools": { "exec": { "security": "allowlist", "ask": "on-miss", "timeoutSec": 60 } } })
    );
    assert_eq!(findings.notices.len(), 1, "pathPrepend is only noticed");
}

#[test]
fn gateway_keys_are_ignored_unless_they_restrict_access() {
    let (value, findings) = run(r#"{
  gateway: {
    mode: "local", port: 18790, tailscale: { mode: "off" }, reload: { mode: "hybrid" },
    controlUi: { enabled: true, basePath: "/oc" },
    tls: { enabled: false },
    auth: { mode: "token", token: "abcdefghijklmnopqrstuvwxyz", allowTailscale: true },
  },
}"#);
    assert_eq!(findings.issues, vec![]);
    assert_eq!(
        value,
        json!({ "gateway": { "port": 18790, "auth": { "token": "abcdefghijklmnopqrstuvwxyz" } } })
    );
    let notices: Vec<&str> = findings
        .notices
        .iter()
        .map(|n| n.key_path.as_str())
        .collect();
    assert_eq!(
        notices,
        vec![
            "gateway.mode",
            "gateway.reload",
            "gateway.tailscale",
            "gateway.controlUi",
            "gateway.tls",
            "gateway.auth.allowTailscale",
            "gateway.auth.mode",
        ]
    );
}

#[test]
fn gateway_restrictions_talon_cannot_enforce_are_refused() {
    let (_, findings) = run(r#"{
  gateway: {
    tls: { enabled: true, autoGenerate: true },
    controlUi: { allowedOrigins: ["https://ui.example.com"] },
    roles: { default: "guest" },
    auth: { rateLimit: { maxAttempts: 3 } },
  },
}"#);
    let issues: Vec<(&str, u32)> = findings
        .issues
        .iter()
        .map(|i| (i.key_path.as_str(), i.line))
        .collect();
    assert_eq!(
        issues,
        vec![
            ("gateway.controlUi", 4),
            ("gateway.roles", 5),
            ("gateway.tls", 3),
            ("gateway.auth.rateLimit", 6),
        ]
    );
    assert!(findings.issues[0].message.contains("who may connect"));
    assert!(
        findings.issues[3]
            .message
            .contains("gateway.auth.maxFailures")
    );
}

/// `docs/openclaw-keys.md` lists every classified key with its class, key
/// by key, as the tables here say.
#[test]
fn the_docs_table_is_the_code_table() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/openclaw-keys.md");
    let want = classified_keys_markdown();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        have, want,
        "docs/openclaw-keys.md is stale: run `UPDATE_DOCS=1 cargo test -p talon-config`"
    );
    for key in [
        "`channels.<provider>.groups.<id>.tools`",
        "`agents.list[].tools.toolsBySender`",
        "`gateway.tls`",
        "`tools.elevated`",
        "`plugins.slots`",
        "`plugins.allow`",
        "`plugins.entries.<id>.tools`",
    ] {
        assert!(want.contains(key), "{key}");
    }
}

/// The implemented `plugins` keys are exactly the typed section's keys.
#[test]
fn the_implemented_plugins_keys_are_the_typed_ones() {
    let mut props = properties(Some("PluginsConfig"));
    props.sort();
    assert_eq!(props, PLUGINS_IMPLEMENTED.to_vec());
    let mut props = properties(Some("PluginEntryConfig"));
    props.sort();
    assert_eq!(props, PLUGIN_ENTRY_IMPLEMENTED.to_vec());
}

#[test]
fn a_per_agent_memory_search_is_kept_for_the_typed_section() {
    let (value, findings) = run(r#"{ agents: { list: [
            { id: "a", memorySearch: { enabled: false } },
            { id: "b", memorySearch: { extraPaths: ["notes"] } },
        ] } }"#);
    assert_eq!(findings.issues, vec![]);
    assert_eq!(findings.notices, vec![]);
    assert_eq!(
        value["agents"]["list"][0]["memorySearch"],
        json!({"enabled": false})
    );
}
