//! Sandbox-core benchmarks: the per-session work done before a backend is
//! asked for a sandbox.
//!
//! - `sandbox_resolve_config`: `ResolvedSandboxConfig::resolve` for an
//!   agent with a docker block over defaults (includes the sandbox tool
//!   policy resolution).
//! - `sandbox_request`: `SandboxRequest::new` for a `rw` agent with two
//!   skill overlays and two custom binds on a real temp dir: scope key,
//!   slug (SHA-256), mount plan (stat + canonicalize of the overlays) and
//!   the config hash (serialise, sort, SHA-256).
//! - `sandbox_validate_security`: `validate_sandbox_security` on eight
//!   binds (each normalised, checked, realpath-ed through the deepest
//!   existing ancestor and checked again) plus network/profile rules.
//! - `sandbox_config_hash`: the hash alone.

// A panic here is a benchmark setup failure, never a measured path.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use talon_sandbox_core::{
    ConfigHashInputs, ResolvedSandboxConfig, SandboxConfig, SandboxInputs, SandboxRequest,
    SecurityEnv, config_hash, validate_sandbox_security,
};
use talon_tool_policy::config::ToolsConfig;

fn benches(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let ws = root.join("ws");
    std::fs::create_dir_all(ws.join("skills")).unwrap();
    std::fs::create_dir_all(ws.join(".agents/skills")).unwrap();
    std::fs::create_dir_all(ws.join("data")).unwrap();
    let defaults: SandboxConfig = serde_json::from_value(json!({
        "mode": "non-main",
        "workspaceAccess": "rw",
        "docker": { "network": "bridge", "env": { "A": "1" }, "binds": [format!("{}:/data:ro", ws.join("data").display())] },
    }))
    .unwrap();
    let agent: SandboxConfig = serde_json::from_value(json!({
        "docker": { "memory": "1g", "ulimits": { "nofile": 1024 }, "binds": [format!("{}:/more", ws.join("data/more").display())] },
    }))
    .unwrap();
    let tools = ToolsConfig::default();
    let state = root.join("state");
    let inputs = SandboxInputs {
        agent_id: "main",
        defaults: Some(&defaults),
        agent: Some(&agent),
        agent_key: Some("agents.list[0]"),
        state_dir: &state,
        home: Some(Path::new("/home/u")),
        tools: &tools,
        agent_tools: None,
    };
    c.bench_function("sandbox_resolve_config", |b| {
        b.iter(|| ResolvedSandboxConfig::resolve(black_box(&inputs)))
    });
    let resolved = ResolvedSandboxConfig::resolve(&inputs);
    c.bench_function("sandbox_request", |b| {
        b.iter(|| {
            SandboxRequest::new(
                black_box(resolved.clone()),
                "agent:main:telegram:group:42",
                &ws,
                None,
            )
        })
    });
    let mut settings = resolved.docker.clone();
    settings.binds = vec![
        "/etc:/e".to_owned(),
        "/var:/v".to_owned(),
        format!("{}:/d", ws.join("data").display()),
        format!("{}:/n", ws.join("data/not/yet").display()),
        "/srv/outside:/o".to_owned(),
        "rel:/r".to_owned(),
        "/home/u/.ssh:/s".to_owned(),
        format!("{}:/workspace/x", ws.display()),
    ];
    let env = SecurityEnv {
        allowed_roots: vec![ws.clone(), state.join("sandboxes")],
        home_dirs: vec!["/home/u".into()],
        ..SecurityEnv::default()
    };
    c.bench_function("sandbox_validate_security", |b| {
        b.iter(|| validate_sandbox_security(black_box(&settings), &resolved.docker_origins, &env))
    });
    let skills = vec![format!(
        "{}:/workspace/skills:ro",
        ws.join("skills").display()
    )];
    c.bench_function("sandbox_config_hash", |b| {
        b.iter(|| {
            config_hash(&ConfigHashInputs {
                docker: black_box(&resolved.docker),
                workspace_access: resolved.workspace_access,
                workspace_dir: &ws,
                agent_workspace_dir: &ws,
                read_only_skill_mounts: &skills,
            })
        })
    });
}

criterion_group!(sandbox, benches);
criterion_main!(sandbox);
