use pretty_assertions::assert_eq;

use super::*;

fn viewer(sandboxed: bool) -> Viewer<'static> {
    Viewer {
        session_key: "agent:ops:main",
        agent_id: "ops",
        sandboxed,
    }
}

fn target(key: &'static str, agent: &'static str, tree: bool) -> Target<'static> {
    Target {
        session_key: key,
        agent_id: agent,
        in_viewer_tree: tree,
    }
}

fn policy(visibility: Visibility) -> VisibilityPolicy {
    VisibilityPolicy {
        visibility,
        ..VisibilityPolicy::default()
    }
}

#[test]
fn the_default_is_the_tree_with_the_sandbox_clamp() {
    let p = VisibilityPolicy::default();
    assert_eq!(p.visibility, Visibility::Tree);
    assert_eq!(p.sandbox, SandboxVisibility::Spawned);
    assert!(!p.agent_to_agent.enabled);
}

#[test]
fn each_visibility_shows_exactly_its_sessions() {
    let own = target("agent:ops:main", "ops", false);
    let child = target("agent:ops:subagent:1", "ops", true);
    let sibling = target("agent:ops:gw:2", "ops", false);
    let other_agent = target("agent:dev:main", "dev", false);
    let table = [
        (Visibility::SelfOnly, [true, false, false, false]),
        (Visibility::Tree, [true, true, false, false]),
        (Visibility::Agent, [true, true, true, false]),
    ];
    for (vis, want) in table {
        let p = policy(vis);
        let got: Vec<bool> = [own, child, sibling, other_agent]
            .into_iter()
            .map(|t| p.check(viewer(false), t).is_ok())
            .collect();
        assert_eq!(got, want.to_vec(), "{vis:?}");
    }
}

#[test]
fn all_still_needs_agent_to_agent_for_another_agent() {
    let mut p = policy(Visibility::All);
    let other = target("agent:dev:main", "dev", false);
    let err = p.check(viewer(false), other).unwrap_err();
    assert_eq!(err.code(), "session.agent_to_agent_denied");
    assert!(
        err.to_string().contains("tools.agentToAgent.enabled"),
        "{err}"
    );
    p.agent_to_agent = AgentToAgent {
        enabled: true,
        allow: vec!["ops".into()],
    };
    let err = p.check(viewer(false), other).unwrap_err();
    assert!(err.to_string().contains("target agent `dev`"), "{err}");
    p.agent_to_agent.allow.push("DEV".into());
    assert!(p.check(viewer(false), other).is_ok());
    p.agent_to_agent.allow = vec!["*".into()];
    assert!(p.check(viewer(false), other).is_ok());
    // Same agent, not in the tree: visible under `all` without the rule.
    p.agent_to_agent = AgentToAgent::default();
    assert!(
        p.check(viewer(false), target("agent:ops:x", "ops", false))
            .is_ok()
    );
}

#[test]
fn a_sandboxed_session_is_clamped_to_its_tree_unless_configured() {
    let mut p = policy(Visibility::All);
    let sibling = target("agent:ops:gw:2", "ops", false);
    let err = p.check(viewer(true), sibling).unwrap_err();
    assert_eq!(err.code(), "session.not_visible");
    assert!(err.to_string().contains("sandboxed"), "{err}");
    assert!(
        p.check(viewer(true), target("agent:ops:c", "ops", true))
            .is_ok()
    );
    p.sandbox = SandboxVisibility::All;
    assert!(p.check(viewer(true), sibling).is_ok());
    // The clamp never widens: `self` stays `self` when sandboxed.
    let p = policy(Visibility::SelfOnly);
    assert_eq!(p.effective(true), (Visibility::SelfOnly, false));
}

#[test]
fn visibility_values_round_trip_through_config_text() {
    for v in [
        Visibility::SelfOnly,
        Visibility::Tree,
        Visibility::Agent,
        Visibility::All,
    ] {
        let text = serde_json::to_string(&v).unwrap();
        assert_eq!(text, format!("\"{}\"", v.as_str()));
        assert_eq!(serde_json::from_str::<Visibility>(&text).unwrap(), v);
    }
    assert!(serde_json::from_str::<Visibility>("\"everyone\"").is_err());
    assert!(serde_json::from_str::<AgentToAgent>(r#"{"enabled": true, "alow": []}"#).is_err());
}
