use pretty_assertions::assert_eq;
use talon_config::{SandboxMode, SandboxScope, WorkspaceAccess, load};

use super::fixture;

#[test]
fn a_whole_openclaw_config_loads_with_notices() {
    let loaded = load(&fixture("openclaw-full.json5")).unwrap();
    let config = &loaded.config;

    let tools = config.tools.as_ref().unwrap();
    assert_eq!(tools.profile.as_deref(), Some("coding"));
    assert_eq!(
        tools.deny,
        Some(vec!["gateway".to_owned(), "group:ui".to_owned()])
    );
    assert!(
        tools
            .by_provider
            .as_ref()
            .unwrap()
            .contains_key("openai/gpt-5")
    );

    assert_eq!(config.agent_ids(), vec!["main", "work"]);
    assert_eq!(config.default_agent_id(), "main");
    let policy = config.policy_config();
    assert_eq!(
        policy.agents["work"].allow,
        Some(vec![
            "read".to_owned(),
            "exec".to_owned(),
            "group:fs".to_owned()
        ])
    );
    assert_eq!(policy.agents["main"].profile.as_deref(), Some("full"));

    let work = config.resolved_sandbox("work");
    assert_eq!(
        (work.mode, work.scope, work.workspace_access),
        (SandboxMode::All, SandboxScope::Session, WorkspaceAccess::Rw)
    );
    let main = config.resolved_sandbox("main");
    assert_eq!(
        (
            main.mode,
            main.scope,
            main.workspace_access,
            main.backend.as_str()
        ),
        (
            SandboxMode::NonMain,
            SandboxScope::Agent,
            WorkspaceAccess::None,
            "docker"
        )
    );

    let notices: Vec<String> = loaded.notices.iter().map(ToString::to_string).collect();
    insta::assert_snapshot!("openclaw_full_notices", notices.join("\n"));
    // A channel's settings are dropped, its tool policies kept.
    assert!(
        loaded
            .notices
            .iter()
            .any(|n| n.key_path == "channels.telegram" && n.message.contains("`botToken`"))
    );
    for section in [
        "models", "auth", "messages", "hooks", "bindings", "meta", "wizard",
    ] {
        let n = loaded
            .notices
            .iter()
            .find(|n| n.key_path == section)
            .unwrap_or_else(|| panic!("no notice for {section}"));
        assert_eq!(n.message, "OpenClaw section not used by Talon (ignored)");
    }
    // `commands` is read for its owner list only: its other keys are
    // dropped one by one.
    assert!(
        loaded
            .notices
            .iter()
            .any(|n| n.key_path == "commands.native" && n.message.contains("no chat commands"))
    );
    // The skills section is typed now: no notice, and its values are read.
    assert!(!loaded.notices.iter().any(|n| n.key_path == "skills"));
    let skills = loaded.config.skills_config();
    assert_eq!(
        skills.load.and_then(|l| l.extra_dirs),
        Some(vec!["~/skills".to_owned()])
    );
}

#[test]
fn the_seed_entries_form_loads() {
    let loaded = load(&fixture("seed-001-entries.json5")).unwrap();
    assert_eq!(loaded.config.default_agent_id(), "maintenance-agent");
    assert_eq!(
        loaded
            .config
            .agent("maintenance-agent")
            .and_then(|a| a.workspace)
            .as_deref(),
        Some("~/.openclaw/workspace-maintenance")
    );
    let paths: Vec<&str> = loaded.notices.iter().map(|n| n.key_path.as_str()).collect();
    assert_eq!(paths, vec!["bindings", "plugins.load"]);
}
