//! Sanitising an exec call's own `env` parameter and merging it with the
//! plugin-contributed environment.

use std::collections::BTreeMap;

use crate::classify::{EnvKeyVerdict, classify_override_key, trim_key};
use crate::plugin::filter_plugin_env;

/// The host's own namespaces: a call must not set a variable the host or
/// its child tools read as configuration (the plugin filter reserves the
/// same prefixes).
const RESERVED_PREFIXES: [&str; 2] = ["TALON_", "OPENCLAW_"];

/// The outcome of sanitising a call's `env` overrides.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SanitizedEnv {
    /// The overrides that may be applied, keyed by the trimmed key in its
    /// original case.
    pub accepted: BTreeMap<String, String>,
    /// Keys rejected by the policy (PATH, dangerous and override-only
    /// keys, and the host's reserved `TALON_*` / `OPENCLAW_*` namespaces),
    /// uppercased, sorted and de-duplicated.
    pub rejected_blocked: Vec<String>,
    /// Keys rejected because the name is invalid or the value contains NUL,
    /// trimmed (or raw when trimming leaves nothing), sorted and
    /// de-duplicated.
    pub rejected_invalid: Vec<String>,
}

impl SanitizedEnv {
    /// Whether any override was rejected.
    pub fn has_rejections(&self) -> bool {
        !self.rejected_blocked.is_empty() || !self.rejected_invalid.is_empty()
    }
}

/// Sanitises the overrides a call supplies in its `env` parameter.
///
/// Invalid names and values containing NUL go to `rejected_invalid`;
/// dangerous and override-only keys, keys in the host's reserved
/// `TALON_*` / `OPENCLAW_*` namespaces (any case), and `PATH` when
/// `block_path` go to `rejected_blocked`. Only keys are ever logged.
pub fn sanitize_env_overrides(
    overrides: &BTreeMap<String, String>,
    block_path: bool,
) -> SanitizedEnv {
    let mut out = SanitizedEnv::default();
    for (raw_key, value) in overrides {
        let key = trim_key(raw_key);
        let verdict = classify_override_key(key);
        match verdict {
            EnvKeyVerdict::Invalid => {
                let reported = if key.is_empty() {
                    raw_key.as_str()
                } else {
                    key
                };
                out.rejected_invalid.push(reported.to_owned());
            }
            EnvKeyVerdict::Path if !block_path => accept(&mut out, key, value),
            EnvKeyVerdict::Path
            | EnvKeyVerdict::BlockedEverywhere
            | EnvKeyVerdict::BlockedOverrideOnly => {
                out.rejected_blocked.push(key.to_uppercase());
            }
            EnvKeyVerdict::Allowed if is_reserved(key) => {
                out.rejected_blocked.push(key.to_uppercase());
            }
            EnvKeyVerdict::Allowed => accept(&mut out, key, value),
        }
    }
    sort_unique(&mut out.rejected_blocked);
    sort_unique(&mut out.rejected_invalid);
    if out.has_rejections() {
        tracing::warn!(
            blocked = ?out.rejected_blocked,
            invalid = ?out.rejected_invalid,
            "exec env overrides rejected"
        );
    }
    out
}

/// Whether `key` is in the host's reserved namespaces (any case).
fn is_reserved(key: &str) -> bool {
    let upper = key.to_uppercase();
    RESERVED_PREFIXES.iter().any(|p| upper.starts_with(p))
}

/// Accepts `key = value` unless the value contains NUL, which no process
/// environment can carry.
fn accept(out: &mut SanitizedEnv, key: &str, value: &str) {
    if value.contains('\0') {
        out.rejected_invalid.push(key.to_owned());
    } else {
        out.accepted.insert(key.to_owned(), value.to_owned());
    }
}

/// Sorts by UTF-16 code units (JavaScript's default order) and removes
/// duplicates.
pub(crate) fn sort_unique(list: &mut Vec<String>) {
    list.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
    list.dedup();
}

/// The environment overrides for an exec run: `accepted` (the configured
/// `set` variables and the call's accepted overrides), then the plugin
/// environment on top, so a plugin value wins over the call's own value
/// for the same key. The plugin map is filtered again here, so an
/// unfiltered map cannot smuggle a blocked key in.
pub fn merge_exec_env(
    accepted: &BTreeMap<String, String>,
    plugin_env: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut merged = accepted.clone();
    merged.extend(filter_plugin_env(plugin_env.clone()).env);
    merged
}

#[cfg(test)]
#[path = "sanitize_tests.rs"]
mod tests;
