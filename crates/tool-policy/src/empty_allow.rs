//! Refusing an explicit empty allow list.
//!
//! OpenClaw reads `allow: []` as "allow every tool that is not denied", a
//! restriction that silently means its opposite. Talon refuses it wherever
//! an allow list can be written, so an empty list never widens anything;
//! the error names the key and both ways to say what was meant.

use crate::config::{
    ChannelGroupToolsConfig, PolicyConfig, ProfiledPolicyConfig, SandboxToolsSection,
    ToolPolicyConfig,
};
use crate::error::PolicyError;

/// Whether an allow list is empty once blank entries are ignored (a blank
/// entry matches nothing, so `[""]` is the same footgun as `[]`).
pub fn is_empty_allow(list: &[String]) -> bool {
    list.iter().all(|e| e.trim().is_empty())
}

/// Every `allow` key of the configuration that holds an empty list, as
/// written (`tools.allow`, `agents.<id>.tools.sandbox.tools.allow`, ...).
pub fn empty_allow_keys(config: &PolicyConfig) -> Vec<String> {
    let mut out = Vec::new();
    let tools = &config.tools;
    check(&mut out, "tools.allow", tools.allow.as_deref());
    by_provider(&mut out, "tools", tools.by_provider.as_ref());
    for (gid, group) in tools.groups.iter().flatten() {
        let prefix = format!("tools.groups.{gid}");
        check(&mut out, &format!("{prefix}.allow"), group.allow.as_deref());
        for (sid, p) in group.tools_by_sender.iter().flatten() {
            policy(&mut out, &format!("{prefix}.toolsBySender.{sid}"), p);
        }
    }
    for (sid, p) in tools.tools_by_sender.iter().flatten() {
        policy(&mut out, &format!("tools.toolsBySender.{sid}"), p);
    }
    sandbox(&mut out, "tools.sandbox.tools", tools.sandbox.as_ref());
    if let Some(p) = tools.subagents.as_ref().and_then(|s| s.tools.as_ref()) {
        policy(&mut out, "tools.subagents.tools", p);
    }
    for (id, agent) in &config.agents {
        let prefix = format!("{}.tools", config.agent_key(id));
        check(&mut out, &format!("{prefix}.allow"), agent.allow.as_deref());
        by_provider(&mut out, &prefix, agent.by_provider.as_ref());
        sandbox(
            &mut out,
            &format!("{prefix}.sandbox.tools"),
            agent.sandbox.as_ref(),
        );
        senders(
            &mut out,
            &format!("{prefix}.toolsBySender"),
            agent.tools_by_sender.as_ref(),
        );
    }
    for (provider, channel) in &config.channels {
        let prefix = format!("channels.{provider}");
        if let Some(p) = &channel.tools {
            policy(&mut out, &format!("{prefix}.tools"), p);
        }
        senders(
            &mut out,
            &format!("{prefix}.toolsBySender"),
            channel.tools_by_sender.as_ref(),
        );
        groups(&mut out, &prefix, channel.groups.as_ref());
        for (id, account) in channel.accounts.iter().flatten() {
            groups(
                &mut out,
                &format!("{prefix}.accounts.{id}"),
                account.groups.as_ref(),
            );
        }
    }
    out
}

fn senders(
    out: &mut Vec<String>,
    prefix: &str,
    map: Option<&std::collections::BTreeMap<String, ToolPolicyConfig>>,
) {
    for (sid, p) in map.into_iter().flatten() {
        policy(out, &format!("{prefix}.{sid}"), p);
    }
}

fn groups(
    out: &mut Vec<String>,
    prefix: &str,
    map: Option<&std::collections::BTreeMap<String, ChannelGroupToolsConfig>>,
) {
    for (gid, g) in map.into_iter().flatten() {
        let prefix = format!("{prefix}.groups.{gid}");
        if let Some(p) = &g.tools {
            policy(out, &format!("{prefix}.tools"), p);
        }
        senders(
            out,
            &format!("{prefix}.toolsBySender"),
            g.tools_by_sender.as_ref(),
        );
    }
}

/// The first empty allow list as an error, if any.
pub(crate) fn refuse_empty_allow(config: &PolicyConfig) -> Result<(), PolicyError> {
    match empty_allow_keys(config).into_iter().next() {
        Some(key) => Err(PolicyError::EmptyAllow { key }),
        None => Ok(()),
    }
}

fn check(out: &mut Vec<String>, key: &str, list: Option<&[String]>) {
    if list.is_some_and(is_empty_allow) {
        out.push(key.to_owned());
    }
}

fn policy(out: &mut Vec<String>, prefix: &str, p: &ToolPolicyConfig) {
    check(out, &format!("{prefix}.allow"), p.allow.as_deref());
}

fn sandbox(out: &mut Vec<String>, prefix: &str, section: Option<&SandboxToolsSection>) {
    if let Some(p) = section.and_then(|s| s.tools.as_ref()) {
        policy(out, prefix, p);
    }
}

fn by_provider(
    out: &mut Vec<String>,
    prefix: &str,
    map: Option<&std::collections::BTreeMap<String, ProfiledPolicyConfig>>,
) {
    for (provider, p) in map.into_iter().flatten() {
        check(
            out,
            &format!("{prefix}.byProvider.{provider}.allow"),
            p.allow.as_deref(),
        );
    }
}

#[cfg(test)]
#[path = "empty_allow_tests.rs"]
mod tests;
