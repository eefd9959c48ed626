//! Filtering the environment contributed by `resolve_exec_env` plugins.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::classify::{EnvKeyVerdict, classify_override_key, trim_key};
use crate::sanitize::sort_unique;

/// The reserved variables that mark a process as started by the CLI; a
/// plugin may never set them.
const RESERVED_CLI_KEYS: [&str; 2] = ["OPENCLAW_CLI", "TALON_CLI"];

/// The host's own namespaces: a plugin must not be able to set a variable
/// the host or its child tools read as configuration.
const RESERVED_PREFIXES: [&str; 2] = ["TALON_", "OPENCLAW_"];

/// Why a plugin-contributed key was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// The key is not a valid environment variable name.
    Invalid,
    /// The key is `PATH`, which plugins may never set.
    Path,
    /// The key is in the host's namespace (`TALON_*`, `OPENCLAW_*`).
    Reserved,
    /// The key is dangerous wherever it comes from.
    BlockedEverywhere,
    /// The key may not be overridden.
    BlockedOverrideOnly,
    /// The value contains NUL.
    NulInValue,
}

impl DropReason {
    /// A short stable name for logs and diagnostics.
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Invalid => "invalid",
            DropReason::Path => "path",
            DropReason::Reserved => "reserved",
            DropReason::BlockedEverywhere => "blocked_everywhere",
            DropReason::BlockedOverrideOnly => "blocked_override_only",
            DropReason::NulInValue => "nul_in_value",
        }
    }
}

/// One key a filter dropped, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DroppedKey {
    /// The trimmed key (the raw key when trimming leaves nothing).
    pub key: String,
    /// Why it was dropped.
    pub reason: DropReason,
}

/// The plugin environment after filtering.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilteredEnv {
    /// The keys that survived, keyed by the trimmed key.
    pub env: BTreeMap<String, String>,
    /// The keys that were dropped, sorted by key then reason.
    pub dropped: Vec<DroppedKey>,
}

/// Filters a plugin-contributed environment: drops invalid names, `PATH`,
/// the reserved `OPENCLAW_CLI` / `TALON_CLI` markers, dangerous and
/// override-only keys, and values containing NUL. Only keys are logged.
pub fn filter_plugin_env(env: BTreeMap<String, String>) -> FilteredEnv {
    let mut out = FilteredEnv::default();
    for (raw_key, value) in env {
        let key = trim_key(&raw_key);
        match drop_reason(key, &value) {
            Some(reason) => {
                let key = if key.is_empty() {
                    raw_key.as_str()
                } else {
                    key
                };
                out.dropped.push(DroppedKey {
                    key: key.to_owned(),
                    reason,
                });
            }
            None => {
                out.env.insert(key.to_owned(), value);
            }
        }
    }
    out.dropped.sort_by(|a, b| {
        a.key
            .encode_utf16()
            .cmp(b.key.encode_utf16())
            .then(a.reason.as_str().cmp(b.reason.as_str()))
    });
    out.dropped.dedup();
    if !out.dropped.is_empty() {
        let mut keys: Vec<String> = out.dropped.iter().map(|d| d.key.clone()).collect();
        sort_unique(&mut keys);
        tracing::warn!(dropped = ?keys, "resolve_exec_env keys dropped by the host env policy");
    }
    out
}

/// Why `key` (already trimmed) with `value` must be dropped, if it must.
fn drop_reason(key: &str, value: &str) -> Option<DropReason> {
    let reason = match classify_override_key(key) {
        EnvKeyVerdict::Invalid => DropReason::Invalid,
        EnvKeyVerdict::Path => DropReason::Path,
        EnvKeyVerdict::BlockedEverywhere => DropReason::BlockedEverywhere,
        EnvKeyVerdict::BlockedOverrideOnly => DropReason::BlockedOverrideOnly,
        EnvKeyVerdict::Allowed => {
            let upper = key.to_uppercase();
            if RESERVED_CLI_KEYS.contains(&upper.as_str())
                || RESERVED_PREFIXES.iter().any(|p| upper.starts_with(p))
            {
                DropReason::Reserved
            } else if value.contains('\0') {
                DropReason::NulInValue
            } else {
                return None;
            }
        }
    };
    Some(reason)
}

#[cfg(test)]
#[path = "plugin_tests.rs"]
mod tests;
