//! The fixed order: loop detection → trusted policies → plugin hooks, and
//! the trusted-policy registration rules.

use std::sync::{Arc, Mutex};

use pretty_assertions::assert_eq;
use serde_json::{Map, Value, json};
use talon_hooks::loop_detection::{LoopDetectionConfig, LoopDetector, LoopOutcome};
use talon_hooks::{
    BeforeToolCallEvent, BeforeToolCallResult, DeniedReason, Error, Gate, GateOutcome, GateVerdict,
    HookContext, Hooks, PluginDeclaration, Registration, ToolMatcher, TrustedDecision,
    TrustedToolPolicy,
};
use talon_tool_catalog::text_result;

use super::support::{Fixed, ctx, event, params};

struct Policy {
    decision: Option<TrustedDecision>,
    log: Arc<Mutex<Vec<String>>>,
    name: &'static str,
    fail: bool,
}

#[async_trait::async_trait]
impl TrustedToolPolicy for Policy {
    async fn evaluate(
        &self,
        event: &BeforeToolCallEvent,
        _ctx: &HookContext,
    ) -> Result<Option<TrustedDecision>, talon_hooks::HookError> {
        self.log.lock().unwrap().push(format!(
            "{}:{}",
            self.name,
            Value::Object(event.params.clone())
        ));
        if self.fail {
            return Err(talon_hooks::HookError::handler("backend down"));
        }
        Ok(self.decision.clone())
    }
}

fn policy(
    name: &'static str,
    decision: Option<TrustedDecision>,
    log: &Arc<Mutex<Vec<String>>>,
) -> Arc<Policy> {
    Arc::new(Policy {
        decision,
        log: Arc::clone(log),
        name,
        fail: false,
    })
}

fn plugin(id: &str, ids: &[&str]) -> PluginDeclaration {
    PluginDeclaration {
        id: id.into(),
        enabled: true,
        trusted_policy_ids: ids.iter().map(|s| (*s).to_owned()).collect(),
    }
}

#[test]
fn undeclared_disabled_and_duplicate_policies_are_refused() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut hooks = Hooks::new();
    let err = hooks
        .trusted_mut()
        .register(
            &plugin("budget", &["spend"]),
            "other",
            ToolMatcher::all(),
            policy("p", None, &log),
        )
        .unwrap_err();
    assert!(
        matches!(err, Error::UndeclaredTrustedPolicy { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("without declaring it"), "{err}");
    let mut disabled = plugin("budget", &["spend"]);
    disabled.enabled = false;
    assert!(
        hooks
            .trusted_mut()
            .register(
                &disabled,
                "spend",
                ToolMatcher::all(),
                policy("p", None, &log)
            )
            .is_err()
    );
    hooks
        .trusted_mut()
        .register(
            &plugin("budget", &["spend"]),
            "spend",
            ToolMatcher::all(),
            policy("p", None, &log),
        )
        .unwrap();
    assert!(
        hooks
            .trusted_mut()
            .register(
                &plugin("budget", &["spend"]),
                "spend",
                ToolMatcher::all(),
                policy("p", None, &log)
            )
            .is_err()
    );
    // Ids are scoped by plugin: another plugin may reuse the local id.
    hooks
        .trusted_mut()
        .register(
            &plugin("other", &["spend"]),
            "spend",
            ToolMatcher::all(),
            policy("p", None, &log),
        )
        .unwrap();
    assert!(hooks.trusted().ids().all(|id| id.contains('/')));
}

#[tokio::test]
async fn builtins_run_first_then_plugins_in_registration_order_then_hooks() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut hooks = Hooks::new();
    let (hook, seen) = Fixed::new(None);
    hooks.on_before_tool_call(Registration::new("hook"), hook);
    hooks
        .trusted_mut()
        .register(
            &plugin("p1", &["rewrite"]),
            "rewrite",
            ToolMatcher::all(),
            policy(
                "p1",
                Some(TrustedDecision {
                    params: Some(params(json!({"n": 1}))),
                    ..TrustedDecision::default()
                }),
                &log,
            ),
        )
        .unwrap();
    hooks
        .trusted_mut()
        .register(
            &plugin("p2", &["look"]),
            "look",
            ToolMatcher::all(),
            policy("p2", None, &log),
        )
        .unwrap();
    hooks
        .trusted_mut()
        .register_builtin(
            "workspace",
            ToolMatcher::all(),
            policy("builtin", None, &log),
        )
        .unwrap();
    let out = Gate::new(Arc::new(hooks))
        .before_tool_call(event("exec", json!({"n": 0})), &ctx())
        .await;
    assert_eq!(
        log.lock().unwrap().clone(),
        vec![
            r#"builtin:{"n":0}"#.to_owned(),
            r#"p1:{"n":0}"#.to_owned(),
            r#"p2:{"n":1}"#.to_owned()
        ]
    );
    // The plugin hook's original event is the policy-adjusted one.
    assert_eq!(seen.lock().unwrap().clone(), vec![params(json!({"n": 1}))]);
    assert_eq!(
        out,
        GateOutcome::AllowRewritten {
            params: params(json!({"n": 1}))
        }
    );
}

