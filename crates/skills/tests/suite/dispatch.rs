//! Skill command dispatch goes through every policy layer: a tool denied
//! at any single layer cannot be reached by a slash command.

use std::collections::BTreeMap;
use std::path::PathBuf;

use pretty_assertions::assert_eq;
use serde_json::json;
use talon_skills::{
    DispatchError, Eligibility, Skill, SkillFrontmatter, SkillSource, resolve_skill_command,
};
use talon_tool_policy::config::{
    AgentToolsConfig, GroupToolPolicyConfig, ProfiledPolicyConfig, SandboxToolsSection,
    ToolPolicyConfig, ToolsConfig,
};
use talon_tool_policy::{
    PolicyConfig, PolicyEngine, RunContext, SubagentKind, ToolEntry, ToolUniverse, Trigger,
};

fn skill(tool: &str) -> Skill {
    Skill {
        name: "run".into(),
        description: "Run a command".into(),
        source: SkillSource::Workspace,
        location: PathBuf::from("/ws/skills/run/SKILL.md"),
        version: "sha256:0000000000000000".into(),
        frontmatter: SkillFrontmatter {
            name: Some("run".into()),
            description: Some("Run a command".into()),
            user_invocable: true,
            command_dispatch: Some("tool".into()),
            command_tool: Some(tool.into()),
            command_arg_mode: Some("raw".into()),
            ..SkillFrontmatter::default()
        },
        eligibility: Eligibility {
            eligible: true,
            reasons: vec![],
        },
        shadows: vec![],
        warnings: vec![],
    }
}

fn deny(tools: &[&str]) -> Option<Vec<String>> {
    Some(tools.iter().map(|t| (*t).to_owned()).collect())
}

fn universe() -> ToolUniverse {
    ToolUniverse::core().with(ToolEntry::plugin("my.tool", "dotted"))
}

/// One case: a config and a context under which `tool` is removed by
/// exactly `layer`.
struct Case {
    layer: &'static str,
    tool: &'static str,
    tools: ToolsConfig,
    agent: Option<AgentToolsConfig>,
    ctx: RunContext,
}

fn cases() -> Vec<Case> {
    let base = || RunContext::new("main");
    let openai = || RunContext {
        model_provider: Some("openai".into()),
        ..base()
    };
    let mut by_provider_profile = BTreeMap::new();
    by_provider_profile.insert(
        "openai".to_owned(),
        ProfiledPolicyConfig {
            profile: Some("minimal".into()),
            ..Default::default()
        },
    );
    let mut by_provider_deny = BTreeMap::new();
    by_provider_deny.insert(
        "openai".to_owned(),
        ProfiledPolicyConfig {
            deny: deny(&["exec"]),
            ..Default::default()
        },
    );
    let mut groups = BTreeMap::new();
    groups.insert(
        "g1".to_owned(),
        GroupToolPolicyConfig {
            deny: deny(&["exec"]),
            ..Default::default()
        },
    );
    let mut senders = BTreeMap::new();
    senders.insert(
        "mallory".to_owned(),
        ToolPolicyConfig {
            deny: deny(&["exec"]),
            ..Default::default()
        },
    );
    vec![
        Case {
            layer: "message-provider",
            tool: "exec",
            tools: ToolsConfig::default(),
            agent: None,
            ctx: RunContext {
                message_provider: Some("node".into()),
                ..base()
            },
        },
        Case {
            layer: "model-provider",
            tool: "my.tool",
            tools: ToolsConfig::default(),
            agent: None,
            ctx: openai(),
        },
        Case {
            layer: "trigger",
            tool: "exec",
            tools: ToolsConfig::default(),
            agent: None,
            ctx: RunContext {
                trigger: Trigger::Memory,
                ..base()
            },
        },
        Case {
            layer: "profile",
            tool: "exec",
            tools: ToolsConfig {
                profile: Some("minimal".into()),
                ..Default::default()
            },
            agent: None,
            ctx: base(),
        },
        Case {
            layer: "provider-profile",
            tool: "exec",
            tools: ToolsConfig {
                by_provider: Some(by_provider_profile),
                ..Default::default()
            },
            agent: None,
            ctx: openai(),
        },
        Case {
            layer: "global",
            tool: "exec",
            tools: ToolsConfig {
                deny: deny(&["exec"]),
                ..Default::default()
            },
            agent: None,
            ctx: base(),
        },
        Case {
            layer: "global-provider",
            tool: "exec",
            tools: ToolsConfig {
                by_provider: Some(by_provider_deny.clone()),
                ..Default::default()
            },
            agent: None,
            ctx: openai(),
        },
        Case {
            layer: "agent",
            tool: "exec",
            tools: ToolsConfig::default(),
            agent: Some(AgentToolsConfig {
                deny: deny(&["exec"]),
                ..Default::default()
            }),
            ctx: base(),
        },
        Case {
            layer: "agent-provider",
            tool: "exec",
            tools: ToolsConfig::default(),
            agent: Some(AgentToolsConfig {
                by_provider: Some(by_provider_deny),
                ..Default::default()
            }),
            ctx: openai(),
        },
        Case {
            layer: "group",
            tool: "exec",
            tools: ToolsConfig {
                groups: Some(groups),
                ..Default::default()
            },
            agent: None,
            ctx: RunContext {
                group_id: Some("g1".into()),
                ..base()
            },
        },
        Case {
            layer: "sender",
            tool: "exec",
            tools: ToolsConfig {
                tools_by_sender: Some(senders),
                ..Default::default()
            },
            agent: None,
            ctx: RunContext {
                sender_id: Some("mallory".into()),
                ..base()
            },
        },
        Case {
            layer: "sandbox",
            tool: "exec",
            tools: ToolsConfig {
                sandbox: Some(SandboxToolsSection {
                    tools: Some(ToolPolicyConfig {
                        deny: deny(&["exec"]),
                        ..Default::default()
                    }),
                }),
                ..Default::default()
            },
            agent: None,
            ctx: RunContext {
                sandboxed: true,
                ..base()
            },
        },
        Case {
            layer: "owner-only",
            tool: "cron",
            tools: ToolsConfig::default(),
            agent: None,
            ctx: RunContext {
                sender_is_owner: Some(false),
                ..base()
            },
        },
        Case {
            layer: "subagent",
            tool: "cron",
            tools: ToolsConfig::default(),
            agent: None,
            ctx: RunContext {
                subagent: Some(SubagentKind::Orchestrator),
                ..base()
            },
        },
        Case {
            layer: "inherited",
            tool: "exec",
            tools: ToolsConfig::default(),
            agent: None,
            ctx: RunContext {
                inherited: Some(vec!["read".into()]),
                ..base()
            },
        },
    ]
}

