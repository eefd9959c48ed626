//! Property tests: no layer widens the set, deny wins, and the order of
//! entries inside a list does not matter.

use std::collections::{BTreeMap, HashSet};

use proptest::prelude::*;
use talon_tool_policy::config::{
    AgentToolsConfig, GroupToolPolicyConfig, ProfiledPolicyConfig, SandboxToolsSection,
    SubagentsToolsSection, ToolPolicyConfig, ToolsConfig,
};
use talon_tool_policy::{
    PolicyConfig, PolicyEngine, RunContext, SubagentKind, ToolEntry, ToolUniverse,
};

const POOL: &[&str] = &[
    "read",
    "write",
    "edit",
    "apply_patch",
    "exec",
    "bash",
    "process",
    "web_fetch",
    "web_search",
    "cron",
    "gateway",
    "browser",
    "image",
    "message",
    "sessions_spawn",
    "session_status",
    "group:fs",
    "group:runtime",
    "group:web",
    "group:sessions",
    "group:openclaw",
    "group:plugins",
    "bundle-mcp",
    "honcho",
    "sessions_*",
    "*_search",
    "*",
    "srv__*",
    "nope",
];

fn universe() -> ToolUniverse {
    ToolUniverse::core()
        .with(ToolEntry::mcp("srv__query", "srv"))
        .with(ToolEntry::mcp("srv__write", "srv"))
        .with(ToolEntry::plugin("honcho_recall", "honcho"))
        .with(ToolEntry::plugin("other_tool", "other"))
}

fn list() -> impl Strategy<Value = Option<Vec<String>>> {
    prop::option::weighted(
        0.5,
        prop::collection::vec(prop::sample::select(POOL).prop_map(str::to_owned), 0..5),
    )
}

/// An allow list: absent or non-empty (an empty one is refused by
/// `PolicyEngine::new`, tested on its own).
fn allow_list() -> impl Strategy<Value = Option<Vec<String>>> {
    prop::option::weighted(
        0.5,
        prop::collection::vec(prop::sample::select(POOL).prop_map(str::to_owned), 1..5),
    )
}

fn policy() -> impl Strategy<Value = ToolPolicyConfig> {
    (allow_list(), list(), list()).prop_map(|(allow, also_allow, deny)| ToolPolicyConfig {
        allow,
        also_allow,
        deny,
    })
}

fn profile() -> impl Strategy<Value = Option<String>> {
    prop::option::of(
        prop::sample::select(&["minimal", "coding", "messaging", "full"][..])
            .prop_map(str::to_owned),
    )
}

fn profiled() -> impl Strategy<Value = ProfiledPolicyConfig> {
    (profile(), policy()).prop_map(|(profile, p)| ProfiledPolicyConfig {
        profile,
        allow: p.allow,
        also_allow: p.also_allow,
        deny: p.deny,
    })
}

prop_compose! {
    fn config()(
        profile in profile(),
        global in policy(),
        provider in profiled(),
        agent_profile in profile(),
        agent in policy(),
        agent_provider in profiled(),
        group in policy(),
        channel_group in policy(),
        sender in policy(),
        sandbox in policy(),
        agent_sandbox in prop::option::of(policy()),
        subagents in policy(),
    ) -> PolicyConfig {
        let mut by_provider = BTreeMap::new();
        by_provider.insert("openai".to_owned(), provider);
        let mut agent_by_provider = BTreeMap::new();
        agent_by_provider.insert("openai".to_owned(), agent_provider);
        let mut groups = BTreeMap::new();
        groups.insert("*".to_owned(), GroupToolPolicyConfig {
            allow: group.allow, also_allow: group.also_allow, deny: group.deny, tools_by_sender: None,
        });
        let mut senders = BTreeMap::new();
        senders.insert("*".to_owned(), sender);
        let mut agents = BTreeMap::new();
        agents.insert("main".to_owned(), AgentToolsConfig {
            profile: agent_profile,
            allow: agent.allow,
            also_allow: agent.also_allow,
            deny: agent.deny,
            by_provider: Some(agent_by_provider),
            sandbox: agent_sandbox.map(|t| SandboxToolsSection { tools: Some(t) }),
            tools_by_sender: None,
        });
        // An imported channel section: the run's group has its own policy.
        let channel = talon_tool_policy::config::ChannelToolsConfig {
            groups: Some(BTreeMap::from([(
                "g".to_owned(),
                talon_tool_policy::config::ChannelGroupToolsConfig {
                    tools: Some(channel_group),
                    tools_by_sender: None,
                },
            )])),
            ..Default::default()
        };
        PolicyConfig {
            channels: BTreeMap::from([("telegram".to_owned(), channel)]),
            tools: ToolsConfig {
                profile,
                allow: global.allow,
                also_allow: global.also_allow,
                deny: global.deny,
                by_provider: Some(by_provider),
                groups: Some(groups),
                tools_by_sender: Some(senders),
                sandbox: Some(SandboxToolsSection { tools: Some(sandbox) }),
                subagents: Some(SubagentsToolsSection { tools: Some(subagents) }),
            },
            agents,
            agent_keys: Default::default(),
            plugins: None,
        }
    }
}

