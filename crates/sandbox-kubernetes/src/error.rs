//! [`KubernetesError`]: what the backend refuses or what the cluster
//! answered, each with a stable code (`sandbox.kubernetes.*`), converted
//! into a [`SandboxError`] of the matching kind at the backend seam.

use talon_sandbox_core::{SandboxError, SandboxErrorKind};

use crate::cluster::{ClusterError, ClusterErrorKind};

/// Why the Kubernetes backend refused a request or failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KubernetesError {
    /// The template would run pods without a `RuntimeClass` (plain runc).
    #[error(
        "sandbox.kubernetes.runtimeClass is not set: pods would run under the node's default \
         runtime (runc), which is not an isolation boundary; set it to a gVisor or Kata \
         RuntimeClass, or set sandbox.kubernetes.dangerouslyAllowRuncRuntime: true"
    )]
    RuntimeClassRequired,
    /// A setting names a value that is not a valid Kubernetes name.
    #[error("{key}: {value:?} is not a valid Kubernetes name ({rule}); change it")]
    InvalidName {
        /// The config key.
        key: &'static str,
        /// The value given.
        value: String,
        /// The rule it breaks.
        rule: &'static str,
    },
    /// `network` is `host` (no pod of Talon's ever shares the node's
    /// network, PID or IPC namespace).
    #[error(
        "sandbox.docker.network: \"host\" is refused on Kubernetes (hostNetwork is never set); \
         use \"none\" or \"bridge\""
    )]
    HostNetworkRefused,
    /// `network` is neither `none` nor `bridge`.
    #[error(
        "sandbox.docker.network: {0:?} has no Kubernetes meaning; use \"none\" (no network) or \
         \"bridge\" (egress only through the gateway's proxy)"
    )]
    NetworkUnsupported(String),
    /// `network: bridge` without the egress proxy it is confined to.
    #[error(
        "sandbox.docker.network: \"bridge\" needs sandbox.kubernetes.egressProxy (the gateway's \
         egress proxy Service: pod labels and port); without it use \"none\""
    )]
    EgressProxyMissing,
    /// `privileged: true`.
    #[error("sandbox.docker.privileged is refused on Kubernetes, as on Docker; remove it")]
    PrivilegedRefused,
    /// A non-empty `capAdd`.
    #[error("sandbox.docker.capAdd ({0}) is refused on Kubernetes, as on Docker; remove it")]
    CapAddRefused(String),
    /// `capDrop` without `ALL`.
    #[error(
        "sandbox.docker.capDrop must contain \"ALL\" on Kubernetes (every capability is \
         dropped); add it"
    )]
    CapDropWithoutAll,
    /// A `seccompProfile` / `apparmorProfile` of `unconfined`.
    #[error(
        "sandbox.docker.{0}: \"unconfined\" is refused on Kubernetes (this backend has no \
         break-glass switch for it); remove it"
    )]
    UnconfinedProfile(&'static str),
    /// A host bind: a remote pod has no host paths.
    #[error(
        "sandbox.docker.binds: {0:?} is a host path, which a pod on a cluster cannot mount; \
         remove it (volumes from PVCs or ConfigMaps are not supported yet)"
    )]
    BindRefused(String),
    /// A setting this backend cannot apply on a pod (a restriction the
    /// user wrote is never dropped silently).
    #[error(
        "sandbox.docker.{key} is set, but the kubernetes backend cannot apply it ({why}); remove it"
    )]
    UnsupportedSetting {
        /// The config key under `sandbox.docker`.
        key: &'static str,
        /// Why.
        why: &'static str,
    },
    /// A size or CPU value that is not a quantity this backend reads.
    #[error(
        "sandbox.docker.{key}: {value:?} is not a size this backend can read (bytes, or a number with b, k, m or g)"
    )]
    InvalidQuantity {
        /// The config key under `sandbox.docker`.
        key: &'static str,
        /// The value given.
        value: String,
    },
    /// `user` is not numeric (a pod's `runAsUser` is a uid).
    #[error("sandbox.docker.user: {0:?} must be a numeric uid or uid:gid on Kubernetes")]
    UserNotNumeric(String),
    /// A claim by that name exists but is not labelled as Talon's.
    #[error(
        "SandboxClaim {name} in namespace {namespace} exists but is not Talon's (no \
         talon.sandbox=1 label); Talon will not adopt or delete it — rename or remove it"
    )]
    NotOwned {
        /// The namespace.
        namespace: String,
        /// The claim name.
        name: String,
    },
    /// The claim did not report a pod when it became ready.
    #[error("SandboxClaim {0} is ready but names no pod in its status")]
    NoPod(String),
    /// The cluster's answer.
    #[error(transparent)]
    Cluster(#[from] ClusterError),
}

impl KubernetesError {
    /// The stable code (`sandbox.kubernetes.<what>`).
    pub fn code(&self) -> &'static str {
        match self {
            KubernetesError::RuntimeClassRequired => "sandbox.kubernetes.runtime_class_required",
            KubernetesError::InvalidName { .. } => "sandbox.kubernetes.invalid_name",
            KubernetesError::HostNetworkRefused => "sandbox.kubernetes.host_network_refused",
            KubernetesError::NetworkUnsupported(_) => "sandbox.kubernetes.network_unsupported",
            KubernetesError::EgressProxyMissing => "sandbox.kubernetes.egress_proxy_missing",
            KubernetesError::PrivilegedRefused => "sandbox.kubernetes.privileged_refused",
            KubernetesError::CapAddRefused(_) => "sandbox.kubernetes.cap_add_refused",
            KubernetesError::CapDropWithoutAll => "sandbox.kubernetes.cap_drop_without_all",
            KubernetesError::UnconfinedProfile(_) => "sandbox.kubernetes.unconfined_profile",
            KubernetesError::BindRefused(_) => "sandbox.kubernetes.bind_refused",
            KubernetesError::UnsupportedSetting { .. } => "sandbox.kubernetes.unsupported_setting",
            KubernetesError::InvalidQuantity { .. } => "sandbox.kubernetes.invalid_quantity",
            KubernetesError::UserNotNumeric(_) => "sandbox.kubernetes.user_not_numeric",
            KubernetesError::NotOwned { .. } => "sandbox.kubernetes.not_owned",
            KubernetesError::NoPod(_) => "sandbox.kubernetes.no_pod",
            KubernetesError::Cluster(e) => e.kind().code(),
        }
    }

    /// The [`SandboxErrorKind`] it becomes at the backend seam.
    pub fn sandbox_kind(&self) -> SandboxErrorKind {
        match self {
            KubernetesError::Cluster(e) => match e.kind() {
                ClusterErrorKind::Unavailable => SandboxErrorKind::EngineUnavailable,
                ClusterErrorKind::NotFound => SandboxErrorKind::Gone,
                ClusterErrorKind::Timeout => SandboxErrorKind::Timeout,
                ClusterErrorKind::Forbidden | ClusterErrorKind::Invalid => SandboxErrorKind::Config,
                ClusterErrorKind::Conflict | ClusterErrorKind::Exec => SandboxErrorKind::Exec,
            },
            KubernetesError::NoPod(_) => SandboxErrorKind::Exec,
            _ => SandboxErrorKind::Config,
        }
    }
}

impl From<KubernetesError> for SandboxError {
    fn from(e: KubernetesError) -> Self {
        SandboxError::new(e.sandbox_kind(), e.to_string()).with_source(e)
    }
}

#[cfg(test)]
#[path = "error_tests.rs"]
mod tests;
