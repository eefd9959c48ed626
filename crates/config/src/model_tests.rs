use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn config(v: serde_json::Value) -> TalonConfig {
    serde_json::from_value(v).unwrap()
}

#[test]
fn sandbox_defaults_when_nothing_is_configured() {
    assert_eq!(
        TalonConfig::default().resolved_sandbox("main"),
        ResolvedSandbox {
            mode: SandboxMode::Off,
            scope: SandboxScope::Agent,
            workspace_access: WorkspaceAccess::None,
            backend: "docker".to_owned(),
            workspace_root: None,
        }
    );
}

#[test]
fn agent_sandbox_overrides_defaults_field_by_field() {
    let c = config(json!({
        "agents": {
            "defaults": { "sandbox": { "mode": "non-main", "workspaceAccess": "ro", "backend": "ssh", "workspaceRoot": "/srv/sbx" } },
            "list": [
                { "id": "Work", "sandbox": { "mode": "all", "scope": "session" } },
                { "id": "plain" }
            ],
            "entries": { "ops": { "sandbox": { "workspaceAccess": "rw", "backend": " " } } }
        }
    }));
    assert_eq!(
        c.resolved_sandbox("work"),
        ResolvedSandbox {
            mode: SandboxMode::All,
            scope: SandboxScope::Session,
            workspace_access: WorkspaceAccess::Ro,
            backend: "ssh".to_owned(),
            workspace_root: Some("/srv/sbx".to_owned()),
        }
    );
    assert_eq!(c.resolved_sandbox("WORK"), c.resolved_sandbox("work"));
    let plain = c.resolved_sandbox("plain");
    assert_eq!(
        (plain.mode, plain.scope, plain.workspace_access),
        (
            SandboxMode::NonMain,
            SandboxScope::Agent,
            WorkspaceAccess::Ro
        )
    );
    let ops = c.resolved_sandbox("ops");
    // A blank backend falls back to the defaults' backend.
    assert_eq!(
        (ops.workspace_access, ops.backend.as_str()),
        (WorkspaceAccess::Rw, "ssh")
    );
    assert_eq!(c.resolved_sandbox("unknown").mode, SandboxMode::NonMain);
}

#[test]
fn legacy_per_session_maps_to_scope_and_explicit_scope_wins() {
    let c = config(json!({
        "agents": {
            "defaults": { "sandbox": { "perSession": true } },
            "list": [
                { "id": "a" },
                { "id": "b", "sandbox": { "perSession": false } },
                { "id": "c", "sandbox": { "scope": "agent", "perSession": true } }
            ]
        }
    }));
    assert_eq!(c.resolved_sandbox("a").scope, SandboxScope::Session);
    assert_eq!(c.resolved_sandbox("b").scope, SandboxScope::Shared);
    assert_eq!(c.resolved_sandbox("c").scope, SandboxScope::Agent);
    let d = config(json!({
        "agents": { "defaults": { "sandbox": { "scope": "shared" } }, "list": [{ "id": "x", "sandbox": { "perSession": true } }] }
    }));
    assert_eq!(d.resolved_sandbox("x").scope, SandboxScope::Shared);
}

#[test]
fn default_agent_id_rules() {
    assert_eq!(TalonConfig::default().default_agent_id(), "main");
    assert_eq!(TalonConfig::default().agent_ids(), Vec::<String>::new());
    let first = config(json!({ "agents": { "list": [{ "id": "Alpha" }, { "id": "beta" }] } }));
    assert_eq!(first.default_agent_id(), "alpha");
    let marked = config(json!({
        "agents": { "list": [{ "id": "alpha" }], "entries": { "ops": { "default": true }, "zed": {} } }
    }));
    assert_eq!(marked.default_agent_id(), "ops");
    assert_eq!(marked.agent_ids(), vec!["alpha", "ops", "zed"]);
    let only_entries =
        config(json!({ "agents": { "entries": { "maintenance-agent": { "workspace": "~/w" } } } }));
    assert_eq!(only_entries.default_agent_id(), "maintenance-agent");
    assert_eq!(
        only_entries
            .agent("Maintenance-Agent")
            .and_then(|a| a.workspace),
        Some("~/w".to_owned())
    );
    assert_eq!(only_entries.agent("nobody"), None);
}

