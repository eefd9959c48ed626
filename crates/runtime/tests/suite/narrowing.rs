//! Trigger-based narrowing: memory flush and cron runs.

use std::sync::Arc;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use talon_hooks::DeniedReason;
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, Runtime, RuntimeBuilder, ToolSet};
use talon_test_support::probe_tool::ProbeTool;
use talon_tool_policy::{PolicyConfig, RunContext, Trigger};

use super::support::echo_tool;

/// A `write` whose schema declares `append` (the memory narrowing refuses
/// a write tool that cannot append).
fn appending_write() -> ProbeTool {
    let mut echo = echo_tool("write");
    echo.spec_mut().parameters["properties"]["append"] = json!({"type": "boolean"});
    echo
}

fn runtime() -> Runtime {
    RuntimeBuilder::new(PolicyConfig::default())
        .family(Arc::new(
            ToolSet::new("t")
                .with(Arc::new(echo_tool("read")))
                .with(Arc::new(appending_write()))
                .with(Arc::new(echo_tool("edit")))
                .with(Arc::new(echo_tool("cron"))),
        ))
        .build()
        .unwrap()
}

async fn invoke(run: RunSpec, name: &str, args: Value) -> InvokeOutcome {
    runtime()
        .assemble(run)
        .invoke(ModelToolCall::new("c1", name, args))
        .await
}

fn memory_run(path: Option<&str>) -> RunSpec {
    let mut run = RunSpec::new(RunContext {
        trigger: Trigger::Memory,
        ..RunContext::new("main")
    });
    run.memory_flush_path = path.map(str::to_owned);
    run
}

#[tokio::test]
async fn a_memory_flush_may_only_append_to_its_file() {
    let table = runtime().assemble(memory_run(Some("memory/2026-12-03.md")));
    assert_eq!(
        table.names(),
        vec!["read", "write"],
        "the trigger filter keeps only read and write"
    );
    match invoke(
        memory_run(Some("memory/2026-12-03.md")),
        "write",
        json!({"path": "./memory//2026-12-03.md", "content": "note", "append": true}),
    )
    .await
    {
        InvokeOutcome::Completed { result, .. } => {
            assert_eq!(result.details["params"]["append"], true);
        }
        other => panic!("{other:?}"),
    }
    // A write without `append: true` would replace the file: refused.
    let out = invoke(
        memory_run(Some("memory/2026-12-03.md")),
        "write",
        json!({"path": "memory/2026-12-03.md", "content": "note"}),
    )
    .await;
    assert!(
        matches!(&out, InvokeOutcome::Blocked(b) if b.denied_reason == DeniedReason::TriggerScope && b.reason.contains("`append: true`")),
        "{out:?}"
    );
    let out = invoke(
        memory_run(Some("memory/2026-12-03.md")),
        "write",
        json!({"path": "AGENTS.md", "content": "x", "append": true}),
    )
    .await;
    assert!(
        matches!(&out, InvokeOutcome::Blocked(b) if b.denied_reason == DeniedReason::TriggerScope && b.reason.contains("may only append to `memory/2026-12-03.md`")),
        "{out:?}"
    );
    let out = invoke(
        memory_run(None),
        "write",
        json!({"path": "memory/x.md", "content": "x"}),
    )
    .await;
    assert!(matches!(out, InvokeOutcome::Blocked(_)));
    // Reading stays possible.
    assert!(matches!(
        invoke(memory_run(None), "read", json!({"path": "AGENTS.md"})).await,
        InvokeOutcome::Completed { .. }
    ));
}

fn cron_run(job: Option<&str>) -> RunSpec {
    let mut run = RunSpec::new(RunContext {
        trigger: Trigger::Cron,
        session_key: "cron:job-1".into(),
        ..RunContext::new("main")
    });
    run.cron_job_id = job.map(str::to_owned);
    run
}

#[tokio::test]
async fn a_cron_run_may_only_read_and_remove_its_own_job() {
    for action in ["get", "runs", "remove"] {
        let out = invoke(
            cron_run(Some("job-1")),
            "cron",
            json!({"action": action, "jobId": "job-1"}),
        )
        .await;
        assert!(
            matches!(out, InvokeOutcome::Completed { .. }),
            "{action}: {out:?}"
        );
    }
    for (args, expect) in [
        (json!({"action": "add", "jobId": "job-1"}), "not `add`"),
        (
            json!({"action": "update", "jobId": "job-1"}),
            "not `update`",
        ),
        (
            json!({"action": "remove", "jobId": "job-2"}),
            "not jobId=\"job-2\"",
        ),
    ] {
        let out = invoke(cron_run(Some("job-1")), "cron", args).await;
        assert!(
            matches!(&out, InvokeOutcome::Blocked(b) if b.denied_reason == DeniedReason::TriggerScope && b.reason.contains(expect)),
            "{out:?}"
        );
    }
    let out = invoke(
        cron_run(None),
        "cron",
        json!({"action": "get", "jobId": "job-1"}),
    )
    .await;
    assert!(matches!(out, InvokeOutcome::Blocked(_)));
    // status and list pass (the cron tool filters them to the own job).
    for action in ["status", "list"] {
        let out = invoke(cron_run(Some("job-1")), "cron", json!({ "action": action })).await;
        assert!(
            matches!(out, InvokeOutcome::Completed { .. }),
            "{action}: {out:?}"
        );
    }
    // Outside cron runs the cron tool is not narrowed.
    let out = invoke(
        RunSpec::new(RunContext::new("main")),
        "cron",
        json!({"action": "add"}),
    )
    .await;
    assert!(matches!(out, InvokeOutcome::Completed { .. }));
}
