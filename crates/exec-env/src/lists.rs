//! The host environment key lists, loaded once from the embedded copy of
//! OpenClaw's `host-env-security-policy.json`.
//!
//! The lists are parsed lazily on first use. When the embedded JSON cannot
//! be parsed the policy is reported as unavailable and every caller fails
//! closed: every key is treated as blocked.

use std::collections::HashSet;
use std::sync::LazyLock;

use serde::Deserialize;

/// The embedded policy file (OpenClaw's exact lists plus derived sets).
pub(crate) const POLICY_JSON: &str = include_str!("../data/host-env-security-policy.json");

/// The raw lists exactly as OpenClaw ships them.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RawLists {
    /// Keys that are dangerous wherever they come from.
    pub(crate) blocked_everywhere_keys: Vec<String>,
    /// Keys that may be inherited from the host but never overridden.
    pub(crate) blocked_override_only_keys: Vec<String>,
    /// Override-only keys that are still passed on when inherited.
    pub(crate) allowed_inherited_override_only_keys: Vec<String>,
    /// Prefixes that may be inherited but never overridden.
    pub(crate) blocked_override_prefixes: Vec<String>,
    /// Prefixes that are dangerous wherever they come from.
    pub(crate) blocked_prefixes: Vec<String>,
}

/// The lookup sets OpenClaw derives from the raw lists; kept in the file so
/// a test can check that our derivation agrees with OpenClaw's.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DerivedLists {
    /// `blockedEverywhereKeys`, uppercased.
    pub(crate) blocked_keys: Vec<String>,
    /// `blockedOverrideOnlyKeys`, uppercased.
    pub(crate) blocked_override_keys: Vec<String>,
    /// Everywhere keys plus override-only keys that are not allowed when
    /// inherited.
    pub(crate) blocked_inherited_keys: Vec<String>,
    /// The prefixes dropped from the inherited environment.
    pub(crate) blocked_inherited_prefixes: Vec<String>,
}

/// The whole policy file.
#[derive(Debug, Deserialize)]
pub(crate) struct PolicyFile {
    /// The raw lists.
    pub(crate) raw: RawLists,
    /// The derived sets.
    pub(crate) derived: DerivedLists,
}

/// The lookup sets used at run time, every entry uppercased.
#[derive(Debug)]
pub(crate) struct Policy {
    /// Keys blocked wherever they come from.
    pub(crate) everywhere_keys: HashSet<String>,
    /// Prefixes blocked wherever they come from.
    pub(crate) everywhere_prefixes: Vec<String>,
    /// Keys blocked as overrides only.
    pub(crate) override_only_keys: HashSet<String>,
    /// Prefixes blocked as overrides only.
    pub(crate) override_only_prefixes: Vec<String>,
    /// Keys dropped from the inherited host environment.
    pub(crate) inherited_blocked_keys: HashSet<String>,
    /// Prefixes dropped from the inherited host environment.
    pub(crate) inherited_blocked_prefixes: Vec<String>,
}

impl Policy {
    /// Builds the lookup sets from the raw lists, the same way OpenClaw's
    /// `host-env-security-policy.js` does.
    pub(crate) fn from_raw(raw: &RawLists) -> Policy {
        let upper_set = |list: &[String]| -> HashSet<String> {
            list.iter().map(|k| k.trim().to_uppercase()).collect()
        };
        let upper_vec = |list: &[String]| -> Vec<String> {
            list.iter().map(|k| k.trim().to_uppercase()).collect()
        };
        let everywhere_keys = upper_set(&raw.blocked_everywhere_keys);
        let override_only_keys = upper_set(&raw.blocked_override_only_keys);
        let allowed_inherited = upper_set(&raw.allowed_inherited_override_only_keys);
        let mut inherited_blocked_keys = everywhere_keys.clone();
        inherited_blocked_keys.extend(
            override_only_keys
                .iter()
                .filter(|k| !allowed_inherited.contains(*k))
                .cloned(),
        );
        let everywhere_prefixes = upper_vec(&raw.blocked_prefixes);
        Policy {
            everywhere_keys,
            inherited_blocked_prefixes: everywhere_prefixes.clone(),
            everywhere_prefixes,
            override_only_keys,
            override_only_prefixes: upper_vec(&raw.blocked_override_prefixes),
            inherited_blocked_keys,
        }
    }
}

/// Why the embedded lists could not be loaded.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ListsError {
    /// The file is not valid JSON of the expected shape.
    #[error("parse error: {0}")]
    Parse(#[source] serde_json::Error),
    /// A derived set stored in the file disagrees with the raw lists.
    #[error("derived set {0} disagrees with the raw lists")]
    Disagrees(&'static str),
}

/// Parses the policy file text.
pub(crate) fn parse_policy_file(text: &str) -> Result<PolicyFile, serde_json::Error> {
    serde_json::from_str(text)
}

/// Parses the policy file and builds the lookup sets, checking them
/// against the derived sets stored in the file; any disagreement is an
/// error, so a hand-edited file cannot silently weaken the policy.
pub(crate) fn load_policy(text: &str) -> Result<Policy, ListsError> {
    let file = parse_policy_file(text).map_err(ListsError::Parse)?;
    let policy = Policy::from_raw(&file.raw);
    let as_set = |list: &[String]| -> HashSet<String> { list.iter().cloned().collect() };
    let checks = [
        (
            "blockedKeys",
            policy.everywhere_keys == as_set(&file.derived.blocked_keys),
        ),
        (
            "blockedOverrideKeys",
            policy.override_only_keys == as_set(&file.derived.blocked_override_keys),
        ),
        (
            "blockedInheritedKeys",
            policy.inherited_blocked_keys == as_set(&file.derived.blocked_inherited_keys),
        ),
        (
            "blockedInheritedPrefixes",
            as_set(&policy.inherited_blocked_prefixes)
                == as_set(&file.derived.blocked_inherited_prefixes),
        ),
    ];
    match checks.iter().find(|(_, ok)| !ok) {
        Some((name, _)) => Err(ListsError::Disagrees(name)),
        None => Ok(policy),
    }
}

static POLICY: LazyLock<Option<Policy>> = LazyLock::new(|| match load_policy(POLICY_JSON) {
    Ok(policy) => Some(policy),
    Err(err) => {
        tracing::error!(
            error = %err,
            "embedded host env security policy failed to load; every env key is blocked"
        );
        None
    }
});

/// The loaded policy, or `None` when it failed to load (callers must then
/// block every key).
pub(crate) fn current() -> Option<&'static Policy> {
    POLICY.as_ref()
}

#[cfg(test)]
#[path = "lists_tests.rs"]
mod tests;
