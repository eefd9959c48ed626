//! `ToolTable::invoke`: the whole path of one call.

use std::sync::{Arc, Mutex};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use talon_hooks::approval::{
    ApprovalBroker, ApprovalDecision, ApprovalEvent, MemoryApprovalBroker,
};
use talon_hooks::loop_detection::LoopDetectionConfig;
use talon_hooks::{
    ApprovalSpec, BeforeToolCallEvent, BeforeToolCallHandler, BeforeToolCallResult, DeniedReason,
    DiagnosticEvent, Diagnostics, HookContext, Registration, ToolMatcher,
};
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, Runtime, RuntimeBuilder, ToolSet};
use talon_test_support::probe_tool::ProbeTool;
use talon_tool_catalog::{ToolError, ToolErrorCode};
use talon_tool_policy::config::ToolsConfig;
use talon_tool_policy::{PolicyConfig, RunContext};

use super::support::echo_tool;

struct Hook(BeforeToolCallResult);

#[async_trait::async_trait]
impl BeforeToolCallHandler for Hook {
    async fn before_tool_call(
        &self,
        _e: &BeforeToolCallEvent,
        _c: &HookContext,
    ) -> Result<Option<BeforeToolCallResult>, talon_hooks::HookError> {
        Ok(Some(self.0.clone()))
    }
}

fn runtime_with(
    deny: &[&str],
    echo: ProbeTool,
    configure: impl FnOnce(&mut RuntimeBuilder),
) -> Runtime {
    let policy = PolicyConfig {
        tools: ToolsConfig {
            deny: Some(deny.iter().map(|s| (*s).to_owned()).collect()),
            ..ToolsConfig::default()
        },
        ..PolicyConfig::default()
    };
    let mut builder =
        RuntimeBuilder::new(policy).family(Arc::new(ToolSet::new("t").with(Arc::new(echo))));
    configure(&mut builder);
    builder.build().unwrap()
}

fn call(name: &str, args: Value) -> ModelToolCall {
    ModelToolCall::new("c1", name, args)
}

#[tokio::test]
async fn a_call_runs_and_details_never_reach_the_model() {
    let runtime = runtime_with(&[], echo_tool("read"), |_| {});
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    // Gemini-style JSON-string arguments are decoded.
    let out = table
        .invoke(call("read", json!("{\"path\": \"a.txt\"}")))
        .await;
    let InvokeOutcome::Completed {
        result,
        params_rewritten,
        approval,
    } = &out
    else {
        panic!("{out:?}")
    };
    assert_eq!(result.details["params"], json!({"path": "a.txt"}));
    assert!(!params_rewritten && approval.is_none());
    assert_eq!(out.to_model_result("read").details, Value::Null);
}

#[tokio::test]
async fn bad_arguments_are_an_input_error() {
    let runtime = runtime_with(&[], echo_tool("read"), |_| {});
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    let out = table.invoke(call("read", json!([1, 2]))).await;
    assert!(
        matches!(&out, InvokeOutcome::Failed(e) if e.code() == ToolErrorCode::InputMalformed),
        "{out:?}"
    );
    let model = out.to_model_result("read").text();
    assert!(model.contains("\"status\": \"error\""), "{model}");
    assert!(model.contains("\"code\": \"input.malformed\""), "{model}");
}

#[tokio::test]
async fn a_tool_removed_by_policy_is_explained_not_unknown() {
    let runtime = runtime_with(&["exec"], echo_tool("read"), |_| {});
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    let out = table.invoke(call("bash", json!({"command": "ls"}))).await;
    let InvokeOutcome::Blocked(b) = &out else {
        panic!("{out:?}")
    };
    assert_eq!(b.denied_reason, DeniedReason::ToolPolicy);
    assert_eq!(b.source.as_deref(), Some("global"));
    assert_eq!(b.config_key.as_deref(), Some("tools.deny"));
    assert!(
        b.reason
            .contains("Tool `exec` is not available in this session"),
        "{}",
        b.reason
    );
    assert!(
        b.reason.contains("deny exec") && b.reason.contains("change `tools.deny`"),
        "{}",
        b.reason
    );
    let model = out.to_model_result("exec").text();
    assert!(
        model.contains("\"status\": \"blocked\"") && model.contains("tool-policy"),
        "{model}"
    );
}

