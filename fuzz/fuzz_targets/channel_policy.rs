//! Channel-scoped policy inputs a client or an imported file controls: a
//! session key (the gateway reads a group conversation out of it), sender
//! keys of `toolsBySender`, and a whole `channels` section compiled and
//! evaluated for the run the key and a sender describe. Hostile input never
//! panics; a canonical sender key is its own canonical form; a group read
//! from a key is non-empty and part of the key; the group layer removes only
//! by keys under `channels.`.
#![no_main]

use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;
use talon_tool_policy::config::ChannelToolsConfig;
use talon_tool_policy::{PolicyConfig, PolicyEngine, RunContext, ToolUniverse};

fuzz_target!(|text: &str| {
    let mut lines = text.splitn(3, '\n');
    let key = lines.next().unwrap_or_default();
    let sender = lines.next().unwrap_or_default();
    let section = lines.next().unwrap_or_default();

    let conversation = talon_sessions::group_conversation(key);
    if let Some((provider, group)) = &conversation {
        assert!(!provider.is_empty() && !group.trim().is_empty());
        assert!(key.contains(group.as_str()));
    }
    for k in [key, sender] {
        if let Ok(Some(canonical)) = talon_tool_policy::normalize_sender_key(k) {
            assert_eq!(
                talon_tool_policy::normalize_sender_key(&canonical),
                Ok(Some(canonical.clone()))
            );
        }
    }

    let Ok(channels) = serde_json::from_str::<BTreeMap<String, ChannelToolsConfig>>(section)
    else {
        return;
    };
    let Ok(engine) = PolicyEngine::new(&PolicyConfig {
        channels,
        ..PolicyConfig::default()
    }) else {
        return;
    };
    let mut ctx = RunContext::new("main");
    if let Some((provider, group)) = conversation {
        ctx.message_provider = Some(provider);
        ctx.group_id = Some(group);
    }
    ctx.sender_id = Some(sender.to_owned());
    ctx.sender_username = Some(sender.to_owned());
    let out = engine.explain(&ctx, &ToolUniverse::core());
    for layer in &out.layers {
        for r in &layer.removed {
            if layer.id == "group" {
                assert!(r.config_key.starts_with("channels."), "{}", r.config_key);
            }
        }
    }
});