#[tokio::test]
async fn a_trusted_block_stops_everything_after_it() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut hooks = Hooks::new();
    let (hook, seen) = Fixed::new(None);
    hooks.on_before_tool_call(Registration::new("hook"), hook);
    hooks
        .trusted_mut()
        .register_builtin(
            "deny",
            ToolMatcher::all(),
            policy(
                "b",
                Some(TrustedDecision {
                    allow: Some(false),
                    ..TrustedDecision::default()
                }),
                &log,
            ),
        )
        .unwrap();
    match Gate::new(Arc::new(hooks))
        .before_tool_call(event("exec", json!({})), &ctx())
        .await
    {
        GateOutcome::Blocked(b) => {
            assert_eq!(b.denied_reason, DeniedReason::TrustedPolicy);
            assert_eq!(b.reason, "blocked by builtin/deny");
        }
        other => panic!("{other:?}"),
    }
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_failing_trusted_policy_blocks_fail_closed() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut hooks = Hooks::new();
    hooks
        .trusted_mut()
        .register(
            &plugin("budget", &["spend"]),
            "spend",
            ToolMatcher::all(),
            Arc::new(Policy {
                decision: None,
                log,
                name: "x",
                fail: true,
            }),
        )
        .unwrap();
    match Gate::new(Arc::new(hooks))
        .before_tool_call(event("exec", json!({})), &ctx())
        .await
    {
        GateOutcome::Failed(b) => {
            assert_eq!(b.denied_reason, DeniedReason::HookFailure);
            assert!(
                b.reason
                    .starts_with("blocked by budget/spend: policy evaluation failed"),
                "{}",
                b.reason
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_trusted_approval_freezes_params_for_plugin_hooks() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut hooks = Hooks::new();
    let spec = talon_hooks::ApprovalSpec {
        title: "budget".into(),
        ..Default::default()
    };
    hooks
        .trusted_mut()
        .register_builtin(
            "ask",
            ToolMatcher::all(),
            policy(
                "b",
                Some(TrustedDecision {
                    require_approval: Some(spec),
                    ..TrustedDecision::default()
                }),
                &log,
            ),
        )
        .unwrap();
    let (rewrite, _) = Fixed::new(Some(BeforeToolCallResult::params(params(json!({"n": 9})))));
    hooks.on_before_tool_call(Registration::new("hook"), rewrite);
    match Gate::new(Arc::new(hooks))
        .before_tool_call(event("exec", json!({"n": 0})), &ctx())
        .await
    {
        GateOutcome::NeedsApproval {
            params: p,
            approvals,
            ..
        } => {
            assert_eq!(p, params(json!({"n": 0})));
            assert_eq!(approvals.len(), 1);
            assert_eq!(approvals[0].plugin_id.as_deref(), Some("builtin/ask"));
        }
        other => panic!("{other:?}"),
    }
}

fn detector(extra: Value) -> Arc<LoopDetector> {
    let mut cfg = json!({"enabled": true, "warningThreshold": 3, "criticalThreshold": 5, "globalCircuitBreakerThreshold": 8});
    if let (Value::Object(base), Value::Object(more)) = (&mut cfg, extra) {
        base.extend(more);
    }
    let config: LoopDetectionConfig = serde_json::from_value(cfg).unwrap();
    Arc::new(LoopDetector::new(config.resolve()))
}

#[tokio::test]
async fn loop_detection_runs_first_and_a_run_that_keeps_retrying_is_stopped() {
    let mut hooks = Hooks::new();
    let (hook, seen) = Fixed::new(None);
    hooks.on_before_tool_call(Registration::new("hook"), hook);
    let gate = Gate::new(Arc::new(hooks)).with_loop_detector(detector(json!({})));
    let ctx = ctx();
    let mut first_block = None;
    let mut stopped_at = None;
    for i in 0..12 {
        let ev = BeforeToolCallEvent::new("exec", params(json!({"command": "make"})))
            .with_call_id(format!("c{i}"));
        match gate.check(ev, &ctx).await {
            GateVerdict::Run { .. } => {
                gate.record_outcome(
                    &ctx,
                    &format!("c{i}"),
                    "exec",
                    LoopOutcome::Result(&text_result("same failure")),
                );
            }
            GateVerdict::Blocked(b) => {
                assert_eq!(b.denied_reason, DeniedReason::ToolLoop);
                first_block.get_or_insert(i);
                if ctx.abort.is_cancelled() {
                    stopped_at = Some(i);
                    assert_eq!(b.source.as_deref(), Some("global_circuit_breaker"), "{b:?}");
                    break;
                }
            }
        }
    }
    let first_block = first_block.expect("the loop detector never blocked");
    let stopped_at = stopped_at.expect("the circuit breaker never stopped the run");
    assert!(
        first_block < stopped_at,
        "block at {first_block}, stop at {stopped_at}"
    );
    // Vetoed calls never reached the plugin hook.
    assert_eq!(seen.lock().unwrap().len(), first_block);
}

#[tokio::test]
async fn loop_detection_is_off_by_default() {
    let config = LoopDetectionConfig::default();
    let gate = Gate::new(Arc::new(Hooks::new()))
        .with_loop_detector(Arc::new(LoopDetector::new(config.resolve())));
    assert!(gate.is_passthrough());
    let ctx = ctx();
    for i in 0..40 {
        let ev = BeforeToolCallEvent::new("exec", Map::new()).with_call_id(format!("c{i}"));
        assert!(matches!(
            gate.check(ev, &ctx).await,
            GateVerdict::Run { .. }
        ));
    }
}
