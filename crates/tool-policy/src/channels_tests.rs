use std::collections::BTreeMap;

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::config::{AgentToolsConfig, ChannelToolsConfig, PolicyConfig, ToolsConfig};
use crate::{PolicyEngine, PolicyError, RunContext, ToolUniverse};

fn channels(v: serde_json::Value) -> BTreeMap<String, ChannelToolsConfig> {
    serde_json::from_value(v).unwrap()
}

fn engine_with(channels_json: serde_json::Value, tools: ToolsConfig) -> PolicyEngine {
    PolicyEngine::new(&PolicyConfig {
        tools,
        channels: channels(channels_json),
        ..PolicyConfig::default()
    })
    .unwrap()
}

fn engine(channels_json: serde_json::Value) -> PolicyEngine {
    engine_with(channels_json, ToolsConfig::default())
}

fn run(provider: &str, group: Option<&str>, sender: Option<&str>) -> RunContext {
    let mut ctx = RunContext::new("main");
    ctx.message_provider = Some(provider.to_owned());
    ctx.group_id = group.map(str::to_owned);
    ctx.sender_id = sender.map(str::to_owned);
    ctx
}

/// Which layer removed `tool` and by which key (`None`: allowed).
fn why(e: &PolicyEngine, ctx: &RunContext, tool: &str) -> Option<(String, String)> {
    let out = e.evaluate(ctx, &ToolUniverse::core());
    match out.removed_by(tool) {
        Some(r) => Some((r.layer, r.config_key)),
        None => {
            assert!(out.allows(tool), "{tool} neither allowed nor removed");
            None
        }
    }
}

fn group(key: &str) -> Option<(String, String)> {
    Some(("group".to_owned(), key.to_owned()))
}

#[test]
fn a_group_deny_removes_exec_for_that_groups_runs_only() {
    let e = engine(json!({"telegram": {"groups": {"-100": {"tools": {"deny": ["exec"]}}}}}));
    assert_eq!(
        why(&e, &run("telegram", Some("-100"), None), "exec"),
        group("channels.telegram.groups.-100.tools.deny")
    );
    assert_eq!(why(&e, &run("telegram", Some("-200"), None), "exec"), None);
    assert_eq!(why(&e, &run("telegram", None, None), "exec"), None);
    assert_eq!(
        why(&e, &run("discord", Some("-100"), None), "exec"),
        None,
        "another provider's group of the same id is another group"
    );
    // Provider ids compare ignoring case and surrounding space.
    assert_eq!(
        why(&e, &run(" Telegram ", Some("-100"), None), "exec"),
        group("channels.telegram.groups.-100.tools.deny")
    );
    let out = e.explain(&run("telegram", Some("-100"), None), &ToolUniverse::core());
    let layer = out.layers.iter().find(|l| l.id == "group").unwrap();
    assert_eq!(
        layer.label,
        "group tools.allow (channels.telegram.groups.-100.tools)"
    );
}

#[test]
fn group_precedence_follows_openclaw() {
    let e = engine(json!({"telegram": {
        "tools": {"deny": ["browser"]},
        "toolsBySender": {"id:boss": {"deny": ["cron"]}},
        "groups": {
            "-100": {
                "tools": {"deny": ["exec"]},
                "toolsBySender": {"id:owner": {}, "username:@Mallory": {"deny": ["exec", "write"]}}
            },
            "*": {
                "tools": {"deny": ["read"]},
                "toolsBySender": {"id:alice": {"deny": ["edit"]}}
            }
        }
    }}));
    let r = |g: Option<&str>, s: Option<&str>, tool| why(&e, &run("telegram", g, s), tool);
    // 1. The group's sender entry wins over the group's tools; an empty
    //    entry exempts that sender in that group.
    assert_eq!(r(Some("-100"), Some("owner"), "exec"), None);
    let mut m = run("telegram", Some("-100"), Some("u9"));
    m.sender_username = Some("mallory".into());
    assert_eq!(
        why(&e, &m, "write"),
        group("channels.telegram.groups.-100.toolsBySender.username:@Mallory.deny")
    );
    // 2. Else the group's tools.
    assert_eq!(
        r(Some("-100"), Some("bob"), "exec"),
        group("channels.telegram.groups.-100.tools.deny")
    );
    assert_eq!(
        r(Some("-100"), Some("bob"), "read"),
        None,
        "a listed group replaces `*`"
    );
    // 3. An unlisted group: the `*` group's sender entry, else its tools.
    assert_eq!(
        r(Some("-300"), Some("alice"), "edit"),
        group("channels.telegram.groups.*.toolsBySender.id:alice.deny")
    );
    assert_eq!(r(Some("-300"), Some("alice"), "read"), None);
    assert_eq!(
        r(Some("-300"), Some("bob"), "read"),
        group("channels.telegram.groups.*.tools.deny")
    );
    // 4. No group: the provider's sender entry, else its tools.
    assert_eq!(
        r(None, Some("boss"), "cron"),
        group("channels.telegram.toolsBySender.id:boss.deny")
    );
    assert_eq!(r(None, Some("boss"), "browser"), None);
    assert_eq!(
        r(None, Some("bob"), "browser"),
        group("channels.telegram.tools.deny")
    );
}

