//! Key validation and classification against the host env policy.

use serde::Serialize;

use crate::lists::{self, Policy};

/// What the policy says about a key supplied as an override (a call's own
/// `env` parameter or a plugin's contribution).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EnvKeyVerdict {
    /// The key may be set.
    Allowed,
    /// The key is `PATH`, which command resolution and safe-bin checks rely
    /// on; callers decide whether it is blocked.
    Path,
    /// The key is dangerous wherever it comes from (for example
    /// `NODE_OPTIONS`, `LD_PRELOAD`, `DYLD_*`, `BASH_FUNC_*`). Every key is
    /// reported as this when the embedded policy failed to load.
    BlockedEverywhere,
    /// The key may be inherited from the host but never overridden (for
    /// example `HOME`, proxy and TLS variables, credentials).
    BlockedOverrideOnly,
    /// The key is not a valid environment variable name.
    Invalid,
}

impl EnvKeyVerdict {
    /// A short stable name for logs and diagnostics.
    pub fn as_str(self) -> &'static str {
        match self {
            EnvKeyVerdict::Allowed => "allowed",
            EnvKeyVerdict::Path => "path",
            EnvKeyVerdict::BlockedEverywhere => "blocked_everywhere",
            EnvKeyVerdict::BlockedOverrideOnly => "blocked_override_only",
            EnvKeyVerdict::Invalid => "invalid",
        }
    }
}

/// Trims a key the way JavaScript's `String.prototype.trim` does.
pub fn trim_key(key: &str) -> &str {
    key.trim_matches(is_js_whitespace)
}

/// Whether `c` is whitespace for JavaScript's `trim` (which, unlike Rust's
/// `char::is_whitespace`, includes U+FEFF and excludes U+0085).
fn is_js_whitespace(c: char) -> bool {
    (c.is_whitespace() && c != '\u{85}') || c == '\u{FEFF}'
}

/// Whether `key` (after trimming) is a valid override name: portable
/// `^[A-Za-z_][A-Za-z0-9_]*$` or Windows-compatible
/// `^[A-Za-z_][A-Za-z0-9_()]*$`. Anything else (`=`, NUL, spaces, a
/// leading digit, non-ASCII, an empty key) is invalid.
pub fn is_valid_env_key(key: &str) -> bool {
    let mut chars = trim_key(key).chars();
    let Some(first) = chars.next() else {
        return false;
    };
    if !(first.is_ascii_alphabetic() || first == '_') {
        return false;
    }
    chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '(' | ')'))
}

/// Classifies a key supplied as an override. The comparison uses the
/// trimmed, uppercased key, so `ld_preload` and `http_proxy` are caught.
pub fn classify_override_key(key: &str) -> EnvKeyVerdict {
    classify_with(lists::current(), key)
}

/// Classifies `key` against `policy`; `None` (the policy failed to load)
/// blocks every valid key.
pub(crate) fn classify_with(policy: Option<&Policy>, key: &str) -> EnvKeyVerdict {
    if !is_valid_env_key(key) {
        return EnvKeyVerdict::Invalid;
    }
    let upper = trim_key(key).to_uppercase();
    if upper == "PATH" {
        return EnvKeyVerdict::Path;
    }
    let Some(policy) = policy else {
        return EnvKeyVerdict::BlockedEverywhere;
    };
    if policy.everywhere_keys.contains(&upper) || has_prefix(&upper, &policy.everywhere_prefixes) {
        return EnvKeyVerdict::BlockedEverywhere;
    }
    if policy.override_only_keys.contains(&upper)
        || has_prefix(&upper, &policy.override_only_prefixes)
        || is_cargo_target_executable_key(&upper)
    {
        return EnvKeyVerdict::BlockedOverrideOnly;
    }
    EnvKeyVerdict::Allowed
}

/// Whether the inherited host variable `upper` (trimmed and uppercased)
/// must not reach a child process. `None` (no policy) blocks everything.
pub(crate) fn is_blocked_inherited(policy: Option<&Policy>, upper: &str) -> bool {
    let Some(policy) = policy else {
        return true;
    };
    policy.inherited_blocked_keys.contains(upper)
        || has_prefix(upper, &policy.inherited_blocked_prefixes)
}

fn has_prefix(upper: &str, prefixes: &[String]) -> bool {
    prefixes.iter().any(|p| upper.starts_with(p.as_str()))
}

/// Matches `CARGO_TARGET_<triple>_LINKER` and `CARGO_TARGET_<triple>_RUNNER`.
/// OpenClaw requires the triple to be `[A-Z0-9_]+`; any non-empty triple is
/// accepted here, which blocks a superset.
fn is_cargo_target_executable_key(upper: &str) -> bool {
    let Some(rest) = upper.strip_prefix("CARGO_TARGET_") else {
        return false;
    };
    let triple = rest
        .strip_suffix("_LINKER")
        .or_else(|| rest.strip_suffix("_RUNNER"));
    matches!(triple, Some(t) if !t.is_empty())
}

#[cfg(test)]
#[path = "classify_tests.rs"]
mod tests;
