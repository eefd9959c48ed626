use std::path::Path;

use talon_sandbox_core::{DockerConfig, SandboxConfig, SandboxInputs};
use talon_tool_policy::config::ToolsConfig;

use super::*;

fn resolve(docker: DockerConfig) -> ResolvedSandboxConfig {
    let defaults = SandboxConfig {
        backend: Some("local".to_owned()),
        docker: Some(docker),
        ..Default::default()
    };
    let tools = ToolsConfig::default();
    ResolvedSandboxConfig::resolve(&SandboxInputs {
        agent_id: "main",
        defaults: Some(&defaults),
        agent: None,
        agent_key: None,
        state_dir: Path::new("/var/lib/talon"),
        home: None,
        tools: &tools,
        agent_tools: None,
    })
}

#[test]
fn the_defaults_pass() {
    assert_eq!(
        unsupported_settings(&resolve(DockerConfig::default())),
        Vec::new()
    );
}

#[test]
fn bridge_is_guarded_egress_and_other_networks_name_their_key() {
    let bridge = resolve(DockerConfig {
        network: Some("bridge".to_owned()),
        ..Default::default()
    });
    assert!(unsupported_settings(&bridge).is_empty());
    assert!(wants_egress(&bridge));
    assert!(!wants_egress(&resolve(DockerConfig::default())));
    let problems = unsupported_settings(&resolve(DockerConfig {
        network: Some("my-compose-net".to_owned()),
        ..Default::default()
    }));
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].key, "agents.defaults.sandbox.docker.network");
    assert!(problems[0].message.contains("\"none\""));
    assert!(problems[0].message.contains("\"bridge\""));
    assert!(problems[0].message.contains("backend \"docker\""));
}

#[test]
fn every_unenforceable_setting_is_listed_with_its_key() {
    let problems = unsupported_settings(&resolve(DockerConfig {
        user: Some("1000:1000".to_owned()),
        seccomp_profile: Some("/p.json".to_owned()),
        apparmor_profile: Some("x".to_owned()),
        setup_command: Some("apt-get install -y git".to_owned()),
        gpus: Some("all".to_owned()),
        tmpfs: Some(vec!["/tmp:size=64m".to_owned()]),
        tmpfs_size: Some(talon_sandbox_core::SizeValue::Text("8m".to_owned())),
        ..Default::default()
    }));
    let keys: Vec<&str> = problems.iter().map(|p| p.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "agents.defaults.sandbox.docker.user",
            "agents.defaults.sandbox.docker.seccompProfile",
            "agents.defaults.sandbox.docker.apparmorProfile",
            "agents.defaults.sandbox.docker.gpus",
            "agents.defaults.sandbox.docker.setupCommand",
            "agents.defaults.sandbox.docker.tmpfsSize",
            "agents.defaults.sandbox.docker.tmpfs",
        ]
    );
}
