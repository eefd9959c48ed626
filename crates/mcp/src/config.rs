//! The `mcp` config section (`mcp.servers.<name>`, and the same under
//! `agents.list[].mcp`), typed by `talon-config` (plain data, so the config
//! crate does not depend on `rmcp`) and re-exported here, plus
//! [`parse_config`] for a section that does not come from a config file.

pub(crate) use talon_config::sections::mcp::expand_env_refs as expand;
pub use talon_config::sections::mcp::{
    DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_TIMEOUT_MS, EnvRefError, MAX_MAX_OUTPUT_BYTES,
    MAX_TIMEOUT_MS, MIN_MAX_OUTPUT_BYTES, McpConfig, McpServerConfig, McpServers, Transport,
};

use crate::error::McpError;

/// Parse and check an `mcp` section given as JSON (tests, embedders); `key`
/// (e.g. `mcp` or `agents.list[0].mcp`) prefixes the error's path. A
/// section read from the config file is already typed and checked by
/// `talon-config`.
pub fn parse_config(value: &serde_json::Value, key: &str) -> Result<McpConfig, McpError> {
    let parsed: McpConfig =
        serde_path_to_error::deserialize(value).map_err(|e| McpError::Config {
            key: join_path(key, &e.path().to_string()),
            message: e.inner().to_string(),
        })?;
    if let Some((k, message)) = parsed.validate().into_iter().next() {
        return Err(McpError::Config {
            key: join_path(key, &k),
            message,
        });
    }
    Ok(parsed)
}

fn join_path(prefix: &str, rest: &str) -> String {
    if rest.is_empty() || rest == "." {
        prefix.to_owned()
    } else if prefix.is_empty() {
        rest.to_owned()
    } else {
        format!("{prefix}.{rest}")
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