prop_compose! {
    fn context()(
        sandboxed in any::<bool>(),
        owner in prop::option::of(any::<bool>()),
        sub in prop::option::of(prop::bool::ANY.prop_map(|leaf| if leaf { SubagentKind::Leaf } else { SubagentKind::Orchestrator })),
        inherited in prop::option::weighted(0.3, prop::collection::vec(prop::sample::select(POOL).prop_map(str::to_owned), 0..8)),
    ) -> RunContext {
        let mut ctx = RunContext::new("main");
        ctx.model_provider = Some("openai".into());
        ctx.group_id = Some("g".into());
        ctx.message_provider = Some("telegram".into());
        ctx.sender_id = Some("s".into());
        ctx.sandboxed = sandboxed;
        ctx.sender_is_owner = owner;
        ctx.subagent = sub;
        ctx.inherited = inherited;
        ctx
    }
}

fn reversed(l: &Option<Vec<String>>) -> Option<Vec<String>> {
    l.as_ref().map(|v| v.iter().rev().cloned().collect())
}

fn reverse_policy(p: &mut ToolPolicyConfig) {
    p.allow = reversed(&p.allow);
    p.also_allow = reversed(&p.also_allow);
    p.deny = reversed(&p.deny);
}

fn reverse_profiled(p: &mut ProfiledPolicyConfig) {
    p.allow = reversed(&p.allow);
    p.also_allow = reversed(&p.also_allow);
    p.deny = reversed(&p.deny);
}

fn reverse_all(cfg: &PolicyConfig) -> PolicyConfig {
    let mut c = cfg.clone();
    let t = &mut c.tools;
    t.allow = reversed(&t.allow);
    t.also_allow = reversed(&t.also_allow);
    t.deny = reversed(&t.deny);
    for p in t.by_provider.iter_mut().flat_map(|m| m.values_mut()) {
        reverse_profiled(p);
    }
    for g in t.groups.iter_mut().flat_map(|m| m.values_mut()) {
        g.allow = reversed(&g.allow);
        g.also_allow = reversed(&g.also_allow);
        g.deny = reversed(&g.deny);
    }
    for p in t.tools_by_sender.iter_mut().flat_map(|m| m.values_mut()) {
        reverse_policy(p);
    }
    if let Some(p) = t.sandbox.as_mut().and_then(|s| s.tools.as_mut()) {
        reverse_policy(p);
    }
    if let Some(p) = t.subagents.as_mut().and_then(|s| s.tools.as_mut()) {
        reverse_policy(p);
    }
    for a in c.agents.values_mut() {
        a.allow = reversed(&a.allow);
        a.also_allow = reversed(&a.also_allow);
        a.deny = reversed(&a.deny);
        for p in a.by_provider.iter_mut().flat_map(|m| m.values_mut()) {
            reverse_profiled(p);
        }
        if let Some(p) = a.sandbox.as_mut().and_then(|s| s.tools.as_mut()) {
            reverse_policy(p);
        }
    }
    c
}

