#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The backend over an in-memory fake cluster: unit logic only, no
//! Kubernetes involved.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::Value;
use talon_sandbox_core::{DockerConfig, ExitStatus, SandboxErrorKind};

use super::*;
use crate::cluster::{ClusterError, ClusterErrorKind, ExecOutput};
use crate::test_support::request;

/// Claims by name; every call recorded.
#[derive(Debug, Default)]
struct FakeCluster {
    claims: Mutex<BTreeMap<String, ClaimInfo>>,
    templates: Mutex<Vec<String>>,
    calls: Mutex<Vec<String>>,
    execs: Mutex<Vec<Vec<String>>>,
    /// Claims never become ready.
    stuck: bool,
}

fn map(v: &Value) -> BTreeMap<String, String> {
    v.as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

impl FakeCluster {
    fn call(&self, what: String) {
        self.calls.lock().unwrap().push(what);
    }
    fn calls(&self) -> Vec<String> {
        std::mem::take(&mut *self.calls.lock().unwrap())
    }
    fn put_foreign(&self, name: &str) {
        self.claims.lock().unwrap().insert(
            name.to_owned(),
            ClaimInfo {
                name: name.to_owned(),
                labels: BTreeMap::new(),
                annotations: BTreeMap::new(),
                ready: true,
                pod: Some("theirs".into()),
                created_at_ms: None,
            },
        );
    }
}

#[async_trait::async_trait]
impl ClusterApi for FakeCluster {
    async fn apply_template(&self, ns: &str, t: &Value, p: &Value) -> Result<(), ClusterError> {
        assert_eq!(t["metadata"]["name"], p["metadata"]["name"]);
        let name = t["metadata"]["name"].as_str().unwrap().to_owned();
        self.call(format!("apply {ns}/{name}"));
        self.templates.lock().unwrap().push(name);
        Ok(())
    }
    async fn get_claim(&self, _: &str, name: &str) -> Result<Option<ClaimInfo>, ClusterError> {
        Ok(self.claims.lock().unwrap().get(name).cloned())
    }
    async fn create_claim(&self, ns: &str, claim: &Value) -> Result<(), ClusterError> {
        let name = claim["metadata"]["name"].as_str().unwrap().to_owned();
        self.call(format!("create {ns}/{name}"));
        let info = ClaimInfo {
            name: name.clone(),
            labels: map(&claim["metadata"]["labels"]),
            annotations: map(&claim["metadata"]["annotations"]),
            ready: false,
            pod: None,
            created_at_ms: Some(1),
        };
        if self.claims.lock().unwrap().insert(name, info).is_some() {
            return Err(ClusterError::new(ClusterErrorKind::Conflict, "exists"));
        }
        Ok(())
    }
    async fn delete_claim(&self, ns: &str, name: &str) -> Result<(), ClusterError> {
        self.call(format!("delete {ns}/{name}"));
        match self.claims.lock().unwrap().remove(name) {
            Some(_) => Ok(()),
            None => Err(ClusterError::new(ClusterErrorKind::NotFound, name)),
        }
    }
    async fn list_claims(&self, _: &str, selector: &str) -> Result<Vec<ClaimInfo>, ClusterError> {
        let (k, v) = selector.split_once('=').unwrap();
        Ok(self
            .claims
            .lock()
            .unwrap()
            .values()
            .filter(|c| c.labels.get(k).map(String::as_str) == Some(v))
            .cloned()
            .collect())
    }
    async fn wait_ready(
        &self,
        _: &str,
        name: &str,
        t: Duration,
    ) -> Result<ClaimInfo, ClusterError> {
        if self.stuck {
            return Err(ClusterError::new(
                ClusterErrorKind::Timeout,
                format!("{name} not ready after {t:?}"),
            ));
        }
        let mut claims = self.claims.lock().unwrap();
        let claim = claims.get_mut(name).unwrap();
        claim.ready = true;
        claim.pod = Some(format!("{name}-pod"));
        Ok(claim.clone())
    }
    async fn exec(
        &self,
        _: &str,
        pod: &str,
        argv: &[String],
        _: Option<Vec<u8>>,
        _: Duration,
    ) -> Result<ExecOutput, ClusterError> {
        self.execs.lock().unwrap().push(argv.to_vec());
        Ok(ExecOutput {
            stdout: pod.as_bytes().to_vec(),
            stderr: Vec::new(),
            status: ExitStatus::Code(0),
        })
    }
}

fn settings() -> KubernetesSettings {
    KubernetesSettings {
        runtime_class: Some("gvisor".into()),
        ..Default::default()
    }
}

fn backend(api: &Arc<FakeCluster>, settings: KubernetesSettings) -> KubernetesBackend {
    KubernetesBackend::new(Arc::clone(api) as Arc<dyn ClusterApi>, settings, None)
        .with_clock(|| 1_764_892_800_000)
}

#[tokio::test]
async fn ensure_creates_template_and_claim_once_then_reuses_the_claim() {
    let api = Arc::new(FakeCluster::default());
    let b = backend(&api, settings());
    let req = request("agent:main:test:1", DockerConfig::default());
    let name = claim_name(&req.sandbox_name);
    let handle = b.ensure(&req).await.unwrap();
    assert_eq!(handle.backend_id(), "kubernetes");
    assert_eq!(handle.name(), name);
    // The backend's workdir is the handle's (the default rule: the
    // workspace volume is mounted at the configured workdir).
    assert_eq!(handle.workdir(), b.workdir(&req));
    assert_eq!(handle.workdir(), "/workspace");
    let calls = api.calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(
        calls[0].starts_with("apply talon-sandboxes/talon-"),
        "{calls:?}"
    );
    assert_eq!(calls[1], format!("create talon-sandboxes/{name}"));

    b.ensure(&req).await.unwrap();
    let calls = api.calls();
    assert_eq!(calls.len(), 1, "only the template apply: {calls:?}");

    let out = handle
        .run_script("echo \"$1\"", &["x".into()], None, Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(out.stdout, format!("{name}-pod").into_bytes());
    let execs = api.execs.lock().unwrap().clone();
    assert_eq!(execs[0][..2], ["/bin/sh".to_owned(), "-c".to_owned()]);
    assert_eq!(execs[0].last().unwrap(), "x");
}

fn claim_name(sandbox_name: &str) -> String {
    crate::names::claim_name(sandbox_name).unwrap()
}

#[tokio::test]
async fn a_changed_configuration_replaces_the_claim() {
    let api = Arc::new(FakeCluster::default());
    let req = request("agent:main:test:1", DockerConfig::default());
    backend(&api, settings()).ensure(&req).await.unwrap();
    api.calls();
    let other = KubernetesSettings {
        runtime_class: Some("kata".into()),
        ..Default::default()
    };
    backend(&api, other).ensure(&req).await.unwrap();
    let calls = api.calls();
    let name = claim_name(&req.sandbox_name);
    assert_eq!(
        calls[1..],
        [
            format!("delete talon-sandboxes/{name}"),
            format!("create talon-sandboxes/{name}")
        ]
    );
    assert_eq!(api.templates.lock().unwrap().len(), 2);
    let templates = api.templates.lock().unwrap().clone();
    assert_ne!(templates[0], templates[1], "a new config is a new template");
}

#[tokio::test]
async fn a_claim_that_is_not_talons_is_never_adopted_or_removed() {
    let api = Arc::new(FakeCluster::default());
    let b = backend(&api, settings());
    let req = request("agent:main:test:1", DockerConfig::default());
    let name = claim_name(&req.sandbox_name);
    api.put_foreign(&name);
    let err = b.ensure(&req).await.unwrap_err();
    assert_eq!(err.kind(), SandboxErrorKind::Config);
    assert!(err.to_string().contains("not Talon's"), "{err}");
    let err = b.remove(&name).await.unwrap_err();
    assert_eq!(err.kind(), SandboxErrorKind::Config);
    assert!(api.claims.lock().unwrap().contains_key(&name));
    assert!(b.list_owned().await.unwrap().is_empty());
}

#[tokio::test]
async fn list_and_remove_go_by_label_and_report_the_annotations() {
    let api = Arc::new(FakeCluster::default());
    let b = backend(&api, settings());
    let req = request("agent:main:test:1", DockerConfig::default());
    b.ensure(&req).await.unwrap();
    api.put_foreign("someone-else");
    let owned = b.list_owned().await.unwrap();
    assert_eq!(owned.len(), 1);
    assert_eq!(owned[0].backend_id, "kubernetes");
    assert_eq!(owned[0].scope_key.as_deref(), Some(req.scope_key.as_str()));
    assert!(owned[0].running);
    b.remove(&owned[0].name).await.unwrap();
    assert!(b.list_owned().await.unwrap().is_empty());
    let err = b.remove("nothing-here").await.unwrap_err();
    assert_eq!(err.kind(), SandboxErrorKind::Config);
}

#[tokio::test]
async fn refusals_happen_before_the_cluster_is_called() {
    let api = Arc::new(FakeCluster::default());
    let b = backend(&api, KubernetesSettings::default());
    let req = request("agent:main:test:1", DockerConfig::default());
    let err = b.ensure(&req).await.unwrap_err();
    assert_eq!(err.kind(), SandboxErrorKind::Config);
    assert!(err.to_string().contains("runtimeClass"), "{err}");
    assert!(api.calls().is_empty());
}

#[tokio::test]
async fn a_claim_that_never_gets_ready_is_a_timeout_and_the_launcher_refuses() {
    let api = Arc::new(FakeCluster {
        stuck: true,
        ..Default::default()
    });
    let b = backend(&api, settings());
    let req = request("agent:main:test:1", DockerConfig::default());
    let err = b.ensure(&req).await.unwrap_err();
    assert_eq!(err.kind(), SandboxErrorKind::Timeout);

    let ready = Arc::new(FakeCluster::default());
    let handle = backend(&ready, settings()).ensure(&req).await.unwrap();
    let err = handle
        .launcher()
        .launch(talon_sandbox_core::LaunchRequest::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), SandboxErrorKind::Exec);
    assert!(handle.fs_bridge().is_none());
}
