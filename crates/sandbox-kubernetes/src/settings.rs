//! [`KubernetesSettings`]: what the backend needs beyond the Docker-shaped
//! sandbox settings. No config key reads them yet (the backend is not
//! registered); an embedder or a test builds them.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

/// The namespace claims, templates and policies go to by default.
pub const DEFAULT_NAMESPACE: &str = "talon-sandboxes";

/// The size of each claim's workspace volume by default.
pub const DEFAULT_WORKSPACE_SIZE: &str = "1Gi";

/// How long `ensure` waits for a claim's `Ready` condition by default.
pub const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(120);

/// How long a claim lives without use before the controller deletes it
/// (its `shutdownTime`), by default: 7 days, the prune `maxAgeDays`
/// default.
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(7 * 24 * 3600);

/// The gateway's egress proxy, the only destination of `network:
/// "bridge"` pods.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EgressProxy {
    /// The namespace the proxy's pods run in.
    pub namespace: String,
    /// The labels selecting the proxy's pods.
    pub pod_labels: BTreeMap<String, String>,
    /// Its TCP port.
    pub port: u16,
}

/// The Kubernetes side of one sandbox configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubernetesSettings {
    /// Where claims, templates and policies live.
    pub namespace: String,
    /// The `RuntimeClass` (gVisor, Kata) every pod runs under.
    pub runtime_class: Option<String>,
    /// Break-glass: pods without a `RuntimeClass` (plain runc) allowed.
    pub dangerously_allow_runc_runtime: bool,
    /// The storage class of the workspace volume (cluster default when
    /// unset).
    pub storage_class: Option<String>,
    /// The workspace volume's size (a Kubernetes quantity).
    pub workspace_size: String,
    /// The egress proxy `network: "bridge"` is confined to.
    pub egress_proxy: Option<EgressProxy>,
    /// How long `ensure` waits for a claim to become ready.
    pub ready_timeout: Duration,
    /// A claim's lifetime from its last `ensure` (its `shutdownTime`).
    pub max_age: Duration,
}

impl Default for KubernetesSettings {
    fn default() -> Self {
        KubernetesSettings {
            namespace: DEFAULT_NAMESPACE.to_owned(),
            runtime_class: None,
            dangerously_allow_runc_runtime: false,
            storage_class: None,
            workspace_size: DEFAULT_WORKSPACE_SIZE.to_owned(),
            egress_proxy: None,
            ready_timeout: DEFAULT_READY_TIMEOUT,
            max_age: DEFAULT_MAX_AGE,
        }
    }
}

impl KubernetesSettings {
    /// The settings that shape a template, as JSON for the config hash:
    /// a changed one is a new template (timeouts and the namespace's
    /// lifetime rules are not among them).
    pub fn hash_document(&self) -> Value {
        json!({
            "namespace": self.namespace,
            "runtimeClass": self.runtime_class,
            "dangerouslyAllowRuncRuntime": self.dangerously_allow_runc_runtime,
            "storageClass": self.storage_class,
            "workspaceSize": self.workspace_size,
            "egressProxy": self.egress_proxy.as_ref().map(|p| json!({
                "namespace": p.namespace,
                "podLabels": p.pod_labels,
                "port": p.port,
            })),
        })
    }
}