#[test]
fn policy_config_collects_both_agent_forms() {
    let c = config(json!({
        "tools": { "profile": "coding", "deny": ["exec"] },
        "agents": {
            "list": [{ "id": "Main", "tools": { "allow": ["read"] } }],
            "entries": { "ops": {} }
        }
    }));
    let policy = c.policy_config();
    assert_eq!(policy.tools.deny, Some(vec!["exec".to_owned()]));
    assert_eq!(
        policy.agents.keys().collect::<Vec<_>>(),
        vec!["main", "ops"]
    );
    assert_eq!(policy.agents["main"].allow, Some(vec!["read".to_owned()]));
    assert_eq!(
        policy.agents["ops"],
        talon_tool_policy::config::AgentToolsConfig::default()
    );
}

#[test]
fn entry_body_round_trip() {
    let entry = AgentEntry {
        id: "x".to_owned(),
        default: Some(true),
        name: Some("X".to_owned()),
        workspace: None,
        tools: None,
        sandbox: Some(SandboxConfig {
            mode: Some(SandboxMode::All),
            ..SandboxConfig::default()
        }),
        mcp: Some(crate::McpConfig::default()),
        memory_search: None,
        subagents: None,
    };
    assert_eq!(
        entry.body(),
        AgentBody {
            default: Some(true),
            name: Some("X".to_owned()),
            workspace: None,
            tools: None,
            sandbox: Some(SandboxConfig {
                mode: Some(SandboxMode::All),
                ..SandboxConfig::default()
            }),
            mcp: Some(crate::McpConfig::default()),
            memory_search: None,
            subagents: None,
        }
    );
}

#[test]
fn enums_use_openclaw_spellings() {
    assert_eq!(
        serde_json::to_value(SandboxMode::NonMain).unwrap(),
        json!("non-main")
    );
    assert_eq!(
        serde_json::to_value(SandboxScope::Shared).unwrap(),
        json!("shared")
    );
    assert_eq!(
        serde_json::to_value(WorkspaceAccess::Rw).unwrap(),
        json!("rw")
    );
}

#[test]
fn workspace_and_workspace_only_layer_agent_over_defaults() {
    let config: TalonConfig = serde_json::from_value(serde_json::json!({
        "tools": { "fs": { "workspaceOnly": false } },
        "agents": {
            "defaults": { "workspace": "/srv/ws" },
            "list": [
                { "id": "a", "workspace": "/srv/a", "tools": { "fs": { "workspaceOnly": true } } },
                { "id": "b" }
            ]
        }
    }))
    .unwrap();
    assert_eq!(
        config.agent_workspace("a"),
        Some(std::path::PathBuf::from("/srv/a"))
    );
    assert_eq!(
        config.agent_workspace("b"),
        Some(std::path::PathBuf::from("/srv/ws"))
    );
    assert!(config.fs_workspace_only("a"));
    assert!(!config.fs_workspace_only("b"));
    let bare = TalonConfig::default();
    assert_eq!(bare.agent_workspace("main"), None);
    assert!(
        bare.fs_workspace_only("main"),
        "Talon defaults workspaceOnly to true"
    );
}

#[test]
fn docker_block_is_typed_and_strict() {
    let loaded = crate::load_str(
        "{ agents: { defaults: { sandbox: { docker: { image: 'img:1', binds: ['/a:/a'] } } },\n list: [{ id: 'ops', sandbox: { docker: { binds: ['/b:/b'], network: 'bridge' } } }] } }",
        "t.json",
    )
    .unwrap();
    let resolved =
        loaded
            .config
            .resolved_sandbox_config("ops", std::path::Path::new("/state"), None);
    assert_eq!(resolved.docker.image, "img:1");
    assert_eq!(resolved.docker.binds, vec!["/a:/a", "/b:/b"]);
    assert_eq!(resolved.docker.network, "bridge");
    assert_eq!(
        resolved.workspace_root,
        std::path::PathBuf::from("/state/sandboxes")
    );
    assert_eq!(
        resolved.docker_origins.bind_key(1),
        "agents.list[0].sandbox.docker.binds[0]"
    );
    assert_eq!(
        resolved.docker_origins.bind_key(0),
        "agents.defaults.sandbox.docker.binds[0]"
    );
    assert_eq!(
        loaded.config.agent_key("OPS").as_deref(),
        Some("agents.list[0]")
    );

    let err = crate::load_str(
        "{ agents: { defaults: { sandbox: { docker: {\n imgae: 'x' } } } } }",
        "t.json",
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("agents.defaults.sandbox.docker.imgae"),
        "{text}"
    );
    assert!(text.contains("t.json:2"), "{text}");
}

