//! Talon's `kubernetes` sandbox backend, **as a skeleton**: the pure parts
//! of `docs/kubernetes-sandbox.md` as real, unit-tested code, and a
//! [`KubernetesBackend`] that implements
//! [`SandboxBackend`](talon_sandbox_core::SandboxBackend) over a small
//! [`ClusterApi`] trait.
//!
//! What it is:
//! - [`ClaimIdentity`]: a scope's claim name (the sandbox name as a
//!   DNS-1123 label) and its labels `talon.sandbox=1`,
//!   `talon.scope-key=<hash>`, `talon.config-hash=<hash>`, with the whole
//!   scope key and config hash as annotations.
//! - [`sandbox_template`], [`sandbox_claim`], [`network_policy`]: the
//!   agent-sandbox `SandboxTemplate` / `SandboxClaim` and the
//!   `NetworkPolicy` as JSON, built from the resolved sandbox config after
//!   [`check_settings`] refused what the design refuses (no
//!   `RuntimeClass` without `dangerouslyAllowRuncRuntime`, host network,
//!   privileged, `capAdd`, `capDrop` without `ALL`, unconfined profiles,
//!   host binds, settings a pod cannot carry), each refusal a typed
//!   [`KubernetesError`] with a stable code.
//! - [`KubernetesBackend`]: `ensure` (template, claim get-or-create,
//!   ownership and config-hash checks, wait for ready), `list_owned`,
//!   `remove` (only claims labelled as Talon's), all through
//!   [`ClusterApi`]; its handle runs scripts through the cluster's exec.
//!
//! What it is NOT:
//! - There is **no real [`ClusterApi`]**: no `kube-rs` client, nothing in
//!   this crate has ever talked to a cluster. Its tests run the backend
//!   over an in-memory fake; the manifests follow the design's reading of
//!   agent-sandbox's `v1beta1` API and have not been applied anywhere.
//! - It is **not registered**: no runtime, CLI or gateway lists it, and no
//!   config key selects it (`sandbox.backend: "kubernetes"` is a missing
//!   backend, as any unknown id).
//! - The `exec` tool's streaming launcher ([`PodLauncher`] refuses every
//!   launch), the file bridge, the workspace upload and sync (gap 2 of the
//!   design), warm pools, the CNI probe and prune of templates are not
//!   written.
#![deny(missing_docs)]

pub use crate::backend::{KUBERNETES_BACKEND_ID, KubernetesBackend};
pub use crate::cluster::{ClaimInfo, ClusterApi, ClusterError, ClusterErrorKind, ExecOutput};
pub use crate::error::KubernetesError;
pub use crate::handle::{KubernetesSandbox, PodLauncher};
pub use crate::manifests::{
    CONTAINER_NAME, EXTENSIONS_API_VERSION, WORKSPACE_VOLUME, check_settings, network_policy,
    rfc3339_utc, sandbox_claim, sandbox_template,
};
pub use crate::names::{
    ANNOTATION_CONFIG_HASH, ANNOTATION_SCOPE_KEY, ClaimIdentity, LABEL_CONFIG_HASH, LABEL_HASH_LEN,
    LABEL_SANDBOX, LABEL_SCOPE_KEY, MAX_CLAIM_NAME_LEN, TEMPLATE_HASH_LEN, claim_name,
    config_hash_label, kubernetes_config_hash, owned_selector, scope_key_label, template_name,
};
pub use crate::settings::{
    DEFAULT_MAX_AGE, DEFAULT_NAMESPACE, DEFAULT_READY_TIMEOUT, DEFAULT_WORKSPACE_SIZE, EgressProxy,
    KubernetesSettings,
};

mod backend;
mod cluster;
mod error;
mod handle;
mod manifests;
mod names;
mod settings;
#[cfg(test)]
mod test_support;
