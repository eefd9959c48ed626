//! Secrets written in plain text: gateway tokens and MCP server env /
//! headers.

use std::cell::Cell;

use talon_config::sections::mcp::expand_env_refs;
use talon_config::{McpConfig, TalonConfig};
use talon_gateway_protocol::AuditSeverity;

use crate::findings::Findings;

/// What [`check`] found (the config file's mode check escalates when the
/// file holds secrets).
#[derive(Debug, Default)]
pub(crate) struct SecretsFound {
    keys: Vec<String>,
}

impl SecretsFound {
    pub(crate) fn any(&self) -> bool {
        !self.keys.is_empty()
    }
}

/// Auth schemes that may stand before a `${VAR}` reference in a header
/// value (`Bearer ${TOKEN}`): words, not secrets.
const AUTH_SCHEMES: &[&str] = &["bearer", "basic", "token", "bot", "apikey", "digest"];

/// Whether an env or header name names a secret: `*_KEY` (and `*-KEY`),
/// `*TOKEN*`, `*SECRET*`, `*PASSWORD*` / `*PASSWD*`, `Authorization`,
/// `Cookie`, compared ignoring case.
pub(crate) fn secret_name(name: &str) -> bool {
    let upper = name.trim().to_ascii_uppercase().replace('-', "_");
    upper == "KEY"
        || upper.ends_with("_KEY")
        || upper.ends_with("APIKEY")
        || upper.contains("TOKEN")
        || upper.contains("SECRET")
        || upper.contains("PASSWORD")
        || upper.contains("PASSWD")
        || upper == "AUTHORIZATION"
        || upper == "PROXY_AUTHORIZATION"
        || upper == "COOKIE"
}

/// Whether `value` is written in plain text rather than through `${VAR}`
/// references (read with the MCP client's own reference parser): a value
/// with no reference is literal, and so is one whose text outside its
/// references is anything but an auth scheme word.
pub(crate) fn literal_value(value: &str) -> bool {
    if value.trim().is_empty() {
        return false;
    }
    let refs = Cell::new(0usize);
    let rest = match expand_env_refs(value, |_| {
        refs.set(refs.get() + 1);
        Some(String::new())
    }) {
        Ok(rest) => rest,
        // A malformed reference fails at load; treat it as text.
        Err(_) => return true,
    };
    if refs.get() == 0 {
        return true;
    }
    rest.split_whitespace()
        .any(|word| !AUTH_SCHEMES.contains(&word.to_ascii_lowercase().as_str()))
}

pub(crate) fn mcp_sections(config: &TalonConfig) -> Vec<(String, &McpConfig)> {
    let mut out: Vec<(String, &McpConfig)> = Vec::new();
    if let Some(mcp) = &config.mcp {
        out.push(("mcp".to_owned(), mcp));
    }
    for (agent, mcp) in config.agent_mcp_sections() {
        let key = config
            .agent_key(&agent)
            .map_or_else(|| format!("agents.{agent}.mcp"), |k| format!("{k}.mcp"));
        out.push((key, mcp));
    }
    out
}

/// Plain-text gateway tokens and MCP secrets; the names of the keys that
/// hold them, never their values.
pub(crate) fn check(config: &TalonConfig, out: &mut Findings) -> SecretsFound {
    let mut found = SecretsFound::default();
    if let Some(auth) = config.gateway.as_ref().and_then(|g| g.auth.as_ref()) {
        let mut keys: Vec<String> = Vec::new();
        if auth.token.as_deref().is_some_and(|t| !t.trim().is_empty()) {
            keys.push("gateway.auth.token".to_owned());
        }
        for (i, t) in auth.tokens.iter().enumerate() {
            if !t.token.trim().is_empty() {
                keys.push(format!("gateway.auth.tokens[{i}].token"));
            }
        }
        if !keys.is_empty() {
            out.push(
                "talon.secrets.gateway_token_in_config",
                AuditSeverity::Warn,
                format!("{} gateway token(s) written in plain text in the config", keys.len()),
                format!(
                    "{} hold bearer tokens in the config file, so anyone who can read the file (or a backup, or `git`) can call the gateway.",
                    keys.join(", ")
                ),
                "Write each gateway.auth.tokens entry as `tokenSha256` (`talon security audit --fix` does it in place; the token keeps working), replace gateway.auth.token by such an entry (`talon gateway token new`), and keep the config file at mode 0600.",
            );
            found.keys.extend(keys);
        }
    }
    for (section, mcp) in mcp_sections(config) {
        for (name, server) in &mcp.servers.0 {
            let mut keys: Vec<String> = Vec::new();
            for (k, v) in &server.env {
                if secret_name(k) && literal_value(v) {
                    keys.push(format!("{section}.servers.{name}.env.{k}"));
                }
            }
            for (k, v) in &server.headers {
                if secret_name(k) && literal_value(v) {
                    keys.push(format!("{section}.servers.{name}.headers.{k}"));
                }
            }
            if keys.is_empty() {
                continue;
            }
            out.push(
                "talon.mcp.literal_secret",
                AuditSeverity::Warn,
                format!("MCP server `{name}` has a secret written in plain text"),
                format!(
                    "{} {} a literal value (not a `${{VAR}}` reference) under a secret-looking name.",
                    keys.join(", "),
                    if keys.len() == 1 { "holds" } else { "hold" }
                ),
                "Move the value into the state directory's secrets.json (mode 0600, `{\"NAME\": \"value\"}`) and write `${secret:NAME}` in its place, or into the environment of the process that starts Talon as `${VAR}` (for a header: `Bearer ${secret:NAME}`).",
            );
            found.keys.extend(keys);
        }
    }
    found
}

#[cfg(test)]
#[path = "secrets_tests.rs"]
mod tests;
