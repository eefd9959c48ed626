//! A sandboxed run with `workspaceAccess: "none"` through the whole
//! runtime and the real Docker engine: its `/workspace` holds the agent's
//! bootstrap files and is writable scratch, and the agent's eligible
//! skills are mirrored read-only at `/workspace/.talon/sandbox-skills/skills`.

use serde_json::json;
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, RuntimeBuilder};
use talon_sandbox_core::{SandboxScope, materialized_skills_root};
use talon_tool_catalog::ToolErrorCode;
use talon_tool_policy::RunContext;

fn text(out: &InvokeOutcome) -> String {
    match out {
        InvokeOutcome::Completed { result, .. } => result.text(),
        other => {
            panic!("expected a result (is the engine up? `cargo xtask docker-up`), got {other:?}")
        }
    }
}

/// Removes the test's containers and its skills mirror (which lives under
/// the real state dir) even when an assertion fails.
struct Cleanup {
    label: String,
    mirror: std::path::PathBuf,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Ok(out) = std::process::Command::new("docker")
            .args(["ps", "-aq", "--filter", &format!("label={}", self.label)])
            .output()
        {
            for id in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                let _ = std::process::Command::new("docker")
                    .args(["rm", "-f", id])
                    .output();
            }
        }
        // `<state>/sandbox/skills-workspaces/<slug>`.
        if let Some(scope_dir) = self.mirror.parent().and_then(|p| p.parent()) {
            let _ = std::fs::remove_dir_all(scope_dir);
        }
    }
}

#[tokio::test]
async fn a_none_run_sees_its_bootstrap_files_and_skills_and_writes_only_scratch() {
    let dir = tempfile::tempdir().unwrap();
    let agent = format!("rt-ws-{}", std::process::id());
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("skills/hello")).unwrap();
    std::fs::write(ws.join("AGENTS.md"), "be brief\n").unwrap();
    std::fs::write(
        ws.join("skills/hello/SKILL.md"),
        "---\nname: hello\ndescription: Say hello.\n---\n# Hello\n",
    )
    .unwrap();
    let config = format!(
        r#"{{ agents: {{ defaults: {{ workspace: "./ws", sandbox: {{ mode: "all", workspaceAccess: "none",
            workspaceRoot: "{root}", docker: {{ image: "talon-sandbox-test:busybox" }} }} }},
            list: [{{ id: "{agent}" }}] }} }}"#,
        root = dir.path().join("sandboxes").display(),
    );
    let mirror = materialized_skills_root(
        &talon_config::state_dir(),
        SandboxScope::Agent,
        &format!("agent:{agent}"),
    );
    let _cleanup = Cleanup {
        label: format!("talon.sessionKey=agent:{agent}"),
        mirror: mirror.clone(),
    };
    let loaded = talon_config::load_str(&config, "talon.json").unwrap();
    let rt = RuntimeBuilder::from_config(&loaded.config, dir.path())
        .unwrap()
        .build()
        .unwrap();
    let mut ctx = RunContext::new(agent.clone());
    ctx.sandboxed = true;
    let table = rt.assemble(RunSpec::new(ctx));

    let skill = "/workspace/.talon/sandbox-skills/skills/hello/SKILL.md";
    let out = table
        .invoke(ModelToolCall::new(
            "c1",
            "exec",
            json!({ "command": format!("cat /workspace/AGENTS.md {skill}; echo scratch > /workspace/x && echo wrote") }),
        ))
        .await;
    let printed = text(&out);
    assert!(printed.contains("be brief"), "{printed}");
    assert!(printed.contains("description: Say hello."), "{printed}");
    assert!(printed.contains("wrote"), "{printed}");
    assert!(
        !ws.join("x").exists(),
        "scratch reached the agent workspace"
    );
    assert!(mirror.join("skills/hello/SKILL.md").is_file());

    // The file tools: the skill reads, and writing it is refused.
    let out = table
        .invoke(ModelToolCall::new("c2", "read", json!({ "path": skill })))
        .await;
    assert!(text(&out).contains("# Hello"), "{out:?}");
    let out = table
        .invoke(ModelToolCall::new(
            "c3",
            "write",
            json!({ "path": skill, "content": "rewritten" }),
        ))
        .await;
    match &out {
        InvokeOutcome::Failed(e) => assert_eq!(e.code(), ToolErrorCode::FsReadOnly, "{e}"),
        other => panic!("writing a mirrored skill must fail, got {other:?}"),
    }
    let out = table
        .invoke(ModelToolCall::new(
            "c4",
            "write",
            json!({ "path": "notes.md", "content": "scratch note" }),
        ))
        .await;
    text(&out);
    assert!(!ws.join("notes.md").exists());

    // A skill edited and one added during the session reach the sandbox
    // (the mirror is refreshed at most every few seconds as tools run).
    std::fs::write(
        ws.join("skills/hello/SKILL.md"),
        "---\nname: hello\ndescription: Say hello.\n---\n# Hello v2\n",
    )
    .unwrap();
    std::fs::create_dir_all(ws.join("skills/bye")).unwrap();
    std::fs::write(
        ws.join("skills/bye/SKILL.md"),
        "---\nname: bye\ndescription: Say bye.\n---\n# Bye\n",
    )
    .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut n = 0;
    loop {
        n += 1;
        let out = table
            .invoke(ModelToolCall::new(
                format!("poll{n}"),
                "exec",
                json!({ "command": format!("cat {skill} /workspace/.talon/sandbox-skills/skills/bye/SKILL.md 2>&1") }),
            ))
            .await;
        let printed = text(&out);
        if printed.contains("# Hello v2") && printed.contains("# Bye") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the edited skills never reached the sandbox: {printed}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
}