#[test]
fn agent_workspace_dir_is_one_absolute_rule() {
    let config: TalonConfig = serde_json::from_value(serde_json::json!({
        "agents": { "list": [{ "id": "a", "default": true, "workspace": "ws-a" }, { "id": "b" }] }
    }))
    .unwrap();
    let cfg = std::path::Path::new("/etc/talon");
    let state = std::path::Path::new("/var/lib/talon");
    assert_eq!(
        config.agent_workspace_dir("a", cfg, state),
        std::path::PathBuf::from("/etc/talon/ws-a")
    );
    assert_eq!(
        config.agent_workspace_dir("B", cfg, state),
        std::path::PathBuf::from("/var/lib/talon/workspace-b")
    );
    let bare = TalonConfig::default();
    assert_eq!(
        bare.agent_workspace_dir("main", cfg, state),
        std::path::PathBuf::from("/var/lib/talon/workspace")
    );
    assert!(
        bare.agent_workspace_dir(
            "main",
            std::path::Path::new("rel"),
            std::path::Path::new("st")
        )
        .is_absolute()
    );
}

#[test]
fn ssh_block_is_typed_validated_and_resolved() {
    let loaded = crate::load_str(
        "{ agents: { defaults: { sandbox: { backend: 'ssh', ssh: { host: 'build.example', port: 2222 } } },\n list: [{ id: 'ops', sandbox: { ssh: { user: 'ops', strictHostKeyChecking: 'accept-new' } } }] } }",
        "t.json",
    )
    .unwrap();
    let resolved =
        loaded
            .config
            .resolved_sandbox_config("ops", std::path::Path::new("/state"), None);
    assert_eq!(resolved.ssh.target(), "ops@build.example:2222");
    assert_eq!(
        resolved.ssh.host_key_policy,
        talon_sandbox_core::HostKeyPolicy::AcceptNew
    );

    let err = crate::load_str(
        "{ agents: { defaults: { sandbox: { ssh: {\n hots: 'x' } } } } }",
        "t.json",
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("agents.defaults.sandbox.ssh.hots"),
        "{err}"
    );
    let err = crate::load_str(
        "{ agents: { list: [{ id: 'a', sandbox: { ssh: {\n port: 0, strictHostKeyChecking: false } } }] } }",
        "t.json",
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("agents.list[0].sandbox.ssh.port"), "{text}");
    assert!(
        text.contains("agents.list[0].sandbox.ssh.strictHostKeyChecking"),
        "{text}"
    );
}

#[test]
fn sandbox_prune_settings_follow_the_scope_key_owner() {
    use talon_sandbox_core::PruneSettings;
    let config: TalonConfig = serde_json::from_value(serde_json::json!({
        "agents": {
            "defaults": { "sandbox": { "prune": { "idleHours": 2 } } },
            "list": [
                { "id": "ops", "default": true, "sandbox": { "prune": { "idleHours": 5, "maxAgeDays": 0 } } },
                { "id": "team", "sandbox": { "scope": "shared", "prune": { "idleHours": 99 } } }
            ]
        }
    }))
    .unwrap();
    let p = |idle, age| PruneSettings {
        idle_hours: idle,
        max_age_days: age,
    };
    assert_eq!(config.sandbox_prune_settings(Some("shared")), p(2, 7));
    assert_eq!(config.sandbox_prune_settings(Some("agent:ops")), p(5, 0));
    assert_eq!(
        config.sandbox_prune_settings(Some("agent:ops:dm:1")),
        p(5, 0)
    );
    assert_eq!(
        config.sandbox_prune_settings(Some("agent:team")),
        p(2, 7),
        "a shared-scope agent's own prune block is ignored"
    );
    assert_eq!(
        config.sandbox_prune_settings(Some("main")),
        p(5, 0),
        "default agent"
    );
    assert_eq!(config.sandbox_prune_settings(None), p(5, 0));
    assert_eq!(config.sandbox_prune_settings(Some("agent:gone")), p(2, 7));
}