fn add_deny(list: &mut Option<Vec<String>>, entry: &str) {
    list.get_or_insert_with(Vec::new).push(entry.to_owned());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    /// Each layer removes only tools that reached it, nothing comes back,
    /// and the final list is the universe minus every removal, in order.
    #[test]
    fn no_layer_widens(cfg in config(), ctx in context()) {
        let engine = PolicyEngine::new(&cfg).unwrap();
        let u = universe();
        let out = engine.evaluate(&ctx, &u);
        let mut alive: Vec<String> = u.tools().iter().map(|t| t.name.clone()).collect();
        for layer in &out.layers {
            let before: HashSet<String> = alive.iter().cloned().collect();
            for r in &layer.removed {
                prop_assert!(before.contains(&r.tool), "layer {} removed {} which it never saw", layer.id, r.tool);
            }
            let removed: HashSet<&String> = layer.removed.iter().map(|r| &r.tool).collect();
            alive.retain(|t| !removed.contains(t));
        }
        prop_assert_eq!(&alive, &out.tools);
    }

    /// Adding a deny entry to any non-sandbox layer never adds a tool.
    /// (A configured sandbox deny replaces the default deny list wholesale,
    /// which is OpenClaw's documented exception.)
    #[test]
    fn adding_a_deny_never_widens(cfg in config(), ctx in context(), entry in prop::sample::select(POOL), layer in 0usize..7) {
        let before = PolicyEngine::new(&cfg).unwrap().evaluate(&ctx, &universe());
        let mut c = cfg.clone();
        match layer {
            0 => add_deny(&mut c.tools.deny, entry),
            1 => if let Some(p) = c.tools.by_provider.as_mut().and_then(|m| m.get_mut("openai")) { add_deny(&mut p.deny, entry) },
            2 => if let Some(a) = c.agents.get_mut("main") { add_deny(&mut a.deny, entry) },
            3 => if let Some(g) = c.tools.groups.as_mut().and_then(|m| m.get_mut("*")) { add_deny(&mut g.deny, entry) },
            4 => if let Some(p) = c.tools.tools_by_sender.as_mut().and_then(|m| m.get_mut("*")) { add_deny(&mut p.deny, entry) },
            5 => if let Some(p) = c.tools.subagents.as_mut().and_then(|s| s.tools.as_mut()) { add_deny(&mut p.deny, entry) },
            _ => if let Some(a) = c.agents.get_mut("main").and_then(|a| a.by_provider.as_mut()).and_then(|m| m.get_mut("openai")) { add_deny(&mut a.deny, entry) },
        }
        let after = PolicyEngine::new(&c).unwrap().evaluate(&ctx, &universe());
        let before: HashSet<&String> = before.tools.iter().collect();
        for t in &after.tools {
            prop_assert!(before.contains(t), "denying {} at layer {} added {}", entry, layer, t);
        }
    }

    /// A tool denied at an active layer never survives, whatever any allow
    /// list at any layer says.
    #[test]
    fn deny_wins(cfg in config(), ctx in context(), tool in prop::sample::select(&["read", "exec", "web_fetch", "srv__query", "honcho_recall", "image"][..])) {
        let mut c = cfg.clone();
        add_deny(&mut c.tools.deny, tool);
        for list in [&mut c.tools.allow, &mut c.tools.also_allow] {
            list.get_or_insert_with(Vec::new).push(tool.to_owned());
        }
        let out = PolicyEngine::new(&c).unwrap().evaluate(&ctx, &universe());
        prop_assert!(!out.allows(tool));
        let earlier = out.layers.iter().take_while(|l| l.id != "global").any(|l| l.removed.iter().any(|r| r.tool == tool));
        if !earlier {
            let by = out.removed_by(tool).unwrap();
            prop_assert_eq!(by.layer.as_str(), "global");
            prop_assert_eq!(by.config_key.as_str(), "tools.deny");
        }
    }

    /// Reversing every list gives the same tools, removed by the same layers.
    #[test]
    fn order_within_lists_does_not_matter(cfg in config(), ctx in context()) {
        let a = PolicyEngine::new(&cfg).unwrap().evaluate(&ctx, &universe());
        let b = PolicyEngine::new(&reverse_all(&cfg)).unwrap().evaluate(&ctx, &universe());
        prop_assert_eq!(&a.tools, &b.tools);
        for (la, lb) in a.layers.iter().zip(&b.layers) {
            let ra: HashSet<&String> = la.removed.iter().map(|r| &r.tool).collect();
            let rb: HashSet<&String> = lb.removed.iter().map(|r| &r.tool).collect();
            prop_assert_eq!(ra, rb, "layer {}", la.id);
        }
    }

    /// `check` agrees with `evaluate` for every candidate tool.
    #[test]
    fn check_agrees_with_evaluate(cfg in config(), ctx in context()) {
        let engine = PolicyEngine::new(&cfg).unwrap();
        let u = universe();
        let out = engine.evaluate(&ctx, &u);
        for t in u.tools() {
            let c = engine.check(&ctx, &u, &t.name);
            prop_assert_eq!(c.allowed, out.allows(&t.name), "{}", t.name);
            prop_assert_eq!(c.removed_by, out.removed_by(&t.name));
        }
    }
}
