//! Talon's own keys in the top-level `browser` section. OpenClaw's
//! `browser` section configures its browser control service; Talon reads
//! none of that (its other keys are dropped with a notice, or refused when
//! they restrict, see `openclaw_keys`), and adds:
//!
//! - `browser.maxDownloadBytes`: the largest download the `browser` tool
//!   keeps (default 100 MiB, from 1 byte to 4 GiB). A download announcing
//!   more, or passing it while it arrives, is cancelled and deleted.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The default download limit (100 MiB).
pub const DEFAULT_MAX_DOWNLOAD_BYTES: u64 = 100 * 1024 * 1024;
/// The largest download limit accepted (4 GiB).
pub const MAX_DOWNLOAD_BYTES_LIMIT: u64 = 4 * 1024 * 1024 * 1024;

/// The Talon-only keys of `browser`.
pub const TALON_KEYS: &[&str] = &["maxDownloadBytes"];

/// `browser` (Talon's keys only).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BrowserConfig {
    /// The largest download the `browser` tool keeps, in bytes (default
    /// 104857600, 100 MiB; at most 4294967296, 4 GiB). Larger downloads
    /// are cancelled and deleted, on the host and in a sandbox alike.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 4294967296u64))]
    pub max_download_bytes: Option<u64>,
}

impl BrowserConfig {
    /// The download limit in force.
    pub fn max_download_bytes(&self) -> u64 {
        self.max_download_bytes
            .unwrap_or(DEFAULT_MAX_DOWNLOAD_BYTES)
    }

    /// Each out-of-range value as (key, message).
    pub fn validate(&self) -> Vec<(String, String)> {
        match self.max_download_bytes {
            Some(n) if n == 0 || n > MAX_DOWNLOAD_BYTES_LIMIT => vec![(
                "maxDownloadBytes".to_owned(),
                format!(
                    "must be from 1 to {MAX_DOWNLOAD_BYTES_LIMIT} bytes (4 GiB), found {n}; the default is {DEFAULT_MAX_DOWNLOAD_BYTES} (100 MiB)"
                ),
            )],
            _ => Vec::new(),
        }
    }
}