#[test]
fn sender_key_forms_and_order() {
    let e = engine(json!({"signal": {"toolsBySender": {
        "channel:Signal:42": {"deny": ["exec"]},
        "id:42": {"deny": ["read"]},
        "e164:+15550001": {"deny": ["write"]},
        "username:carol": {"deny": ["edit"]},
        "name:Dave Smith": {"deny": ["cron"]},
        "@Erin": {"deny": ["browser"]},
        "*": {"deny": ["gateway"]}
    }}}));
    let removed_by = |ctx: &RunContext| {
        let out = e.evaluate(ctx, &ToolUniverse::core());
        out.layers
            .iter()
            .find(|l| l.id == "group")
            .unwrap()
            .removed
            .iter()
            .map(|r| r.tool.clone())
            .collect::<Vec<_>>()
    };
    let mut ctx = run("signal", None, Some("42"));
    ctx.sender_e164 = Some("+15550001".into());
    assert_eq!(
        removed_by(&ctx),
        ["exec"],
        "channel:<provider>:<id> comes first"
    );
    ctx.message_provider = Some("SIGNAL".into());
    assert_eq!(removed_by(&ctx), ["exec"]);
    // Under another provider the channel key cannot match (and that
    // provider has no section): nothing.
    ctx.message_provider = Some("telegram".into());
    assert!(removed_by(&ctx).is_empty());
    let mut ctx = run("signal", None, Some("43"));
    ctx.sender_e164 = Some("+15550001".into());
    ctx.sender_username = Some("@carol".into());
    assert_eq!(removed_by(&ctx), ["write"], "e164 before username");
    ctx.sender_e164 = None;
    assert_eq!(removed_by(&ctx), ["edit"], "a leading @ is ignored");
    let mut ctx = run("signal", None, None);
    ctx.sender_name = Some("dave smith".into());
    assert_eq!(removed_by(&ctx), ["cron"], "names compare ignoring case");
    let ctx = run("signal", None, Some("erin"));
    assert_eq!(removed_by(&ctx), ["browser"], "an unprefixed key is an id");
    let ctx = run("signal", None, Some("zed"));
    assert_eq!(removed_by(&ctx), ["gateway"]);
    let ctx = run("signal", None, None);
    assert_eq!(
        removed_by(&ctx),
        ["gateway"],
        "the wildcard applies to a run with no sender, as in OpenClaw"
    );
}

#[test]
fn account_groups() {
    // One account: its groups replace the provider's when it lists any.
    let e = engine(json!({"telegram": {
        "groups": {"g": {"tools": {"deny": ["exec"]}}},
        "accounts": {"bot1": {"groups": {"g": {"tools": {"deny": ["read"]}}}}}
    }}));
    let mut ctx = run("telegram", Some("g"), None);
    ctx.channel_account = Some("BOT1".into());
    assert_eq!(
        why(&e, &ctx, "read"),
        group("channels.telegram.accounts.bot1.groups.g.tools.deny")
    );
    assert_eq!(why(&e, &ctx, "exec"), None);
    ctx.channel_account = None;
    assert_eq!(
        why(&e, &ctx, "exec"),
        group("channels.telegram.groups.g.tools.deny")
    );
    // One account with an empty groups map: the provider's groups.
    let e = engine(json!({"telegram": {
        "groups": {"g": {"tools": {"deny": ["exec"]}}},
        "accounts": {"bot1": {"groups": {}}}
    }}));
    let mut ctx = run("telegram", Some("g"), None);
    ctx.channel_account = Some("bot1".into());
    assert_eq!(
        why(&e, &ctx, "exec"),
        group("channels.telegram.groups.g.tools.deny")
    );
    // Several accounts: an account with `groups` uses only those; one
    // without falls back to the provider's.
    let e = engine(json!({"telegram": {
        "groups": {"g": {"tools": {"deny": ["exec"]}}},
        "accounts": {"a": {"groups": {}}, "b": {}}
    }}));
    let mut ctx = run("telegram", Some("g"), None);
    ctx.channel_account = Some("a".into());
    assert_eq!(why(&e, &ctx, "exec"), None);
    ctx.channel_account = Some("b".into());
    assert_eq!(
        why(&e, &ctx, "exec"),
        group("channels.telegram.groups.g.tools.deny")
    );
}

#[test]
fn group_ids_match_exactly_then_ignoring_case() {
    let e = engine(json!({"slack": {"groups": {
        "C01ABC": {"tools": {"deny": ["exec"]}},
        "c01abc": {"tools": {"deny": ["read"]}}
    }}}));
    assert_eq!(
        why(&e, &run("slack", Some("c01abc"), None), "read"),
        group("channels.slack.groups.c01abc.tools.deny")
    );
    assert_eq!(
        why(&e, &run("slack", Some("C01ABC"), None), "exec"),
        group("channels.slack.groups.C01ABC.tools.deny")
    );
    let e = engine(json!({"slack": {"groups": {"C01ABC": {"tools": {"deny": ["exec"]}}}}}));
    assert_eq!(
        why(&e, &run("slack", Some("c01abc"), None), "exec"),
        group("channels.slack.groups.C01ABC.tools.deny")
    );
}

