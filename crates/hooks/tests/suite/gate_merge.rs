//! OpenClaw's merge rules for plugin `before_tool_call` handlers.

use std::sync::Arc;
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;
use talon_hooks::{
    ApprovalSpec, BeforeToolCallResult, DeniedReason, Gate, GateOutcome, HOOK_FAILURE_REASON,
    Hooks, Registration, ToolMatcher,
};

use super::support::{AppendMarker, Errors, Fixed, Panics, Sleeps, ctx, event, params};

fn approval(title: &str) -> ApprovalSpec {
    ApprovalSpec {
        title: title.into(),
        description: "check".into(),
        ..ApprovalSpec::default()
    }
}

async fn run(hooks: Hooks, tool: &str, p: serde_json::Value) -> GateOutcome {
    Gate::new(Arc::new(hooks))
        .before_tool_call(event(tool, p), &ctx())
        .await
}

#[tokio::test]
async fn nothing_configured_allows_unchanged() {
    let gate = Gate::new(Arc::new(Hooks::new()));
    assert!(gate.is_passthrough());
    let out = gate
        .before_tool_call(event("exec", json!({"command": "ls"})), &ctx())
        .await;
    assert_eq!(
        out,
        GateOutcome::Allow {
            params: params(json!({"command": "ls"}))
        }
    );
}

#[tokio::test]
async fn block_true_is_terminal_and_sticky() {
    let mut hooks = Hooks::new();
    let (first, _) = Fixed::new(Some(BeforeToolCallResult::block("no")));
    let (later, later_seen) =
        Fixed::new(Some(BeforeToolCallResult::params(params(json!({"x": 1})))));
    hooks.on_before_tool_call(Registration::new("guard").priority(10), first);
    hooks.on_before_tool_call(Registration::new("late").priority(1), later);
    match run(hooks, "exec", json!({})).await {
        GateOutcome::Blocked(b) => {
            assert_eq!(b.denied_reason, DeniedReason::PluginBeforeToolCall);
            assert_eq!(b.reason, "no");
            assert_eq!(b.source.as_deref(), Some("guard"));
        }
        other => panic!("expected a block, got {other:?}"),
    }
    assert!(
        later_seen.lock().unwrap().is_empty(),
        "a lower-priority handler ran after a block"
    );
}

#[tokio::test]
async fn block_false_is_no_decision() {
    let mut hooks = Hooks::new();
    let (h, _) = Fixed::new(Some(BeforeToolCallResult {
        block: Some(false),
        ..BeforeToolCallResult::default()
    }));
    hooks.on_before_tool_call(Registration::new("p"), h);
    assert_eq!(
        run(hooks, "read", json!({"path": "a"})).await,
        GateOutcome::Allow {
            params: params(json!({"path": "a"}))
        }
    );
}