#[tokio::test]
async fn unknown_and_unprovided_tools_say_which() {
    let runtime = runtime_with(&[], echo_tool("read"), |_| {});
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    let out = table.invoke(call("teleport", json!({}))).await;
    let InvokeOutcome::Failed(e) = &out else {
        panic!("{out:?}")
    };
    assert!(
        e.to_string()
            .starts_with("unknown tool: teleport. Available tools: session_status, read"),
        "{e}"
    );
    let out = table.invoke(call("exec", json!({}))).await;
    let InvokeOutcome::Failed(e) = &out else {
        panic!("{out:?}")
    };
    assert!(
        e.to_string()
            .contains("this build of Talon does not provide it"),
        "{e}"
    );
}

#[tokio::test]
async fn a_hook_block_stops_the_tool_and_a_rewrite_reaches_it() {
    let echo = echo_tool("write");
    let calls = Arc::clone(echo.probe().unwrap());
    let runtime = runtime_with(&[], echo, |b| {
        b.hooks_mut().on_before_tool_call(
            Registration::new("guard").matcher(ToolMatcher::ids(["write"])),
            Arc::new(Hook(BeforeToolCallResult::block("not today"))),
        );
    });
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    let out = table
        .invoke(call("write", json!({"path": "a", "content": "x"})))
        .await;
    assert!(
        matches!(&out, InvokeOutcome::Blocked(b) if b.reason == "not today" && b.source.as_deref() == Some("guard"))
    );
    assert_eq!(calls.count(), 0);

    let runtime = runtime_with(&[], echo_tool("write"), |b| {
        let mut p = serde_json::Map::new();
        p.insert("path".into(), json!("safe"));
        b.hooks_mut().on_before_tool_call(
            Registration::new("rw"),
            Arc::new(Hook(BeforeToolCallResult::params(p))),
        );
    });
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    let out = table
        .invoke(call("write", json!({"path": "../etc", "content": "x"})))
        .await;
    let InvokeOutcome::Completed {
        result,
        params_rewritten,
        ..
    } = out
    else {
        panic!()
    };
    assert!(params_rewritten);
    assert_eq!(
        result.details["params"],
        json!({"path": "safe", "content": "x"})
    );
}

#[tokio::test]
async fn an_approved_call_runs_once_approved() {
    let broker: Arc<dyn ApprovalBroker> = Arc::new(MemoryApprovalBroker::in_memory());
    let runtime = {
        let mut builder = RuntimeBuilder::new(PolicyConfig::default())
            .family(Arc::new(
                ToolSet::new("t").with(Arc::new(echo_tool("read"))),
            ))
            .broker(Arc::clone(&broker));
        builder.hooks_mut().on_before_tool_call(
            Registration::new("ask"),
            Arc::new(Hook(BeforeToolCallResult::approval(ApprovalSpec {
                title: "Read?".into(),
                ..ApprovalSpec::default()
            }))),
        );
        builder.build().unwrap()
    };
    let mut events = broker.subscribe();
    let b2 = Arc::clone(&broker);
    tokio::spawn(async move {
        if let Ok(ApprovalEvent::Requested(req)) = events.recv().await {
            assert_eq!(req.tool_name, "read");
            b2.resolve(&req.id, ApprovalDecision::AllowOnce, None);
        }
    });
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    let out = table.invoke(call("read", json!({"path": "a"}))).await;
    assert!(
        matches!(out, InvokeOutcome::Completed { approval: Some(a), .. } if a.decision == ApprovalDecision::AllowOnce)
    );
}

