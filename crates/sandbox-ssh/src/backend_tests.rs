#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use talon_sandbox_core::{ResolvedSandboxConfig, SandboxConfig, SandboxInputs, SshConfig};

use super::*;

fn request(root: Option<&str>) -> SandboxRequest {
    let defaults = SandboxConfig {
        mode: Some(talon_tool_policy::SandboxMode::All),
        backend: Some("ssh".into()),
        ssh: Some(SshConfig {
            host: Some("build.example".into()),
            workspace_root: root.map(str::to_owned),
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
fn the_workdir_is_the_remote_workspace_copy_not_the_container_workdir() {
    let backend = SshBackend::new(None);
    for root in [None, Some("/srv/talon")] {
        let req = request(root);
        let workdir = backend.workdir(&req);
        // The same directory ensure creates the copy in.
        let target = backend.target_for(&req).unwrap();
        assert_eq!(
            workdir,
            format!("{}/workspace", target.sandbox_dir(&req.sandbox_name))
        );
        assert_ne!(workdir, req.config_workdir());
    }
    assert_eq!(
        backend.workdir(&request(Some("/srv/talon"))),
        format!("/srv/talon/{}/workspace", request(None).sandbox_name)
    );
}