#[tokio::test]
async fn block_without_reason_uses_default() {
    let mut hooks = Hooks::new();
    let (h, _) = Fixed::new(Some(BeforeToolCallResult {
        block: Some(true),
        ..BeforeToolCallResult::default()
    }));
    hooks.on_before_tool_call(Registration::new("p"), h);
    match run(hooks, "read", json!({})).await {
        GateOutcome::Blocked(b) => assert_eq!(b.reason, "Tool call blocked by plugin hook"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn last_params_win_and_merge_shallowly_over_the_original() {
    let mut hooks = Hooks::new();
    let (a, _) = Fixed::new(Some(BeforeToolCallResult::params(params(json!({"b": 1})))));
    let (b, _) = Fixed::new(Some(BeforeToolCallResult::params(params(json!({"b": 2})))));
    hooks.on_before_tool_call(Registration::new("a").priority(2), a);
    hooks.on_before_tool_call(Registration::new("b").priority(1), b);
    assert_eq!(
        run(hooks, "exec", json!({"a": 0})).await,
        GateOutcome::AllowRewritten {
            params: params(json!({"a": 0, "b": 2}))
        }
    );
}

#[tokio::test]
async fn each_handler_sees_an_isolated_copy_of_the_original_event() {
    let mut hooks = Hooks::new();
    hooks.on_before_tool_call(
        Registration::new("x").priority(2),
        Arc::new(AppendMarker("x")),
    );
    let (spy, seen) = Fixed::new(None);
    hooks.on_before_tool_call(Registration::new("spy").priority(1), spy);
    hooks.on_before_tool_call(
        Registration::new("y").priority(0),
        Arc::new(AppendMarker("y")),
    );
    let out = run(hooks, "exec", json!({"command": "ls"})).await;
    // The spy saw the original, not x's rewrite; y started from the
    // original too, so its marks are just "y".
    assert_eq!(
        seen.lock().unwrap().clone(),
        vec![params(json!({"command": "ls"}))]
    );
    assert_eq!(
        out,
        GateOutcome::AllowRewritten {
            params: params(json!({"command": "ls", "marks": "y"}))
        }
    );
}

#[tokio::test]
async fn first_approval_freezes_params_for_other_plugins_but_not_blocks() {
    let mut hooks = Hooks::new();
    let (ask, _) = Fixed::new(Some(BeforeToolCallResult {
        params: Some(params(json!({"v": 1}))),
        require_approval: Some(approval("first")),
        ..BeforeToolCallResult::default()
    }));
    let (rewrite, _) = Fixed::new(Some(BeforeToolCallResult::params(params(json!({"v": 2})))));
    let (second_ask, _) = Fixed::new(Some(BeforeToolCallResult::approval(approval("second"))));
    hooks.on_before_tool_call(Registration::new("asker").priority(3), ask);
    hooks.on_before_tool_call(Registration::new("other").priority(2), rewrite);
    hooks.on_before_tool_call(Registration::new("third").priority(1), second_ask);
    match run(hooks, "exec", json!({"v": 0})).await {
        GateOutcome::NeedsApproval {
            params: p,
            rewritten,
            approvals,
        } => {
            let approval = &approvals[0];
            assert_eq!(approvals.len(), 1);
            assert_eq!(
                p,
                params(json!({"v": 1})),
                "a different plugin rewrote frozen params"
            );
            assert!(rewritten);
            assert_eq!(approval.title, "first");
            assert_eq!(approval.plugin_id.as_deref(), Some("asker"));
        }
        other => panic!("{other:?}"),
    }

    // A later handler may still block after an approval was requested.
    let mut hooks = Hooks::new();
    let (ask, _) = Fixed::new(Some(BeforeToolCallResult::approval(approval("a"))));
    let (block, _) = Fixed::new(Some(BeforeToolCallResult::block("later veto")));
    hooks.on_before_tool_call(Registration::new("asker").priority(2), ask);
    hooks.on_before_tool_call(Registration::new("blocker").priority(1), block);
    assert!(
        matches!(run(hooks, "exec", json!({})).await, GateOutcome::Blocked(b) if b.reason == "later veto")
    );
}

#[tokio::test]
async fn the_approving_plugin_may_still_rewrite_and_the_host_stamps_its_id() {
    let mut hooks = Hooks::new();
    let mut spec = approval("a");
    spec.plugin_id = Some("forged".into());
    let (ask, _) = Fixed::new(Some(BeforeToolCallResult::approval(spec)));
    let (same_plugin, _) = Fixed::new(Some(BeforeToolCallResult::params(params(json!({"v": 3})))));
    hooks.on_before_tool_call(Registration::new("asker").priority(2), ask);
    hooks.on_before_tool_call(Registration::new("asker").priority(1), same_plugin);
    match run(hooks, "exec", json!({"v": 0})).await {
        GateOutcome::NeedsApproval {
            params: p,
            approvals,
            ..
        } => {
            let approval = &approvals[0];
            assert_eq!(p, params(json!({"v": 3})));
            assert_eq!(approval.plugin_id.as_deref(), Some("asker"));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_panicking_handler_blocks_fail_closed_and_stops_the_chain() {
    let mut hooks = Hooks::new();
    hooks.on_before_tool_call(Registration::new("buggy").priority(2), Arc::new(Panics));
    let (after, after_seen) = Fixed::new(None);
    hooks.on_before_tool_call(Registration::new("after").priority(1), after);
    match run(hooks, "exec", json!({})).await {
        GateOutcome::Failed(b) => {
            assert_eq!(b.denied_reason, DeniedReason::HookFailure);
            // OpenClaw's exact text; the panic message (which may quote
            // the call) stays out of what the model sees.
            assert_eq!(b.reason, HOOK_FAILURE_REASON);
            assert_eq!(b.failure.as_deref(), Some("panic"));
            assert_eq!(b.source.as_deref(), Some("buggy"));
        }
        other => panic!("{other:?}"),
    }
    assert!(after_seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn an_erroring_handler_blocks_fail_closed() {
    let mut hooks = Hooks::new();
    hooks.on_before_tool_call(Registration::new("db"), Arc::new(Errors));
    assert!(
        matches!(run(hooks, "exec", json!({})).await, GateOutcome::Failed(b) if b.failure.as_deref() == Some("error") && !b.reason.contains("database"))
    );
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_handler_blocks_fail_closed() {
    let mut hooks = Hooks::new();
    hooks.on_before_tool_call(
        Registration::new("slow").timeout(Duration::from_millis(100)),
        Arc::new(Sleeps(Duration::from_secs(3600))),
    );
    match run(hooks, "exec", json!({})).await {
        GateOutcome::Failed(b) => {
            assert_eq!(b.failure.as_deref(), Some("timeout"), "{b:?}")
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn handlers_without_a_timeout_get_the_default_one() {
    let mut hooks = Hooks::new();
    hooks.on_before_tool_call(
        Registration::new("hung"),
        Arc::new(Sleeps(Duration::from_secs(3600))),
    );
    let started = tokio::time::Instant::now();
    assert!(
        matches!(run(hooks, "exec", json!({})).await, GateOutcome::Failed(b) if b.failure.as_deref() == Some("timeout"))
    );
    assert_eq!(started.elapsed(), Duration::from_secs(30));
}

#[tokio::test]
async fn matchers_use_normalised_tool_ids() {
    let mut hooks = Hooks::new();
    let (h, seen) = Fixed::new(Some(BeforeToolCallResult::block("exec only")));
    hooks.on_before_tool_call(
        Registration::new("p").matcher(ToolMatcher::ids(["BASH"])),
        h,
    );
    let hooks = Arc::new(hooks);
    let gate = Gate::new(Arc::clone(&hooks));
    assert!(matches!(
        gate.before_tool_call(event("read", json!({})), &ctx())
            .await,
        GateOutcome::Allow { .. }
    ));
    assert!(seen.lock().unwrap().is_empty());
    assert!(matches!(
        gate.before_tool_call(event("exec", json!({})), &ctx())
            .await,
        GateOutcome::Blocked(_)
    ));
}
