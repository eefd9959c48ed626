//! `tools.web.fetch.ssrfAllowlist`: the operator's exceptions to the SSRF
//! rules, as configured, and the error of an entry that is not one.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tools.web.fetch.ssrfAllowlist`: the operator's explicit exceptions to
/// the SSRF rules.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SsrfAllowlistConfig {
    /// Host names reachable whatever they resolve to (except the
    /// unspecified addresses `0.0.0.0` and `::`). `*.example.com` matches
    /// the subdomains, not `example.com` itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// Networks in CIDR form (`127.0.0.1/32`, `fd00::/8`) whose addresses
    /// are reachable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cidrs: Vec<String>,
}

/// An allowlist entry that is neither a host name, a `*.suffix` pattern
/// nor a CIDR: the key and what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct AllowlistError {
    /// The config key, e.g. `tools.web.fetch.ssrfAllowlist.cidrs`.
    pub key: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl AllowlistError {
    pub(crate) fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        AllowlistError {
            key: key.into(),
            message: message.into(),
        }
    }
}
