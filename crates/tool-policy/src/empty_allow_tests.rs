use std::collections::BTreeMap;

use crate::config::{
    AgentToolsConfig, GroupToolPolicyConfig, PolicyConfig, ProfiledPolicyConfig,
    SandboxToolsSection, SubagentsToolsSection, ToolPolicyConfig, ToolsConfig,
};
use crate::{PolicyEngine, PolicyError};

fn s(items: &[&str]) -> Vec<String> {
    items.iter().map(|x| (*x).to_owned()).collect()
}

fn empty() -> Option<Vec<String>> {
    Some(Vec::new())
}

fn policy_empty() -> ToolPolicyConfig {
    ToolPolicyConfig {
        allow: empty(),
        ..Default::default()
    }
}

#[test]
fn every_place_an_allow_list_can_be_written_is_checked() {
    let tools = ToolsConfig {
        allow: empty(),
        by_provider: Some(BTreeMap::from([(
            "openai".to_owned(),
            ProfiledPolicyConfig {
                allow: Some(s(&["  ", ""])),
                ..Default::default()
            },
        )])),
        groups: Some(BTreeMap::from([(
            "g1".to_owned(),
            GroupToolPolicyConfig {
                allow: empty(),
                tools_by_sender: Some(BTreeMap::from([("bob".to_owned(), policy_empty())])),
                ..Default::default()
            },
        )])),
        tools_by_sender: Some(BTreeMap::from([("*".to_owned(), policy_empty())])),
        sandbox: Some(SandboxToolsSection {
            tools: Some(policy_empty()),
        }),
        subagents: Some(SubagentsToolsSection {
            tools: Some(policy_empty()),
        }),
        ..Default::default()
    };
    let agent = AgentToolsConfig {
        allow: empty(),
        sandbox: Some(SandboxToolsSection {
            tools: Some(policy_empty()),
        }),
        ..Default::default()
    };
    let config = PolicyConfig {
        channels: Default::default(),
        tools,
        agents: BTreeMap::from([("coder".to_owned(), agent)]),
        agent_keys: Default::default(),
        plugins: None,
    };
    assert_eq!(
        crate::empty_allow_keys(&config),
        vec![
            "tools.allow",
            "tools.byProvider.openai.allow",
            "tools.groups.g1.allow",
            "tools.groups.g1.toolsBySender.bob.allow",
            "tools.toolsBySender.*.allow",
            "tools.sandbox.tools.allow",
            "tools.subagents.tools.allow",
            "agents.coder.tools.allow",
            "agents.coder.tools.sandbox.tools.allow",
        ]
    );
}

#[test]
fn the_engine_refuses_an_empty_allow_even_with_also_allow() {
    let config = PolicyConfig {
        channels: Default::default(),
        tools: ToolsConfig {
            allow: empty(),
            also_allow: Some(s(&["read"])),
            ..Default::default()
        },
        agents: BTreeMap::new(),
        agent_keys: Default::default(),
        plugins: None,
    };
    let err = PolicyEngine::new(&config).unwrap_err();
    assert_eq!(
        err,
        PolicyError::EmptyAllow {
            key: "tools.allow".to_owned()
        }
    );
    let text = err.to_string();
    assert!(text.contains("Remove the key"), "{text}");
    assert!(text.contains("deny: [\"*\"]"), "{text}");
}

#[test]
fn non_empty_lists_and_absent_lists_pass() {
    let config = PolicyConfig {
        channels: Default::default(),
        tools: ToolsConfig {
            allow: Some(s(&["read"])),
            also_allow: empty(),
            deny: empty(),
            ..Default::default()
        },
        agents: BTreeMap::from([("a".to_owned(), AgentToolsConfig::default())]),
        agent_keys: Default::default(),
        plugins: None,
    };
    assert!(crate::empty_allow_keys(&config).is_empty());
    assert!(PolicyEngine::new(&config).is_ok());
}
