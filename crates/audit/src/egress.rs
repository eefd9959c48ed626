//! Egress opt-ins: every configured way past the SSRF guard's refusal of
//! private, loopback and link-local targets, and sandbox networks that
//! leave the container unguarded.
//!
//! The keys are the ones their consumers read: `tools.web.fetch.ssrfAllowlist`
//! (`web_fetch` and the local sandbox's egress proxy),
//! `tools.web.search.ssrfAllowlist` (search provider `baseUrl`s),
//! `mcp.servers.<name>.allowPrivateNetwork` (streamable-HTTP servers) and
//! `cron.webhookSsrfAllowlist` (cron webhooks). Cloud metadata endpoints
//! stay refused under every one of them (`talon-egress`), which each
//! finding says.

use talon_config::sections::web::SsrfAllowlistConfig;
use talon_gateway_protocol::AuditSeverity;

use crate::findings::Findings;
use crate::input::AuditInput;

/// The entries of an allowlist, as `hosts: a, b; cidrs: c`.
fn entries(list: &SsrfAllowlistConfig) -> Option<String> {
    let mut parts = Vec::new();
    if !list.hosts.is_empty() {
        parts.push(format!("hosts {}", list.hosts.join(", ")));
    }
    if !list.cidrs.is_empty() {
        parts.push(format!("cidrs {}", list.cidrs.join(", ")));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

fn allowlist(out: &mut Findings, key: &str, who: &str, list: Option<&SsrfAllowlistConfig>) {
    let Some(what) = list.and_then(entries) else {
        return;
    };
    out.push(
        "talon.egress.private_network_opt_in",
        AuditSeverity::Warn,
        format!("{key} opens private network targets"),
        format!(
            "{key} ({what}) lets {who} reach these hosts and networks although they are private, loopback or special-use; a model-chosen URL there reaches services that trust the local network. Cloud metadata endpoints stay refused."
        ),
        format!("Keep {key} to the single hosts that need it (a /32, not a /8), or remove it."),
    );
}

pub(crate) fn check(input: &AuditInput<'_>, out: &mut Findings) {
    let config = input.config;
    let web = config.tools.as_ref().and_then(|t| t.web.as_ref());
    let fetch = web.and_then(|w| w.fetch.as_ref());
    allowlist(
        out,
        "tools.web.fetch.ssrfAllowlist",
        "`web_fetch` (and the egress proxy of local sandboxes with network \"bridge\")",
        fetch.and_then(|f| f.ssrf_allowlist.as_ref()),
    );
    let search = web.and_then(|w| w.search.as_ref());
    allowlist(
        out,
        "tools.web.search.ssrfAllowlist",
        "`web_search` provider base URLs (with the provider's API key)",
        search.and_then(|s| s.ssrf_allowlist.as_ref()),
    );
    allowlist(
        out,
        "cron.webhookSsrfAllowlist",
        "cron job webhooks",
        config
            .cron
            .as_ref()
            .and_then(|c| c.webhook_ssrf_allowlist.as_ref()),
    );
    for (section, mcp) in crate::secrets::mcp_sections(config) {
        for (name, server) in &mcp.servers.0 {
            if !server.allows_private_network() {
                continue;
            }
            let key = format!("{section}.servers.{name}.allowPrivateNetwork");
            let url = server.url.as_deref().unwrap_or("(no url)");
            out.push(
                "talon.egress.private_network_opt_in",
                AuditSeverity::Warn,
                format!("{key} is true"),
                format!(
                    "MCP server `{name}` ({url}{}) may connect to private, loopback and link-local addresses, with its configured headers; a redirect or DNS answer pointing inside is followed. Cloud metadata endpoints stay refused.",
                    if server.is_enabled() { "" } else { ", disabled" }
                ),
                format!("Remove {key} unless the server really runs on a private address; then keep its URL a fixed IP or host you control."),
            );
        }
    }
    sandbox_networks(input, out);
}

/// A Docker sandbox network other than `none` gives the container its own
/// route out, which no SSRF guard sees (`host` and `container:*` are
/// `sandbox.dangerous_network_mode`). The local backend's only network,
/// `bridge`, goes through the guarded egress proxy
/// (`tools.web.fetch.ssrfAllowlist` above).
fn sandbox_networks(input: &AuditInput<'_>, out: &mut Findings) {
    for agent in crate::audited_agents(input.config) {
        let resolved = input
            .config
            .resolved_sandbox_config(&agent, input.state_dir, input.home);
        if resolved.mode == talon_sandbox_core::SandboxMode::Off || resolved.backend != "docker" {
            continue;
        }
        let network = resolved.docker.network.trim().to_ascii_lowercase();
        if network.is_empty()
            || network == "none"
            || network == "host"
            || network.starts_with("container:")
        {
            continue;
        }
        let key = resolved.docker_origins.key("network");
        out.push(
            "talon.sandbox.network_egress",
            AuditSeverity::Warn,
            format!("agent `{agent}`: the Docker sandbox has network `{}`", resolved.docker.network),
            format!(
                "{key} = `{}`: commands in agent `{agent}`'s sandbox connect out directly, not through Talon's egress guard, so they reach the host's private networks and whatever the engine's network routes to (cloud metadata included unless the host blocks it).",
                resolved.docker.network
            ),
            format!("Set {key} to \"none\" and fetch through `web_fetch`, or use a Docker network with no route to private addresses."),
        );
    }
}
