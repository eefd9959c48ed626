//! A sandbox request for the tests, built the way the runtime builds one.

use std::path::Path;

use talon_sandbox_core::{
    DockerConfig, ResolvedSandboxConfig, SandboxConfig, SandboxInputs, SandboxRequest,
};

/// A request of agent `main`'s session `agent:main:test:<n>`, with
/// `docker` as its Docker block.
pub(crate) fn request(session: &str, docker: DockerConfig) -> SandboxRequest {
    let defaults = SandboxConfig {
        mode: Some(talon_tool_policy::SandboxMode::All),
        backend: Some("kubernetes".into()),
        docker: Some(docker),
        ..Default::default()
    };
    let tools = talon_tool_policy::config::ToolsConfig::default();
    let resolved = ResolvedSandboxConfig::resolve(&SandboxInputs {
        agent_id: "main",
        defaults: Some(&defaults),
        agent: None,
        agent_key: None,
        state_dir: Path::new("/var/lib/talon-test-kube"),
        home: None,
        tools: &tools,
        agent_tools: None,
    });
    SandboxRequest::new(
        resolved,
        session,
        Path::new("/srv/talon-test-kube/ws"),
        None,
    )
}
