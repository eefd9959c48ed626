//! The config hash: a SHA-256 over everything that, when changed, needs a
//! new sandbox (it is stored on the container; a mismatch recreates it).
//!
//! Inputs: the resolved Docker settings, the workspace access, the mounted
//! workspace dir, the agent workspace dir, [`MOUNT_FORMAT_VERSION`], the
//! create-args epoch and the read-only skill mounts. They are normalised
//! first: object keys sorted recursively, absent (`null`) values dropped,
//! so two configs that mean the same thing hash the same.
//!
//! Key order follows JavaScript's `localeCompare` as OpenClaw does, not
//! byte order: letters compare case-insensitively first (lowercase before
//! uppercase on a tie), and punctuation sorts before digits before letters.
//! This is an ASCII approximation of ICU's root collation, enough for the
//! ASCII keys the inputs have. Talon's hashes are its own (its containers
//! carry Talon labels), so bit-compatibility with OpenClaw is not a goal;
//! stability is.

use std::cmp::Ordering;
use std::path::Path;

use serde_json::{Map, Value};

use crate::docker_config::DockerSettings;
use crate::mounts::MOUNT_FORMAT_VERSION;
use crate::sandbox_config::WorkspaceAccess;
use crate::scope::sha256_hex;

/// Bumped when the container create arguments change meaning; a bump
/// recreates every sandbox.
pub const SANDBOX_CREATE_ARGS_EPOCH: &str = "2026-12-05-tmpfs-size";

/// What the config hash covers.
#[derive(Debug, Clone, Copy)]
pub struct ConfigHashInputs<'a> {
    /// The resolved Docker settings.
    pub docker: &'a DockerSettings,
    /// The workspace access mode.
    pub workspace_access: WorkspaceAccess,
    /// The dir mounted at the workdir.
    pub workspace_dir: &'a Path,
    /// The agent's workspace dir.
    pub agent_workspace_dir: &'a Path,
    /// The read-only skill mounts (`host:container:ro`).
    pub read_only_skill_mounts: &'a [String],
}

/// The normalised JSON document the hash is taken over.
pub fn config_hash_document(inputs: &ConfigHashInputs<'_>) -> Value {
    let docker = serde_json::to_value(inputs.docker).unwrap_or(Value::Null);
    let mut doc = Map::new();
    doc.insert("docker".to_owned(), docker);
    doc.insert(
        "workspaceAccess".to_owned(),
        Value::String(inputs.workspace_access.as_str().to_owned()),
    );
    doc.insert(
        "workspaceDir".to_owned(),
        Value::String(inputs.workspace_dir.to_string_lossy().into_owned()),
    );
    doc.insert(
        "agentWorkspaceDir".to_owned(),
        Value::String(inputs.agent_workspace_dir.to_string_lossy().into_owned()),
    );
    doc.insert(
        "mountFormatVersion".to_owned(),
        Value::from(MOUNT_FORMAT_VERSION),
    );
    doc.insert(
        "createArgsEpoch".to_owned(),
        Value::String(SANDBOX_CREATE_ARGS_EPOCH.to_owned()),
    );
    doc.insert(
        "readOnlyWorkspaceSkillMounts".to_owned(),
        Value::Array(
            inputs
                .read_only_skill_mounts
                .iter()
                .map(|m| Value::String(m.clone()))
                .collect(),
        ),
    );
    normalize(&Value::Object(doc))
}

/// SHA-256 hex of the normalised document.
pub fn config_hash(inputs: &ConfigHashInputs<'_>) -> String {
    // The document is already normalised.
    let text = serde_json::to_string(&config_hash_document(inputs)).unwrap_or_default();
    sha256_hex(text.as_bytes())
}

/// SHA-256 hex of a value's normalised compact JSON.
pub fn hash_value(value: &Value) -> String {
    let text = serde_json::to_string(&normalize(value)).unwrap_or_default();
    sha256_hex(text.as_bytes())
}

/// Sort object keys recursively (see [`locale_compare`]) and drop `null`
/// members and array items.
pub(crate) fn normalize(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, _)| k)
                .collect();
            keys.sort_by(|a, b| locale_compare(a, b));
            let mut out = Map::new();
            for key in keys {
                if let Some(v) = map.get(key) {
                    out.insert(key.clone(), normalize(v));
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .filter(|v| !v.is_null())
                .map(normalize)
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The primary weight of a character: punctuation and symbols, then
/// digits, then letters (case folded).
fn primary(c: char) -> (u8, char) {
    if c.is_alphabetic() {
        (2, c.to_lowercase().next().unwrap_or(c))
    } else if c.is_numeric() {
        (1, c)
    } else {
        (0, c)
    }
}

/// An ASCII approximation of `String.prototype.localeCompare` (ICU root
/// collation): primary weights first, then lowercase before uppercase,
/// then code points.
pub fn locale_compare(a: &str, b: &str) -> Ordering {
    let pa = a.chars().map(primary);
    let pb = b.chars().map(primary);
    pa.cmp(pb)
        .then_with(|| {
            let ca = a.chars().map(|c| c.is_uppercase());
            let cb = b.chars().map(|c| c.is_uppercase());
            ca.cmp(cb)
        })
        .then_with(|| a.cmp(b))
}

#[cfg(test)]
#[path = "config_hash_tests.rs"]
mod tests;
