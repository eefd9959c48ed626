//! The marker file that makes a remote directory Talon's:
//! `<workspaceRoot>/<name>/.talon-sandbox.json`. `talon sandbox ls|rm`
//! only ever list or remove directories that hold one.

use serde::{Deserialize, Serialize};

/// The marker's file name inside a sandbox's remote directory.
pub const MARKER_FILE: &str = ".talon-sandbox.json";
/// The sync manifest's file name inside a sandbox's remote directory.
pub const MANIFEST_FILE: &str = ".talon-manifest.json";

/// What the marker records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Marker {
    /// Always 1: the directory is a Talon sandbox.
    pub talon_sandbox: u32,
    /// The sandbox name (the directory's name).
    pub name: String,
    /// The scope key it was created for.
    pub scope_key: String,
    /// The config hash of the last ensure.
    pub config_hash: String,
    /// When it was created (ms since the epoch).
    pub created_at_ms: u64,
    /// When it was last ensured (ms since the epoch).
    pub last_used_at_ms: u64,
}

pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Whether `name` can be a sandbox directory name (what `talon sandbox
/// rm` accepts): letters, digits, `.`, `_`, `-`; not `.` or `..`.
pub(crate) fn is_sandbox_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name.len() <= 255
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}