#[test]
fn session_visibility_defaults_to_the_tree_and_follows_the_config() {
    let p = TalonConfig::default().session_visibility();
    assert_eq!(p.visibility, talon_sessions::Visibility::Tree);
    assert!(!p.agent_to_agent.enabled);
    let c = config(json!({"tools": {
        "sessions": {"visibility": "all"},
        "agentToAgent": {"enabled": true, "allow": ["ops", "dev"]}
    }}));
    let p = c.session_visibility();
    assert_eq!(p.visibility, talon_sessions::Visibility::All);
    assert_eq!(p.agent_to_agent.allow, ["ops", "dev"]);
    assert_eq!(p.sandbox, talon_sessions::SandboxVisibility::Spawned);
}

#[test]
fn the_http_deny_list_is_the_default_minus_allow_plus_deny() {
    let c = config(serde_json::json!({}));
    let default: Vec<String> = crate::DEFAULT_HTTP_TOOL_DENY
        .iter()
        .map(|t| (*t).to_owned())
        .collect();
    assert_eq!(c.gateway_config().http_tool_deny(), default);
    assert!(default.contains(&"exec".to_owned()));
    let c = config(serde_json::json!({
        "gateway": { "tools": { "allow": [" Cron "], "deny": ["Write", "exec", ""] } }
    }));
    let deny = c.gateway_config().http_tool_deny();
    assert!(!deny.contains(&"cron".to_owned()), "{deny:?}");
    assert_eq!(deny.last().map(String::as_str), Some("write"), "{deny:?}");
    assert_eq!(deny.iter().filter(|d| *d == "exec").count(), 1, "{deny:?}");
    assert!(!deny.contains(&String::new()), "{deny:?}");
}

#[test]
fn the_client_address_of_an_every_interface_bind_is_loopback() {
    let c = config(serde_json::json!({ "gateway": { "bind": "lan", "port": 4000 } }));
    assert_eq!(
        c.gateway_config().client_addr().to_string(),
        "127.0.0.1:4000"
    );
    let c = config(serde_json::json!({ "gateway": { "bind": "10.1.2.3" } }));
    assert_eq!(
        c.gateway_config().client_addr().to_string(),
        "10.1.2.3:18789"
    );
}

/// An agent's `memorySearch` is merged over the defaults as OpenClaw
/// merges it: its keys win (nested blocks key by key), `extraPaths` adds.
#[test]
fn per_agent_memory_search_merges_over_the_defaults() {
    let c = config(serde_json::json!({"agents": {
        "defaults": {"memorySearch": {
            "extraPaths": ["docs", " notes "],
            "query": {"maxResults": 3, "minScore": 0.2},
            "sync": {"watch": false}
        }},
        "list": [
            {"id": "main"},
            {"id": "quiet", "memorySearch": {"enabled": false}},
            {"id": "wide", "memorySearch": {"extraPaths": ["notes", "more"], "query": {"maxResults": 9}}}
        ]
    }}));
    let main = c.agent_memory_search("main");
    assert!(main.is_enabled());
    assert_eq!(
        main.extra_paths,
        Some(vec!["docs".to_owned(), " notes ".to_owned()])
    );
    assert!(!c.agent_memory_search("Quiet").is_enabled());
    let wide = c.agent_memory_search("wide");
    assert_eq!(
        wide.extra_paths,
        Some(vec![
            "docs".to_owned(),
            "notes".to_owned(),
            "more".to_owned()
        ])
    );
    let q = wide.query.unwrap();
    assert_eq!((q.max_results, q.min_score), (Some(9), Some(0.2)));
    assert_eq!(wide.sync.unwrap().watch, Some(false));
    assert_eq!(c.agents_with_memory_search(), vec!["quiet", "wide"]);
}
