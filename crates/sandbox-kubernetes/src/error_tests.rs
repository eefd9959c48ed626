#![allow(clippy::unwrap_used, clippy::expect_used)]

use talon_sandbox_core::{SandboxError, SandboxErrorKind};

use super::*;

#[test]
fn refusals_are_config_errors_and_cluster_failures_keep_their_kind() {
    let refused: SandboxError = KubernetesError::RuntimeClassRequired.into();
    assert_eq!(refused.kind(), SandboxErrorKind::Config);
    for (kind, want) in [
        (
            ClusterErrorKind::Unavailable,
            SandboxErrorKind::EngineUnavailable,
        ),
        (ClusterErrorKind::NotFound, SandboxErrorKind::Gone),
        (ClusterErrorKind::Timeout, SandboxErrorKind::Timeout),
        (ClusterErrorKind::Forbidden, SandboxErrorKind::Config),
        (ClusterErrorKind::Exec, SandboxErrorKind::Exec),
    ] {
        let e = KubernetesError::from(ClusterError::new(kind, "x"));
        assert_eq!(e.code(), kind.code());
        assert_eq!(SandboxError::from(e).kind(), want, "{kind:?}");
    }
}

#[test]
fn codes_are_stable_and_distinct() {
    let errors = [
        KubernetesError::RuntimeClassRequired,
        KubernetesError::HostNetworkRefused,
        KubernetesError::EgressProxyMissing,
        KubernetesError::PrivilegedRefused,
        KubernetesError::CapDropWithoutAll,
        KubernetesError::UnconfinedProfile("seccompProfile"),
        KubernetesError::BindRefused("/etc:/etc".into()),
        KubernetesError::UserNotNumeric("bob".into()),
        KubernetesError::NoPod("c".into()),
    ];
    let mut codes: Vec<&str> = errors.iter().map(KubernetesError::code).collect();
    assert_eq!(codes[0], "sandbox.kubernetes.runtime_class_required");
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), errors.len());
}