#[tokio::test]
async fn loop_detection_stops_a_repeating_model_and_unknown_tool_guessing() {
    let echo = echo_tool("read");
    let calls = Arc::clone(echo.probe().unwrap());
    let runtime = RuntimeBuilder::new(PolicyConfig::default())
        .family(Arc::new(ToolSet::new("t").with(Arc::new(echo))))
        .loop_detection(LoopDetectionConfig {
            enabled: Some(true),
            ..LoopDetectionConfig::default()
        })
        .build()
        .unwrap();
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")).run_id("r1"));
    let mut blocked_at = None;
    for i in 0..25 {
        let out = table
            .invoke(ModelToolCall::new(
                format!("c{i}"),
                "read",
                json!({"path": "same"}),
            ))
            .await;
        if let InvokeOutcome::Blocked(b) = out {
            assert_eq!(b.denied_reason, DeniedReason::ToolLoop);
            blocked_at = Some(i);
            break;
        }
    }
    assert_eq!(
        blocked_at,
        Some(20),
        "generic_repeat goes critical at 20 identical no-progress calls"
    );
    assert_eq!(calls.count(), 20);

    let table = runtime.assemble(RunSpec::new(RunContext::new("main")).run_id("r2"));
    let mut outcomes = Vec::new();
    for i in 0..11 {
        outcomes.push(
            table
                .invoke(ModelToolCall::new(format!("u{i}"), "teleport", json!({})))
                .await,
        );
    }
    assert!(
        outcomes[..10]
            .iter()
            .all(|o| matches!(o, InvokeOutcome::Failed(_)))
    );
    assert!(
        matches!(&outcomes[10], InvokeOutcome::Blocked(b) if b.denied_reason == DeniedReason::ToolLoop),
        "{:?}",
        outcomes[10]
    );
}

#[tokio::test]
async fn diagnostics_report_each_stage_without_params() {
    let events = Arc::new(Mutex::new(Vec::<DiagnosticEvent>::new()));
    let sink = Diagnostics::default();
    let e2 = Arc::clone(&events);
    sink.subscribe(Arc::new(move |e: &DiagnosticEvent| {
        e2.lock().unwrap().push(e.clone())
    }));
    let runtime = RuntimeBuilder::new(PolicyConfig {
        tools: ToolsConfig {
            deny: Some(vec!["exec".into()]),
            ..ToolsConfig::default()
        },
        ..PolicyConfig::default()
    })
    .family(Arc::new(
        ToolSet::new("t").with(Arc::new(echo_tool("read"))),
    ))
    .diagnostics(sink)
    .build()
    .unwrap();
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    table
        .invoke(ModelToolCall::new(
            "a",
            "read",
            json!({"path": "secret-token-123"}),
        ))
        .await;
    table
        .invoke(ModelToolCall::new("b", "read", json!({"fail": true})))
        .await;
    table
        .invoke(ModelToolCall::new("c", "exec", json!({"command": "ls"})))
        .await;
    let seen = events.lock().unwrap().clone();
    let kinds: Vec<(&str, &str)> = seen
        .iter()
        .map(|e| (e.tool_call_id.as_str(), e.kind.as_str()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("a", "tool.execution.started"),
            ("a", "tool.execution.completed"),
            ("b", "tool.execution.started"),
            ("b", "tool.execution.error"),
            ("c", "tool.execution.blocked"),
        ]
    );
    assert_eq!(seen[3].error_class.as_deref(), Some("execution"));
    assert_eq!(seen[4].denied_reason.as_deref(), Some("tool-policy"));
    assert!(
        !serde_json::to_string(&seen)
            .unwrap()
            .contains("secret-token-123")
    );
}

#[tokio::test]
async fn an_aborted_run_refuses_further_calls() {
    let runtime = runtime_with(&[], echo_tool("read"), |_| {});
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    table.canceller().cancel("user stopped the run");
    let out = table.invoke(call("read", json!({}))).await;
    assert!(
        matches!(&out, InvokeOutcome::Failed(e) if e.is_aborted() && e.message() == "user stopped the run"),
        "{out:?}"
    );
    assert_eq!(out.status(), talon_runtime::CallStatus::Cancelled);
}

/// Waits for its call's token, then reports the abort as any tool does
/// (without knowing why).
struct WaitsForAbort {
    spec: talon_tool_catalog::ToolSpec,
    entered: Arc<tokio::sync::Notify>,
}

