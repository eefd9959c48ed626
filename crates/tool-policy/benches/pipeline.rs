//! Policy pipeline benchmarks: the full catalog plus 200 plugin/MCP tools
//! through every layer, and one `check` of a single tool.

use std::collections::BTreeMap;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use talon_tool_policy::config::{
    AgentToolsConfig, ChannelGroupToolsConfig, ChannelToolsConfig, GroupToolPolicyConfig,
    ProfiledPolicyConfig, SandboxToolsSection, SubagentsToolsSection, ToolPolicyConfig,
    ToolsConfig,
};
use talon_tool_policy::{
    PolicyConfig, PolicyEngine, RunContext, SubagentKind, ToolEntry, ToolUniverse,
};

fn s(v: &[&str]) -> Option<Vec<String>> {
    Some(v.iter().map(|x| x.to_string()).collect())
}

fn config() -> PolicyConfig {
    let mut by_provider = BTreeMap::new();
    by_provider.insert(
        "openai".to_owned(),
        ProfiledPolicyConfig {
            profile: Some("full".into()),
            deny: s(&["tts"]),
            ..Default::default()
        },
    );
    let mut groups = BTreeMap::new();
    groups.insert(
        "*".to_owned(),
        GroupToolPolicyConfig {
            deny: s(&["browser"]),
            ..Default::default()
        },
    );
    let mut senders = BTreeMap::new();
    senders.insert(
        "*".to_owned(),
        ToolPolicyConfig {
            deny: s(&["canvas"]),
            ..Default::default()
        },
    );
    let mut agents = BTreeMap::new();
    agents.insert(
        "main".to_owned(),
        AgentToolsConfig {
            also_allow: s(&["plugin_*"]),
            deny: s(&["nodes"]),
            by_provider: Some(by_provider.clone()),
            ..Default::default()
        },
    );
    // A channel section like an imported OpenClaw file's: the run's group
    // is listed, with a sender table to search.
    let mut group_senders = BTreeMap::new();
    for i in 0..20 {
        group_senders.insert(
            format!("id:user{i}"),
            ToolPolicyConfig {
                deny: s(&["cron"]),
                ..Default::default()
            },
        );
    }
    let mut channel_groups = BTreeMap::new();
    channel_groups.insert(
        "g".to_owned(),
        ChannelGroupToolsConfig {
            tools: Some(ToolPolicyConfig {
                deny: s(&["gateway"]),
                ..Default::default()
            }),
            tools_by_sender: Some(group_senders),
        },
    );
    let channels = BTreeMap::from([(
        "telegram".to_owned(),
        ChannelToolsConfig {
            groups: Some(channel_groups),
            ..Default::default()
        },
    )]);
    PolicyConfig {
        channels,
        tools: ToolsConfig {
            profile: Some("coding".into()),
            also_allow: s(&["bundle-mcp", "group:plugins"]),
            deny: s(&["x_search"]),
            by_provider: Some(by_provider),
            groups: Some(groups),
            tools_by_sender: Some(senders),
            sandbox: Some(SandboxToolsSection {
                tools: Some(ToolPolicyConfig {
                    also_allow: s(&["bundle-mcp", "web_*"]),
                    ..Default::default()
                }),
            }),
            subagents: Some(SubagentsToolsSection {
                tools: Some(ToolPolicyConfig {
                    deny: s(&["plugin_7*"]),
                    ..Default::default()
                }),
            }),
            ..Default::default()
        },
        agents,
        agent_keys: Default::default(),
        plugins: None,
    }
}

fn universe() -> ToolUniverse {
    let mut u = ToolUniverse::core();
    for i in 0..100 {
        u.push(ToolEntry::mcp(
            &format!("srv{}__tool_{i}", i % 5),
            &format!("srv{}", i % 5),
        ));
        u.push(ToolEntry::plugin(
            &format!("plugin_{i}"),
            &format!("plug{}", i % 10),
        ));
    }
    u
}

fn context() -> RunContext {
    let mut ctx = RunContext::new("main");
    ctx.model_provider = Some("openai".into());
    ctx.model = Some("gpt-5".into());
    ctx.group_id = Some("g".into());
    ctx.message_provider = Some("telegram".into());
    ctx.sender_id = Some("s".into());
    ctx.sender_is_owner = Some(false);
    ctx.sandboxed = true;
    ctx.subagent = Some(SubagentKind::Orchestrator);
    let parent: Vec<String> = universe().tools().iter().map(|t| t.name.clone()).collect();
    ctx.inherited = Some(parent);
    ctx
}

fn bench(c: &mut Criterion) {
    let cfg = config();
    let engine = PolicyEngine::new(&cfg).unwrap_or_else(|e| panic!("{e}"));
    let u = universe();
    let ctx = context();
    let survivors = engine.evaluate(&ctx, &u).tools.len();
    assert!(
        survivors > 100,
        "the benchmark config should keep most tools, kept {survivors}"
    );

    c.bench_function("policy/compile_config", |b| {
        b.iter(|| PolicyEngine::new(black_box(&cfg)))
    });
    c.bench_function("policy/evaluate_242_tools_all_layers", |b| {
        b.iter(|| engine.evaluate(black_box(&ctx), black_box(&u)))
    });
    c.bench_function("policy/check_one_tool", |b| {
        b.iter(|| engine.check(black_box(&ctx), black_box(&u), black_box("srv3__tool_42")))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
