#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use pretty_assertions::assert_eq;

use super::*;
use crate::docker_config::DockerConfig;
use crate::resolved::SandboxInputs;
use crate::sandbox_config::SandboxConfig;

/// A backend that only answers the default questions.
#[derive(Debug)]
struct Plain;

#[async_trait::async_trait]
impl SandboxBackend for Plain {
    fn id(&self) -> &str {
        "plain"
    }
    async fn ensure(&self, _: &SandboxRequest) -> Result<Arc<dyn SandboxHandle>, SandboxError> {
        Err(SandboxError::engine_unavailable("plain".to_owned()))
    }
    async fn list_owned(&self) -> Result<Vec<OwnedSandbox>, SandboxError> {
        Ok(Vec::new())
    }
    async fn remove(&self, _: &str) -> Result<(), SandboxError> {
        Ok(())
    }
}

fn request(backend: &str, workdir: Option<&str>) -> SandboxRequest {
    let defaults = SandboxConfig {
        mode: Some(talon_tool_policy::SandboxMode::All),
        backend: Some(backend.to_owned()),
        docker: Some(DockerConfig {
            workdir: workdir.map(str::to_owned),
            ..Default::default()
        }),
        ..Default::default()
    };
    let tools = talon_tool_policy::config::ToolsConfig::default();
    let resolved = ResolvedSandboxConfig::resolve(&SandboxInputs {
        agent_id: "main",
        defaults: Some(&defaults),
        agent: None,
        agent_key: None,
        state_dir: Path::new("/var/lib/talon"),
        home: None,
        tools: &tools,
        agent_tools: None,
    });
    SandboxRequest::new(resolved, "agent:main:test:1", Path::new("/srv/ws"), None)
}

#[test]
fn the_default_workdir_is_the_configured_container_workdir() {
    assert_eq!(Plain.workdir(&request("plain", None)), "/workspace");
    assert_eq!(Plain.workdir(&request("plain", Some("/work"))), "/work");
}

#[test]
fn the_default_workdir_does_not_depend_on_the_backend_id() {
    // The id in the config no longer picks a rule: a backend whose id is
    // `ssh` but which keeps the default answers the container workdir (the
    // SSH backend overrides the method instead).
    let req = request("ssh", Some("/work"));
    assert_eq!(req.config_workdir(), "/work");
    assert_eq!(Plain.workdir(&req), "/work");
}