#[async_trait::async_trait]
impl talon_tool_catalog::Tool for WaitsForAbort {
    fn spec(&self) -> &talon_tool_catalog::ToolSpec {
        &self.spec
    }

    async fn execute(
        &self,
        _call: &talon_tool_catalog::ToolCall,
        _ctx: &talon_tool_catalog::ToolContext,
        abort: &talon_tool_catalog::CancellationToken,
    ) -> Result<talon_tool_catalog::ToolResult, ToolError> {
        use talon_tool_catalog::CancelExt as _;
        self.entered.notify_one();
        abort.cancelled().await;
        Err(abort.abort_error())
    }
}

#[tokio::test]
async fn a_call_in_flight_fails_with_the_reason_the_run_was_cancelled_for() {
    let entered = Arc::new(tokio::sync::Notify::new());
    let tool = WaitsForAbort {
        spec: talon_tool_catalog::ToolSpec::core("read").unwrap(),
        entered: Arc::clone(&entered),
    };
    let runtime = RuntimeBuilder::new(PolicyConfig::default())
        .family(Arc::new(ToolSet::new("t").with(Arc::new(tool))))
        .build()
        .unwrap();
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    let cancel = async {
        entered.notified().await;
        table.canceller().cancel("the gateway is shutting down");
    };
    let (out, ()) = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        tokio::join!(table.invoke(call("read", json!({}))), cancel)
    })
    .await
    .expect("the call ends once the run is cancelled");
    assert!(
        matches!(&out, InvokeOutcome::Failed(e) if e.is_aborted() && e.message() == "the gateway is shutting down"),
        "{out:?}"
    );
}

#[tokio::test]
async fn malformed_arguments_are_seen_by_loop_detection() {
    let runtime = RuntimeBuilder::new(PolicyConfig::default())
        .family(Arc::new(
            ToolSet::new("t").with(Arc::new(echo_tool("read"))),
        ))
        .loop_detection(LoopDetectionConfig {
            enabled: Some(true),
            ..LoopDetectionConfig::default()
        })
        .build()
        .unwrap();
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")).run_id("r"));
    let mut blocked_at = None;
    for i in 0..25 {
        let out = table
            .invoke(ModelToolCall::new(
                format!("c{i}"),
                "read",
                json!("{broken"),
            ))
            .await;
        match out {
            InvokeOutcome::Failed(e) if e.is_input() => {}
            InvokeOutcome::Blocked(b) => {
                assert_eq!(b.denied_reason, DeniedReason::ToolLoop);
                blocked_at = Some(i);
                break;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(blocked_at, Some(20));
}

struct Recorder(Arc<Mutex<Vec<talon_hooks::AfterToolCallEvent>>>);

#[async_trait::async_trait]
impl talon_hooks::AfterToolCallHandler for Recorder {
    async fn after_tool_call(
        &self,
        e: &talon_hooks::AfterToolCallEvent,
        _c: &HookContext,
    ) -> Result<(), talon_hooks::HookError> {
        self.0.lock().unwrap().push(e.clone());
        Ok(())
    }
}

#[tokio::test]
async fn observers_get_redacted_exec_errors_and_can_be_awaited() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut builder = RuntimeBuilder::new(PolicyConfig::default()).family(Arc::new(
        ToolSet::new("t").with(Arc::new(echo_tool("exec"))),
    ));
    builder.hooks_mut().on_after_tool_call(
        Registration::new("rec"),
        Arc::new(Recorder(Arc::clone(&seen))),
    );
    let runtime = builder.build().unwrap();
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    let out = table
        .invoke(call(
            "exec",
            json!({"command": "curl -u admin:hunter2 https://x", "fail": true}),
        ))
        .await;
    assert!(matches!(out, InvokeOutcome::Failed(_)));
    table
        .wait_for_observers(std::time::Duration::from_secs(5))
        .await;
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    let text = serde_json::to_string(&seen[0]).unwrap();
    assert!(!text.contains("hunter2"), "{text}");
    assert!(
        seen[0]
            .error
            .as_deref()
            .unwrap()
            .starts_with("exec failed (message omitted")
    );
}
