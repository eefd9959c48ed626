//! Filtering the host environment that exec children inherit.

use std::collections::BTreeMap;

use crate::classify::{is_blocked_inherited, trim_key};
use crate::lists::{self, Policy};

/// The Git protocols that stay in an inherited `GIT_ALLOW_PROTOCOL`.
const GIT_SAFE_PROTOCOLS: [&str; 4] = ["git", "http", "https", "ssh"];

/// Filters the host environment passed to exec children.
///
/// Keys are trimmed and empty keys dropped. Dangerous keys, override-only
/// keys that are not in OpenClaw's `allowedInheritedOverrideOnlyKeys`, and
/// the `DYLD_`, `LD_` and `BASH_FUNC_` prefixes are dropped. Non-portable
/// names are kept (as OpenClaw does), except names containing `=` or NUL
/// and values containing NUL, which no process environment can carry.
/// `GIT_ALLOW_PROTOCOL` keeps only its `git`, `http`, `https` and `ssh`
/// segments (colon-separated), and a permissive `GIT_PROTOCOL_FROM_USER`
/// (`true`, `yes`, `on` or a non-zero integer) becomes `"0"`. When a key
/// appears twice after trimming, the later one wins.
pub fn filter_inherited_env(
    vars: impl IntoIterator<Item = (String, String)>,
) -> BTreeMap<String, String> {
    filter_inherited_with(lists::current(), vars)
}

/// [`filter_inherited_env`] against an explicit policy; `None` (the policy
/// failed to load) drops everything.
pub(crate) fn filter_inherited_with(
    policy: Option<&Policy>,
    vars: impl IntoIterator<Item = (String, String)>,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if policy.is_none() {
        tracing::error!("host env security policy unavailable; no host env is inherited");
        return out;
    }
    for (raw_key, value) in vars {
        if let Some((key, value)) = filter_entry(policy, &raw_key, value) {
            out.insert(key, value);
        }
    }
    out
}

/// Filters one inherited entry, returning the entry to keep, if any.
fn filter_entry(policy: Option<&Policy>, raw_key: &str, value: String) -> Option<(String, String)> {
    let key = trim_key(raw_key);
    if key.is_empty() || key.contains(['=', '\0']) || value.contains('\0') {
        return None;
    }
    let upper = key.to_uppercase();
    if upper == "GIT_ALLOW_PROTOCOL" {
        return Some((key.to_owned(), safe_git_allow_protocol(&value)));
    }
    if upper == "GIT_PROTOCOL_FROM_USER" {
        let value = if is_permissive_git_bool(&value) {
            "0".to_owned()
        } else {
            value
        };
        return Some((key.to_owned(), value));
    }
    if is_blocked_inherited(policy, &upper) {
        return None;
    }
    Some((key.to_owned(), value))
}

/// Keeps only the safe protocols of a colon-separated protocol list.
fn safe_git_allow_protocol(value: &str) -> String {
    let trimmed = trim_key(value);
    trimmed
        .split(':')
        .filter(|p| GIT_SAFE_PROTOCOLS.contains(p))
        .collect::<Vec<_>>()
        .join(":")
}

/// Whether Git reads `value` as "true": `true`, `yes`, `on` (any case) or
/// an integer other than zero.
fn is_permissive_git_bool(value: &str) -> bool {
    let normalized = trim_key(value).to_lowercase();
    if matches!(normalized.as_str(), "true" | "yes" | "on") {
        return true;
    }
    let digits = normalized
        .strip_prefix(['+', '-'])
        .unwrap_or(normalized.as_str());
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && digits.bytes().any(|b| b != b'0')
}

#[cfg(test)]
#[path = "inherited_tests.rs"]
mod tests;
