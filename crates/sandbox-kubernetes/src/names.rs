//! How a Talon scope maps to Kubernetes names and labels: the claim name,
//! the template name, the ownership labels and the annotations that keep
//! what does not fit in a label value.

use std::collections::BTreeMap;

use talon_sandbox_core::{SandboxRequest, hash_value};

use crate::error::KubernetesError;
use crate::settings::KubernetesSettings;

/// Marks every object Talon created (`talon.sandbox=1`); nothing without it
/// is adopted, listed or deleted.
pub const LABEL_SANDBOX: &str = "talon.sandbox";
/// The hash of the scope key (a label value is at most 63 characters; the
/// key itself is in [`ANNOTATION_SCOPE_KEY`]).
pub const LABEL_SCOPE_KEY: &str = "talon.scope-key";
/// The first [`LABEL_HASH_LEN`] hex digits of the Kubernetes config hash.
pub const LABEL_CONFIG_HASH: &str = "talon.config-hash";
/// The scope key, whole.
pub const ANNOTATION_SCOPE_KEY: &str = "talon.scope-key";
/// The Kubernetes config hash, whole.
pub const ANNOTATION_CONFIG_HASH: &str = "talon.config-hash";
/// How many hex digits of a hash go into a label value or a name.
pub const LABEL_HASH_LEN: usize = 40;
/// How many hex digits of the config hash name a template.
pub const TEMPLATE_HASH_LEN: usize = 16;
/// The longest claim name (a DNS-1123 label: it names the pod too).
pub const MAX_CLAIM_NAME_LEN: usize = 63;

/// The label selector of everything Talon owns.
pub fn owned_selector() -> String {
    format!("{LABEL_SANDBOX}=1")
}

/// The config hash of a request on Kubernetes: the sandbox config hash
/// plus the settings that shape a template, so a changed namespace,
/// runtime class, storage or proxy is a new template and new claims.
pub fn kubernetes_config_hash(request: &SandboxRequest, settings: &KubernetesSettings) -> String {
    hash_value(&serde_json::json!({
        "sandbox": request.config_hash,
        "kubernetes": settings.hash_document(),
    }))
}

/// The hash of a scope key, as a label value.
pub fn scope_key_label(scope_key: &str) -> String {
    let mut hash = hash_value(&serde_json::Value::String(scope_key.to_owned()));
    hash.truncate(LABEL_HASH_LEN);
    hash
}

/// A config hash cut to a label value.
pub fn config_hash_label(config_hash: &str) -> String {
    config_hash.chars().take(LABEL_HASH_LEN).collect()
}

/// The template of a configuration: `talon-<16 hex digits of its hash>`.
pub fn template_name(config_hash: &str) -> String {
    let prefix: String = config_hash.chars().take(TEMPLATE_HASH_LEN).collect();
    format!("talon-{prefix}")
}

/// The claim of a sandbox: its name as a DNS-1123 label (lowercase; `_`
/// and `.`, which container names allow, become `-`). The name's hash
/// suffix (from the scope key) keeps it unique.
pub fn claim_name(sandbox_name: &str) -> Result<String, KubernetesError> {
    let invalid = |rule| KubernetesError::InvalidName {
        key: "sandbox.docker.containerPrefix",
        value: sandbox_name.to_owned(),
        rule,
    };
    let mapped: String = sandbox_name
        .trim()
        .to_lowercase()
        .chars()
        .map(|c| if matches!(c, '_' | '.') { '-' } else { c })
        .collect();
    if !mapped
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err(invalid("letters, digits and '-' only"));
    }
    let name = mapped.trim_matches('-');
    if name.is_empty() {
        return Err(invalid("must contain a letter or digit"));
    }
    if name.len() > MAX_CLAIM_NAME_LEN {
        return Err(invalid("at most 63 characters"));
    }
    Ok(name.to_owned())
}

/// The labels and annotations of one scope's claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimIdentity {
    /// The claim's name.
    pub name: String,
    /// `talon.sandbox`, `talon.scope-key`, `talon.config-hash`.
    pub labels: BTreeMap<String, String>,
    /// The whole scope key and config hash.
    pub annotations: BTreeMap<String, String>,
    /// The whole Kubernetes config hash.
    pub config_hash: String,
}

impl ClaimIdentity {
    /// The identity of `request`'s claim under `settings`.
    pub fn of(
        request: &SandboxRequest,
        settings: &KubernetesSettings,
    ) -> Result<Self, KubernetesError> {
        let config_hash = kubernetes_config_hash(request, settings);
        let labels = BTreeMap::from([
            (LABEL_SANDBOX.to_owned(), "1".to_owned()),
            (
                LABEL_SCOPE_KEY.to_owned(),
                scope_key_label(&request.scope_key),
            ),
            (
                LABEL_CONFIG_HASH.to_owned(),
                config_hash_label(&config_hash),
            ),
        ]);
        let annotations = BTreeMap::from([
            (ANNOTATION_SCOPE_KEY.to_owned(), request.scope_key.clone()),
            (ANNOTATION_CONFIG_HASH.to_owned(), config_hash.clone()),
        ]);
        Ok(ClaimIdentity {
            name: claim_name(&request.sandbox_name)?,
            labels,
            annotations,
            config_hash,
        })
    }
}

#[cfg(test)]
#[path = "names_tests.rs"]
mod tests;