#[test]
fn channel_and_tools_groups_both_narrow() {
    let tools: ToolsConfig = serde_json::from_value(json!({
        "groups": {"-100": {"deny": ["read"]}}
    }))
    .unwrap();
    let e = engine_with(
        json!({"telegram": {"groups": {"-100": {"tools": {"deny": ["exec"]}}}}}),
        tools,
    );
    let ctx = run("telegram", Some("-100"), None);
    assert_eq!(
        why(&e, &ctx, "exec"),
        group("channels.telegram.groups.-100.tools.deny")
    );
    assert_eq!(why(&e, &ctx, "read"), group("tools.groups.-100.deny"));
    let out = e.explain(&ctx, &ToolUniverse::core());
    let layer = out.layers.iter().find(|l| l.id == "group").unwrap();
    assert_eq!(
        layer.label,
        "group tools.allow (channels.telegram.groups.-100.tools; tools.groups.-100)"
    );
}

#[test]
fn sender_layer_prefers_the_agents_table_over_the_global_one() {
    let tools: ToolsConfig = serde_json::from_value(json!({
        "toolsBySender": {"id:alice": {"deny": ["exec"]}, "*": {"deny": ["write"]}}
    }))
    .unwrap();
    let agent: AgentToolsConfig = serde_json::from_value(json!({
        "toolsBySender": {"alice": {"deny": ["read"]}}
    }))
    .unwrap();
    let e = PolicyEngine::new(&PolicyConfig {
        tools,
        agents: BTreeMap::from([("main".to_owned(), agent)]),
        ..PolicyConfig::default()
    })
    .unwrap();
    let ctx = run("telegram", None, Some("Alice"));
    let out = e.evaluate(&ctx, &ToolUniverse::core());
    let r = out.removed_by("read").unwrap();
    assert_eq!(
        (r.layer.as_str(), r.config_key.as_str()),
        ("sender", "agents.main.tools.toolsBySender.alice.deny")
    );
    assert!(
        out.allows("exec") && out.allows("write"),
        "first match only"
    );
    let ctx = run("telegram", None, Some("bob"));
    let r = e
        .evaluate(&ctx, &ToolUniverse::core())
        .removed_by("write")
        .unwrap();
    assert_eq!(r.config_key, "tools.toolsBySender.*.deny");
}

#[test]
fn sender_keys_that_name_nobody_or_twice_are_refused() {
    let bad = |v: serde_json::Value| {
        PolicyEngine::new(&PolicyConfig {
            channels: channels(v),
            ..PolicyConfig::default()
        })
        .unwrap_err()
    };
    let e = bad(json!({"telegram": {"toolsBySender": {"id:": {"deny": ["exec"]}}}}));
    assert!(
        matches!(&e, PolicyError::BadSenderKey { key, .. } if key == "channels.telegram.toolsBySender.id:"),
        "{e}"
    );
    assert_eq!(e.code(), "policy.bad_sender_key");
    let e = bad(json!({"telegram": {"groups": {"g": {"toolsBySender": {"channel:x": {}}}}}}));
    assert!(matches!(&e, PolicyError::BadSenderKey { .. }), "{e}");
    let e = bad(json!({"telegram": {"toolsBySender": {
        "Alice": {"deny": ["exec"]}, "id:alice": {"deny": ["read"]}
    }}}));
    assert!(matches!(&e, PolicyError::DuplicateSenderKey { .. }), "{e}");
    assert_eq!(e.code(), "policy.duplicate_sender_key");
    let e = bad(json!({"telegram": {"groups": {"g": {"tools": {"allow": []}}}}}));
    assert_eq!(
        e,
        PolicyError::EmptyAllow {
            key: "channels.telegram.groups.g.tools.allow".into()
        }
    );
}

#[test]
fn a_topic_or_sender_conversation_falls_back_to_its_chat() {
    let e = engine(json!({"telegram": {"groups": {
        "-100": {"tools": {"deny": ["exec"]}},
        "-100:topic:5": {"tools": {"deny": ["read"]}},
        "*": {"tools": {"deny": ["write"]}}
    }}}));
    assert_eq!(
        why(&e, &run("telegram", Some("-100:topic:9"), None), "exec"),
        group("channels.telegram.groups.-100.tools.deny")
    );
    assert_eq!(
        why(
            &e,
            &run("telegram", Some("-100:topic:5:sender:7"), None),
            "read"
        ),
        group("channels.telegram.groups.-100:topic:5.tools.deny")
    );
    assert_eq!(
        why(&e, &run("telegram", Some("-100:sender:7"), None), "exec"),
        group("channels.telegram.groups.-100.tools.deny")
    );
    assert_eq!(
        why(&e, &run("telegram", Some("-200:topic:1"), None), "write"),
        group("channels.telegram.groups.*.tools.deny")
    );
}
