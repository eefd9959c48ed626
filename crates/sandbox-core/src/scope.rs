//! Scope keys, slugs, container names and per-scope workspace dirs.
//!
//! - scope key: `session` → the trimmed session key (`main` when empty);
//!   `agent` → `agent:<agentId>`; `shared` → `shared`.
//! - slug: trimmed key (`session` when empty), lowercased, each run of
//!   characters outside `[a-z0-9._-]` replaced by `-`, leading and
//!   trailing `-` removed, at most 32 characters (`session` when nothing
//!   is left), then `-` and the first 8 hex digits of the SHA-256 of the
//!   trimmed key. The shared scope's slug is plain `shared`.
//! - container name: `<containerPrefix><slug>`, at most 63 characters.
//! - workspace dir: `<workspaceRoot>/<slug>`; the shared scope uses the
//!   workspace root itself.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::sandbox_config::SandboxScope;

/// Docker's limit on a container name that Talon keeps to.
pub const MAX_CONTAINER_NAME_LEN: usize = 63;
/// The longest slug base before the hash suffix.
pub const MAX_SLUG_BASE_LEN: usize = 32;
/// The scope key of the shared scope.
pub const SHARED_SCOPE_KEY: &str = "shared";

/// The scope key of a session's sandbox.
pub fn scope_key(scope: SandboxScope, agent_id: &str, session_key: &str) -> String {
    match scope {
        SandboxScope::Session => {
            let key = session_key.trim();
            if key.is_empty() {
                "main".to_owned()
            } else {
                key.to_owned()
            }
        }
        SandboxScope::Agent => format!("agent:{}", agent_id.trim()),
        SandboxScope::Shared => SHARED_SCOPE_KEY.to_owned(),
    }
}

/// SHA-256 of `text` as lowercase hex.
pub(crate) fn sha256_hex(text: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(text);
    let mut out = String::with_capacity(64);
    for byte in digest {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    out
}

/// A key's slug: readable, bounded, and made unique by a hash suffix.
pub fn slugify_scope_key(key: &str) -> String {
    let trimmed = match key.trim() {
        "" => "session",
        t => t,
    };
    let hash = sha256_hex(trimmed.as_bytes());
    let mut safe = String::with_capacity(trimmed.len());
    let mut in_run = false;
    for c in trimmed.to_lowercase().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-') {
            safe.push(c);
            in_run = false;
        } else if !in_run {
            safe.push('-');
            in_run = true;
        }
    }
    let safe = safe.trim_matches('-');
    let base: String = safe.chars().take(MAX_SLUG_BASE_LEN).collect();
    let base = if base.is_empty() {
        "session".to_owned()
    } else {
        base
    };
    format!("{base}-{}", &hash[..8])
}

/// The slug of a scope key (`shared` for the shared scope).
pub fn scope_slug(scope: SandboxScope, scope_key: &str) -> String {
    match scope {
        SandboxScope::Shared => SHARED_SCOPE_KEY.to_owned(),
        SandboxScope::Session | SandboxScope::Agent => slugify_scope_key(scope_key),
    }
}

/// The container (or remote sandbox) name of a scope.
pub fn container_name(prefix: &str, scope: SandboxScope, scope_key: &str) -> String {
    let name = format!("{prefix}{}", scope_slug(scope, scope_key));
    name.chars().take(MAX_CONTAINER_NAME_LEN).collect()
}

/// The host directory holding a scope's sandbox workspace.
pub fn scope_workspace_dir(workspace_root: &Path, scope: SandboxScope, scope_key: &str) -> PathBuf {
    match scope {
        SandboxScope::Shared => workspace_root.to_path_buf(),
        SandboxScope::Session | SandboxScope::Agent => {
            workspace_root.join(slugify_scope_key(scope_key))
        }
    }
}

#[cfg(test)]
#[path = "scope_tests.rs"]
mod tests;
