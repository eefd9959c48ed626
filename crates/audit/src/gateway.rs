//! The gateway's listen address and its HTTP tool deny list.
//!
//! Talon's gateway always authenticates (configured tokens, else the
//! token it generates into the state dir) and refuses to listen beyond
//! loopback without a configured token, so OpenClaw's
//! `gateway.bind_no_auth` names a config the gateway refuses (warn, not
//! an exposure). It reads no forwarded headers, so there are no trusted
//! proxies to configure (`gateway.trusted_proxies_missing` does not
//! apply). What remains beyond loopback is the transport: plain
//! HTTP/WebSocket.

use std::net::IpAddr;

use talon_gateway_protocol::AuditSeverity;

use crate::findings::Findings;
use crate::input::AuditInput;

pub(crate) fn check(input: &AuditInput<'_>, out: &mut Findings) {
    let gateway = input.config.gateway_config();
    let (ip, source): (Option<IpAddr>, String) = match input.gateway_listen {
        Some(addr) => (
            Some(addr.ip()),
            format!("the running gateway listens on {addr}"),
        ),
        None => (
            gateway.bind.and_then(|b| b.ip()),
            format!(
                "gateway.bind is `{}`",
                gateway
                    .bind
                    .map_or_else(|| "loopback".to_owned(), |b| b.to_string())
            ),
        ),
    };
    let beyond = ip.is_some_and(|ip| !ip.is_loopback());
    let tokens = gateway.auth.as_ref().map_or(0, |a| {
        usize::from(a.token.as_deref().is_some_and(|t| !t.trim().is_empty())) + a.tokens.len()
    });
    if beyond && tokens == 0 {
        out.push(
            "gateway.bind_no_auth",
            AuditSeverity::Warn,
            "the gateway is bound beyond loopback without a configured token",
            format!(
                "{source} and neither gateway.auth.token nor gateway.auth.tokens is set. Talon's gateway refuses to listen there without a configured token (a reload to this config is refused too), so nothing is exposed, but it will not start."
            ),
            "Bind loopback (gateway.bind: \"loopback\"), or configure gateway.auth.tokens with scoped tokens of at least 16 characters.",
        );
    } else if beyond {
        out.push(
            "talon.gateway.bind_beyond_loopback",
            AuditSeverity::Warn,
            "the gateway is reachable beyond loopback",
            format!(
                "{source}. Every request needs a bearer token ({tokens} configured, plus the generated <state dir>/gateway.token), but the gateway speaks plain HTTP/WebSocket: tokens and tool results cross the network unencrypted."
            ),
            "Bind loopback (gateway.bind: \"loopback\") and reach it through SSH or a TLS-terminating proxy on the same host.",
        );
    }
    let allow: Vec<&String> = gateway
        .tools
        .as_ref()
        .map(|t| t.allow.iter().collect())
        .unwrap_or_default();
    if !allow.is_empty() {
        let severity = if beyond {
            AuditSeverity::Critical
        } else {
            AuditSeverity::Warn
        };
        out.push(
            "gateway.tools_invoke_http.dangerous_allow",
            severity,
            "tools are taken off the HTTP surface's default deny list",
            format!(
                "gateway.tools.allow lets POST /tools/invoke call {}, which the HTTP surface refuses by default{}.",
                allow
                    .iter()
                    .map(|t| format!("`{t}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                if beyond {
                    ", and the gateway is reachable beyond loopback"
                } else {
                    ""
                }
            ),
            "Remove the entries from gateway.tools.allow; call those tools over the WebSocket API, where sessions, approvals and the full policy apply.",
        );
    }
}

/// A `*` in an owner list (`gateway.auth.ownerAllowFrom`,
/// `commands.ownerAllowFrom`): every sender a runner relays is the owner and
/// gets the owner-only tools.
pub(crate) fn check_owner_wildcards(input: &AuditInput<'_>, out: &mut Findings) {
    let keys = input.config.owner_wildcards();
    if keys.is_empty() {
        return;
    }
    out.push(
        "talon.gateway.owner_allow_wildcard",
        AuditSeverity::Critical,
        "an owner list names every sender (`*`)",
        format!(
            "{} hold `*`: every sender a runner token relays counts as the owner, so the owner-only tools (cron, gateway, sessions, nodes) reach anyone who can message the agent.",
            keys.join(", ")
        ),
        "List the owners' sender ids (`telegram:42`) instead of `*`, or give the owner an owner-scoped gateway token and remove the list.",
    );
}

/// Restrictions from an OpenClaw file that Talon does not enforce and that
/// the operator dropped knowingly (`acceptUnenforced`): never silent.
pub(crate) fn check_dropped_restrictions(input: &AuditInput<'_>, out: &mut Findings) {
    let dropped = &input.config.dropped_restrictions;
    if dropped.is_empty() {
        return;
    }
    out.push(
        "talon.config.unenforced_restrictions",
        AuditSeverity::Warn,
        "restrictions in the config are not enforced",
        format!(
            "acceptUnenforced drops {} restriction(s) Talon cannot enforce: {}. Whatever they restricted (tools per channel, group or sender, the message tool, exec hosts, plugin slots, gateway access) is not restricted by Talon.",
            dropped.len(),
            dropped.join(", ")
        ),
        "Express each restriction with what Talon enforces (tools.deny, an agent's tools.deny, tools.groups, tools.toolsBySender, plugins.deny, gateway tokens and a loopback bind), then remove it and its acceptUnenforced entry.",
    );
}
