//! [`ClusterApi`]: the few calls the backend makes to a cluster. A real
//! implementation over `kube-rs` (typed `SandboxClaim` / `SandboxTemplate`
//! resources, the `pods/exec` WebSocket) does not exist yet; the crate's
//! tests drive the backend over an in-memory fake.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;
use talon_sandbox_core::ExitStatus;

/// What kind of failure a cluster call reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ClusterErrorKind {
    /// The API server cannot be reached (or the CRDs are not served).
    Unavailable,
    /// The object does not exist.
    NotFound,
    /// The object exists already, or changed underneath.
    Conflict,
    /// RBAC refused the call.
    Forbidden,
    /// The API server refused the object as invalid.
    Invalid,
    /// A wait ran past its deadline.
    Timeout,
    /// An exec failed to start or its stream broke.
    Exec,
}

impl ClusterErrorKind {
    /// The stable code (`sandbox.kubernetes.cluster_<kind>`).
    pub fn code(self) -> &'static str {
        match self {
            ClusterErrorKind::Unavailable => "sandbox.kubernetes.cluster_unavailable",
            ClusterErrorKind::NotFound => "sandbox.kubernetes.cluster_not_found",
            ClusterErrorKind::Conflict => "sandbox.kubernetes.cluster_conflict",
            ClusterErrorKind::Forbidden => "sandbox.kubernetes.cluster_forbidden",
            ClusterErrorKind::Invalid => "sandbox.kubernetes.cluster_invalid",
            ClusterErrorKind::Timeout => "sandbox.kubernetes.cluster_timeout",
            ClusterErrorKind::Exec => "sandbox.kubernetes.cluster_exec",
        }
    }
}

/// A failed cluster call: its kind and what the API server said.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("kubernetes API: {message}")]
pub struct ClusterError {
    kind: ClusterErrorKind,
    message: String,
}

impl ClusterError {
    /// A failure of `kind`.
    pub fn new(kind: ClusterErrorKind, message: impl Into<String>) -> Self {
        ClusterError {
            kind,
            message: message.into(),
        }
    }

    /// Its kind.
    pub fn kind(&self) -> ClusterErrorKind {
        self.kind
    }
}

/// A `SandboxClaim` as the backend reads it back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimInfo {
    /// Its name.
    pub name: String,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
    /// Its annotations.
    pub annotations: BTreeMap<String, String>,
    /// Whether its `Ready` condition is true.
    pub ready: bool,
    /// The pod of its bound `Sandbox`, once known.
    pub pod: Option<String>,
    /// Its creation time (ms since the epoch), when known.
    pub created_at_ms: Option<u64>,
}

/// What one exec in a pod printed and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecOutput {
    /// Its stdout.
    pub stdout: Vec<u8>,
    /// Its stderr.
    pub stderr: Vec<u8>,
    /// Its status (from the exec status channel).
    pub status: ExitStatus,
}

/// The cluster calls the backend needs, all in one namespace.
#[async_trait::async_trait]
pub trait ClusterApi: Send + Sync + std::fmt::Debug {
    /// Create the `SandboxTemplate` (and its NetworkPolicy) unless one by
    /// that name exists (templates are immutable: same name, same content).
    async fn apply_template(
        &self,
        namespace: &str,
        template: &Value,
        network_policy: &Value,
    ) -> Result<(), ClusterError>;

    /// The claim by that name, if any.
    async fn get_claim(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<ClaimInfo>, ClusterError>;

    /// Create a claim from its manifest.
    async fn create_claim(&self, namespace: &str, claim: &Value) -> Result<(), ClusterError>;

    /// Delete a claim with foreground propagation (its pod is gone when
    /// this returns).
    async fn delete_claim(&self, namespace: &str, name: &str) -> Result<(), ClusterError>;

    /// The claims matching a label selector (`k=v,k2=v2`).
    async fn list_claims(
        &self,
        namespace: &str,
        selector: &str,
    ) -> Result<Vec<ClaimInfo>, ClusterError>;

    /// Wait until the claim is `Ready` (or `timeout` passes:
    /// [`ClusterErrorKind::Timeout`]) and return it.
    async fn wait_ready(
        &self,
        namespace: &str,
        name: &str,
        timeout: Duration,
    ) -> Result<ClaimInfo, ClusterError>;

    /// Run `argv` in the pod's sandbox container to completion (stdin
    /// given whole), killed at `timeout`.
    async fn exec(
        &self,
        namespace: &str,
        pod: &str,
        argv: &[String],
        stdin: Option<Vec<u8>>,
        timeout: Duration,
    ) -> Result<ExecOutput, ClusterError>;
}
