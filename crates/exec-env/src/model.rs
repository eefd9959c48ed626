//! The filter on a model's own `env` parameter: a refused key refuses the
//! whole call (the caller names every refused key and runs nothing).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::base::{is_credential_like, is_tls_verification};
use crate::classify::{EnvKeyVerdict, classify_override_key, trim_key};
use crate::config::RESERVED_PREFIXES;

/// Where the command of a model-supplied `env` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunPlace {
    /// On the host.
    Host,
    /// In a sandbox (container, bubblewrap or SSH host).
    Sandbox,
}

/// Why a model-supplied key is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ModelEnvRefusal {
    /// The name is not a variable name, or the value holds NUL.
    Invalid,
    /// `PATH` on the host (command resolution and the allowlist rely on it).
    Path,
    /// A loader, interpreter-startup, shell, proxy, credential or similar
    /// variable of OpenClaw's lists (compared ignoring case).
    Blocked,
    /// Talon's reserved namespaces (`TALON_*`, `OPENCLAW_*`).
    Reserved,
    /// It turns TLS verification off or replaces the trusted CAs.
    TlsVerification,
    /// A credential-looking name in a sandboxed run.
    Credential,
    /// A case variant of a name that is special only in one spelling
    /// (`Path` in a sandbox), or two keys that differ only in case.
    CaseVariant,
}

impl ModelEnvRefusal {
    /// Why, in words, for the tool error.
    pub fn explain(self) -> &'static str {
        match self {
            ModelEnvRefusal::Invalid => {
                "not a variable name ([A-Za-z_][A-Za-z0-9_]*) or a value with NUL"
            }
            ModelEnvRefusal::Path => "PATH cannot be set on the host",
            ModelEnvRefusal::Blocked => {
                "loader, interpreter-startup, shell, proxy, TLS and credential variables cannot be set (any case)"
            }
            ModelEnvRefusal::Reserved => "TALON_* and OPENCLAW_* are reserved",
            ModelEnvRefusal::TlsVerification => {
                "variables that turn TLS verification off or replace the trusted CAs cannot be set"
            }
            ModelEnvRefusal::Credential => {
                "credential-looking names (*KEY*, *SECRET*, *TOKEN*, *PASSWORD*, ...) cannot be set in a sandboxed run"
            }
            ModelEnvRefusal::CaseVariant => {
                "a case variant of a special name, or two keys that differ only in case"
            }
        }
    }

    /// A short stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            ModelEnvRefusal::Invalid => "invalid",
            ModelEnvRefusal::Path => "path",
            ModelEnvRefusal::Blocked => "blocked",
            ModelEnvRefusal::Reserved => "reserved",
            ModelEnvRefusal::TlsVerification => "tlsVerification",
            ModelEnvRefusal::Credential => "credential",
            ModelEnvRefusal::CaseVariant => "caseVariant",
        }
    }
}

/// One refused key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RefusedKey {
    /// The key as supplied (trimmed; the raw key when trimming leaves
    /// nothing).
    pub key: String,
    /// Why.
    pub reason: ModelEnvRefusal,
}

/// The result of [`check_model_env`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelEnvCheck {
    /// The keys that may be set, trimmed, in their supplied case. Only
    /// meaningful when nothing was refused.
    pub accepted: BTreeMap<String, String>,
    /// The refused keys, sorted by reason then key.
    pub refused: Vec<RefusedKey>,
}

impl ModelEnvCheck {
    /// Whether any key was refused (the call must then not run).
    pub fn is_refused(&self) -> bool {
        !self.refused.is_empty()
    }
}

/// Checks a model's own `env` for a command that runs at `place`. Keys
/// are compared uppercased, so `ld_preload`, `Path` and
/// `node_tls_reject_unauthorized` are caught; a key with surrounding
/// whitespace is refused (it would run under another name than the
/// approver saw). Only keys are ever logged.
pub fn check_model_env(overrides: &BTreeMap<String, String>, place: RunPlace) -> ModelEnvCheck {
    let mut out = ModelEnvCheck::default();
    let mut by_upper: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (raw_key, value) in overrides {
        let key = trim_key(raw_key);
        let reported = if key.is_empty() { raw_key } else { key };
        // A key with surrounding whitespace would run under another name
        // than the approver saw; refuse it rather than trim it.
        let refused = if key != raw_key.as_str() {
            Some(ModelEnvRefusal::Invalid)
        } else {
            refusal(key, value, place)
        };
        match refused {
            Some(reason) => out.refused.push(RefusedKey {
                key: reported.to_owned(),
                reason,
            }),
            None => {
                by_upper
                    .entry(key.to_uppercase())
                    .or_default()
                    .push(key.to_owned());
                out.accepted.insert(key.to_owned(), value.clone());
            }
        }
    }
    for keys in by_upper.into_values().filter(|k| k.len() > 1) {
        for key in keys {
            out.accepted.remove(&key);
            out.refused.push(RefusedKey {
                key,
                reason: ModelEnvRefusal::CaseVariant,
            });
        }
    }
    out.refused
        .sort_by(|a, b| a.reason.cmp(&b.reason).then_with(|| a.key.cmp(&b.key)));
    out.refused.dedup();
    if out.is_refused() {
        let keys: Vec<&str> = out.refused.iter().map(|r| r.key.as_str()).collect();
        tracing::warn!(?keys, ?place, "model-supplied exec env keys refused");
    }
    out
}

fn refusal(key: &str, value: &str, place: RunPlace) -> Option<ModelEnvRefusal> {
    if value.contains('\0') {
        return Some(ModelEnvRefusal::Invalid);
    }
    let upper = key.to_uppercase();
    let verdict = classify_override_key(key);
    if verdict == EnvKeyVerdict::Invalid {
        return Some(ModelEnvRefusal::Invalid);
    }
    if is_tls_verification(&upper) {
        return Some(ModelEnvRefusal::TlsVerification);
    }
    match verdict {
        EnvKeyVerdict::Path => {
            return match place {
                RunPlace::Host => Some(ModelEnvRefusal::Path),
                RunPlace::Sandbox if key != "PATH" => Some(ModelEnvRefusal::CaseVariant),
                RunPlace::Sandbox => None,
            };
        }
        EnvKeyVerdict::BlockedEverywhere | EnvKeyVerdict::BlockedOverrideOnly => {
            return Some(ModelEnvRefusal::Blocked);
        }
        EnvKeyVerdict::Allowed | EnvKeyVerdict::Invalid => {}
    }
    if RESERVED_PREFIXES.iter().any(|p| upper.starts_with(p)) {
        return Some(ModelEnvRefusal::Reserved);
    }
    if place == RunPlace::Sandbox && is_credential_like(key) {
        return Some(ModelEnvRefusal::Credential);
    }
    None
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
