#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use pretty_assertions::assert_eq;

use super::*;
use crate::backend::{OwnedSandbox, SandboxHandle, SandboxRequest};
use crate::error::SandboxErrorKind;

#[derive(Debug)]
struct Fake(&'static str);

#[async_trait::async_trait]
impl SandboxBackend for Fake {
    fn id(&self) -> &str {
        self.0
    }
    async fn ensure(&self, _: &SandboxRequest) -> Result<Arc<dyn SandboxHandle>, SandboxError> {
        Err(SandboxError::engine_unavailable(self.0.to_owned()))
    }
    async fn list_owned(&self) -> Result<Vec<OwnedSandbox>, SandboxError> {
        Ok(vec![OwnedSandbox::new(self.0, "talon-sbx-x")])
    }
    async fn remove(&self, _: &str) -> Result<(), SandboxError> {
        Ok(())
    }
}

#[test]
fn register_require_replace_unregister() {
    let reg = SandboxBackendRegistry::new();
    assert!(reg.register("Docker", Arc::new(Fake("docker"))).is_none());
    assert_eq!(reg.require(" docker ").unwrap().id(), "docker");
    let old = reg.register("docker", Arc::new(Fake("docker2"))).unwrap();
    assert_eq!(old.id(), "docker");
    assert_eq!(reg.require("docker").unwrap().id(), "docker2");
    reg.register("ssh", Arc::new(Fake("ssh")));
    assert_eq!(reg.ids(), vec!["docker", "ssh"]);
    assert!(reg.unregister("ssh").is_some());
    assert!(reg.get("ssh").is_none());
}

#[test]
fn missing_plugin_backend_tells_the_operator_what_to_do() {
    let reg = SandboxBackendRegistry::new();
    reg.register("docker", Arc::new(Fake("docker")));
    let err = reg.require("OpenShell").unwrap_err();
    assert_eq!(err.kind(), SandboxErrorKind::BackendMissing, "{err:?}");
    let text = err.message();
    assert!(
        text.contains("Sandbox backend \"openshell\" is not registered (registered: docker)"),
        "{text}"
    );
    assert!(text.contains("install and enable the plugin"), "{text}");
    assert!(text.contains("agents.defaults.sandbox.backend"), "{text}");
    assert!(text.contains("back to \"docker\""), "{text}");
}

#[test]
fn missing_built_in_backend_says_it_is_not_wired() {
    let text = SandboxBackendRegistry::new()
        .require("ssh")
        .unwrap_err()
        .to_string();
    assert!(text.contains("registered: none"), "{text}");
    assert!(text.contains("talon-sandbox-ssh"), "{text}");
}

#[tokio::test]
async fn backends_are_called_through_the_registry() {
    let reg = SandboxBackendRegistry::new();
    reg.register("docker", Arc::new(Fake("docker")));
    let listed = reg.require("docker").unwrap().list_owned().await.unwrap();
    assert_eq!(listed[0].name, "talon-sbx-x");
    assert_eq!(listed[0].backend_id, "docker");
}
