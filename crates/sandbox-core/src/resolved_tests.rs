#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::json;
use talon_tool_policy::ListSource;
use talon_tool_policy::config::{SandboxToolsSection, ToolPolicyConfig};

use super::*;
use crate::main_session::MainSession;

fn sb(v: serde_json::Value) -> SandboxConfig {
    serde_json::from_value(v).unwrap()
}

fn resolve(
    defaults: Option<&SandboxConfig>,
    agent: Option<&SandboxConfig>,
) -> ResolvedSandboxConfig {
    let tools = ToolsConfig::default();
    ResolvedSandboxConfig::resolve(&SandboxInputs {
        agent_id: "main",
        defaults,
        agent,
        agent_key: Some("agents.list[0]"),
        state_dir: Path::new("/state"),
        home: Some(Path::new("/home/u")),
        tools: &tools,
        agent_tools: None,
    })
}

#[test]
fn built_in_defaults() {
    let r = resolve(None, None);
    assert_eq!(r.mode, SandboxMode::Off);
    assert_eq!(r.mode_key, None);
    assert_eq!(r.scope, SandboxScope::Agent);
    assert_eq!(r.workspace_access, WorkspaceAccess::None);
    assert_eq!(r.backend, "docker");
    assert_eq!(r.workspace_root, PathBuf::from("/state/sandboxes"));
    assert_eq!(r.docker, DockerSettings::default());
    assert_eq!(r.tool_policy.allow_source, ListSource::Default);
}

#[test]
fn agent_fields_override_defaults_one_by_one() {
    let d = sb(
        json!({ "mode": "non-main", "workspaceAccess": "ro", "backend": "ssh",
                       "workspaceRoot": "~/boxes", "docker": { "image": "g" } }),
    );
    let a = sb(json!({ "mode": "all", "docker": { "network": "bridge" } }));
    let r = resolve(Some(&d), Some(&a));
    assert_eq!(r.mode, SandboxMode::All);
    assert_eq!(r.mode_key.as_deref(), Some("agents.list[0].sandbox.mode"));
    assert_eq!(r.workspace_access, WorkspaceAccess::Ro);
    assert_eq!(r.backend, "ssh");
    assert_eq!(r.workspace_root, PathBuf::from("/home/u/boxes"));
    assert_eq!(r.docker.image, "g");
    assert_eq!(r.docker.network, "bridge");
    let r = resolve(Some(&d), None);
    assert_eq!(r.mode_key.as_deref(), Some("agents.defaults.sandbox.mode"));
    // A relative root is under the state dir; a blank backend is docker.
    let d = sb(json!({ "workspaceRoot": "rel/dir", "backend": "  " }));
    let r = resolve(Some(&d), None);
    assert_eq!(r.workspace_root, PathBuf::from("/state/rel/dir"));
    assert_eq!(r.backend, "docker");
}

#[test]
fn legacy_per_session_and_scope_precedence() {
    assert_eq!(
        resolve(Some(&sb(json!({ "perSession": true }))), None).scope,
        SandboxScope::Session
    );
    assert_eq!(
        resolve(Some(&sb(json!({ "perSession": false }))), None).scope,
        SandboxScope::Shared
    );
    // An explicit scope (even the defaults') wins over perSession.
    assert_eq!(
        resolve(
            Some(&sb(json!({ "scope": "agent" }))),
            Some(&sb(json!({ "perSession": true })))
        )
        .scope,
        SandboxScope::Agent
    );
}

#[test]
fn shared_scope_ignores_the_agents_docker_block() {
    let d = sb(json!({ "docker": { "binds": ["/g:/g"] } }));
    let a = sb(json!({ "scope": "shared", "docker": { "network": "host", "binds": ["/a:/a"] } }));
    let r = resolve(Some(&d), Some(&a));
    assert_eq!(r.scope, SandboxScope::Shared);
    assert_eq!(r.docker.network, "none");
    assert_eq!(r.docker.binds, vec!["/g:/g"]);
    assert_eq!(r.docker_origins.agent_key, None);
    // Not shared: the agent block applies.
    let a = sb(json!({ "scope": "session", "docker": { "binds": ["/a:/a"] } }));
    let r = resolve(Some(&d), Some(&a));
    assert_eq!(r.docker.binds, vec!["/g:/g", "/a:/a"]);
    assert_eq!(
        r.docker_origins.bind_key(1),
        "agents.list[0].sandbox.docker.binds[0]"
    );
}

#[test]
fn should_sandbox_by_mode_and_session() {
    let off = resolve(None, None);
    let all = resolve(Some(&sb(json!({ "mode": "all" }))), None);
    let non_main = resolve(Some(&sb(json!({ "mode": "non-main" }))), None);
    for key in ["main", "agent:main:telegram:group:1"] {
        assert!(!off.should_sandbox(key));
        assert!(all.should_sandbox(key));
    }
    // Aliases of the main session are main.
    for key in ["main", " MAIN ", "", "agent:main:main", "Agent:Main:Main"] {
        assert!(!non_main.should_sandbox(key), "{key:?} is main");
    }
    // Group, channel, DM and other agents' sessions are not.
    for key in [
        "agent:main:telegram:group:-100123",
        "agent:main:discord:channel:42",
        "agent:main:whatsapp:dm:+15550100",
        "agent:ops:main",
        "mainly",
    ] {
        assert!(non_main.should_sandbox(key), "{key:?} is not main");
    }
    // `session.mainKey` moves the main session; `main` stays an alias.
    let custom = non_main
        .clone()
        .with_main_session(MainSession::new(Some("work"), false));
    assert!(!custom.should_sandbox("agent:main:work"));
    assert!(!custom.should_sandbox("agent:main:main"));
    assert!(custom.should_sandbox("agent:main:telegram:group:1"));
    let global = non_main.with_main_session(MainSession::new(None, true));
    assert!(!global.should_sandbox("global"));
    assert!(!global.should_sandbox("main"));
    assert!(global.should_sandbox("agent:main:discord:channel:42"));
}

#[test]
fn the_backend_key_names_where_it_was_set() {
    let r = resolve(None, None);
    assert_eq!(r.backend_key, None);
    assert_eq!(r.backend_config_key(), "agents.defaults.sandbox.backend");
    let r = resolve(Some(&sb(json!({ "backend": "ssh" }))), None);
    assert_eq!(
        r.backend_key.as_deref(),
        Some("agents.defaults.sandbox.backend")
    );
    let r = resolve(
        Some(&sb(json!({ "backend": "ssh" }))),
        Some(&sb(json!({ "backend": " custom " }))),
    );
    assert_eq!(r.backend, "custom");
    assert_eq!(
        r.backend_key.as_deref(),
        Some("agents.list[0].sandbox.backend")
    );
}

#[test]
fn tool_policy_comes_from_the_agents_tools() {
    let tools = ToolsConfig::default();
    let agent_tools = AgentToolsConfig {
        sandbox: Some(SandboxToolsSection {
            tools: Some(ToolPolicyConfig {
                allow: Some(vec!["read".to_owned()]),
                ..Default::default()
            }),
        }),
        ..Default::default()
    };
    let r = ResolvedSandboxConfig::resolve(&SandboxInputs {
        agent_id: "main",
        defaults: None,
        agent: None,
        agent_key: None,
        state_dir: Path::new("/s"),
        home: None,
        tools: &tools,
        agent_tools: Some(&agent_tools),
    });
    assert_eq!(r.tool_policy.allow_source, ListSource::Agent);
    assert!(r.tool_policy.allow.contains(&"read".to_owned()));
    assert!(!r.tool_policy.allow.contains(&"exec".to_owned()));
}
