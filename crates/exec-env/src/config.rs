//! `tools.exec.env` (and an agent's `tools.exec.env`): plain data, typed
//! here so `talon-config` can hold it without depending on a behaviour
//! crate.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::classify::{EnvKeyVerdict, classify_override_key, is_valid_env_key, trim_key};
use crate::pattern::NamePattern;

/// Which part of the host environment a child starts from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum InheritMode {
    /// Only the core variables ([`CORE_VARS`](crate::CORE_VARS) and
    /// `LC_*`); the default.
    #[default]
    Core,
    /// Every variable (the excludes still apply).
    All,
    /// Nothing: the child gets only `set` (and what its launcher adds).
    None,
}

impl InheritMode {
    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            InheritMode::Core => "core",
            InheritMode::All => "all",
            InheritMode::None => "none",
        }
    }
}

/// `tools.exec.env`: how every child environment is built (host `exec`,
/// sandboxed `exec`, stdio MCP servers and command hooks).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ExecEnvConfig {
    /// Which host variables a host child starts from: `core` (the
    /// default), `all` or `none`. Sandboxed runs never inherit host
    /// variables.
    pub inherit: InheritMode,
    /// More name patterns never inherited (`*` is the only wildcard, case
    /// ignored), on top of the built-in credential patterns and Talon's own
    /// variables, which always apply.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    /// When given, only inherited variables matching one of these patterns
    /// are kept (after `inherit` and the excludes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_only: Option<Vec<String>>,
    /// Variables every child gets (after the inherited base; a sandboxed
    /// run gets them too). Values are the operator's: they are not
    /// filtered by the excludes. A value may hold `${secret:NAME}` (the
    /// state directory's secrets file) and `${VAR}` (the gateway's
    /// environment) references, expanded when the runtime is built.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub set: BTreeMap<String, String>,
}

/// An agent's `tools.exec.env` (`agents.list[].tools.exec.env`): `inherit`
/// replaces the global one, `exclude` adds to it, `includeOnly` applies as
/// well as the global one (a variable must match both), and `set` is
/// merged over the global one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct AgentExecEnvConfig {
    /// See [`ExecEnvConfig::inherit`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inherit: Option<InheritMode>,
    /// See [`ExecEnvConfig::exclude`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    /// See [`ExecEnvConfig::include_only`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_only: Option<Vec<String>>,
    /// See [`ExecEnvConfig::set`].
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub set: BTreeMap<String, String>,
}

/// One problem in an env section, at its key path relative to the
/// section (`exclude[2]`, `set.LD_PRELOAD`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct EnvConfigError {
    /// The key path relative to the `env` section.
    pub key: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// The reserved namespaces no configured or supplied variable may use.
pub(crate) const RESERVED_PREFIXES: [&str; 2] = ["TALON_", "OPENCLAW_"];

/// Checks patterns and `set` entries; every problem is reported.
pub(crate) fn check_parts(
    exclude: &[String],
    include_only: Option<&[String]>,
    set: &BTreeMap<String, String>,
) -> Vec<EnvConfigError> {
    let mut out = Vec::new();
    let lists = [("exclude", Some(exclude)), ("includeOnly", include_only)];
    for (name, list) in lists {
        for (i, p) in list.unwrap_or_default().iter().enumerate() {
            if let Err(e) = NamePattern::parse(p) {
                out.push(EnvConfigError {
                    key: format!("{name}[{i}]"),
                    message: e.to_string(),
                });
            }
        }
    }
    for (key, value) in set {
        if let Some(message) = set_entry_problem(key, value) {
            out.push(EnvConfigError {
                key: format!("set.{key}"),
                message,
            });
        }
    }
    out
}

/// Why `key = value` cannot be in `set`, if it cannot.
fn set_entry_problem(key: &str, value: &str) -> Option<String> {
    if !is_valid_env_key(key) || trim_key(key) != key {
        return Some(format!(
            "{key:?} is not a variable name; use [A-Za-z_][A-Za-z0-9_]*"
        ));
    }
    if value.contains('\0') {
        return Some("the value contains a NUL byte, which no environment can carry".to_owned());
    }
    let upper = key.to_uppercase();
    if RESERVED_PREFIXES.iter().any(|p| upper.starts_with(p)) {
        return Some(format!(
            "{key} is in Talon's reserved namespace (TALON_*, OPENCLAW_*); choose another name"
        ));
    }
    if classify_override_key(key) == EnvKeyVerdict::BlockedEverywhere {
        return Some(format!(
            "{key} is a loader or interpreter-startup variable that is blocked everywhere; remove it"
        ));
    }
    None
}

impl ExecEnvConfig {
    /// Every problem in the section (patterns that are not `*`-only
    /// globs, `set` entries with bad names, NUL values, reserved or
    /// blocked names).
    pub fn validate(&self) -> Vec<EnvConfigError> {
        check_parts(&self.exclude, self.include_only.as_deref(), &self.set)
    }
}

impl AgentExecEnvConfig {
    /// Every problem in the section, as [`ExecEnvConfig::validate`].
    pub fn validate(&self) -> Vec<EnvConfigError> {
        check_parts(&self.exclude, self.include_only.as_deref(), &self.set)
    }
}