#[test]
fn a_tool_denied_at_any_single_layer_cannot_be_dispatched() {
    let cases = cases();
    let layers: Vec<&str> = cases.iter().map(|c| c.layer).collect();
    assert_eq!(
        layers,
        talon_tool_policy::LAYER_IDS,
        "every layer has a case"
    );
    for case in cases {
        let mut agents = BTreeMap::new();
        if let Some(a) = case.agent {
            agents.insert("main".to_owned(), a);
        }
        let engine = PolicyEngine::new(&PolicyConfig {
            channels: Default::default(),
            tools: case.tools,
            agents,
            agent_keys: Default::default(),
            plugins: None,
        })
        .unwrap();
        // The same pipeline the run's table uses removes the tool...
        let outcome = engine.evaluate(&case.ctx, &universe());
        assert!(
            !outcome.allows(case.tool),
            "{}: the setup does not remove {}",
            case.layer,
            case.tool
        );
        // ...and dispatch cannot reach it, naming that layer.
        match resolve_skill_command(
            &skill(case.tool),
            "/run",
            "ls -la",
            &engine,
            &case.ctx,
            &universe(),
        ) {
            Err(DispatchError::Denied {
                removed_by, tool, ..
            }) => {
                assert_eq!(removed_by.layer, case.layer, "tool {tool}");
            }
            other => panic!("{}: dispatch reached {}: {other:?}", case.layer, case.tool),
        }
    }
}

#[test]
fn an_allowed_tool_gets_openclaws_dispatch_params() {
    let engine = PolicyEngine::new(&PolicyConfig::default()).unwrap();
    let call = resolve_skill_command(
        &skill("Bash"),
        "/run",
        "ls -la",
        &engine,
        &RunContext::new("main"),
        &universe(),
    )
    .unwrap();
    assert_eq!(call.tool, "exec");
    assert_eq!(
        serde_json::Value::Object(call.params),
        json!({"command": "ls -la", "commandName": "run", "skillName": "run"})
    );
}

#[test]
fn non_dispatching_uninvocable_ineligible_and_odd_modes_are_refused() {
    let engine = PolicyEngine::new(&PolicyConfig::default()).unwrap();
    let ctx = RunContext::new("main");
    let mut s = skill("exec");
    s.frontmatter.command_dispatch = None;
    assert!(matches!(
        resolve_skill_command(&s, "/run", "", &engine, &ctx, &universe()),
        Err(DispatchError::NotDispatching { .. })
    ));
    let mut s = skill("exec");
    s.frontmatter.user_invocable = false;
    assert!(matches!(
        resolve_skill_command(&s, "/run", "", &engine, &ctx, &universe()),
        Err(DispatchError::NotUserInvocable { .. })
    ));
    let mut s = skill("exec");
    s.eligibility = Eligibility {
        eligible: false,
        reasons: vec!["missing binary: ffmpeg".into()],
    };
    assert!(matches!(
        resolve_skill_command(&s, "/run", "", &engine, &ctx, &universe()),
        Err(DispatchError::Ineligible { .. })
    ));
    let mut s = skill("exec");
    s.frontmatter.command_arg_mode = Some("parsed".into());
    assert!(matches!(
        resolve_skill_command(&s, "/run", "", &engine, &ctx, &universe()),
        Err(DispatchError::UnsupportedArgMode { .. })
    ));
    let mut s = skill("exec");
    s.frontmatter.command_tool = Some("  ".into());
    assert!(matches!(
        resolve_skill_command(&s, "/run", "", &engine, &ctx, &universe()),
        Err(DispatchError::MissingTool { .. })
    ));
}
