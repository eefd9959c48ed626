//! The approval step of the gate, with the in-memory and SQLite brokers
//! (and, with the `postgres` feature, two gateways sharing one database).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;
use talon_canonical_json::hash_json;
use talon_hooks::approval::{
    ApprovalBinding, ApprovalBroker, ApprovalDecision, ApprovalEvent, MemoryApprovalBroker,
    ResolveOutcome, SqliteApprovalBroker,
};
use talon_hooks::{
    ApprovalSpec, BeforeToolCallResult, DeniedReason, Gate, GateVerdict, Hooks, Registration,
};

use super::support::{Fixed, ctx, event, params};

fn hooks_asking(timeout_ms: Option<u64>, log: &Arc<Mutex<Vec<ApprovalDecision>>>) -> Arc<Hooks> {
    let log = Arc::clone(log);
    let spec = ApprovalSpec {
        title: "Run command".into(),
        description: "Allow this exec call?".into(),
        timeout_ms,
        on_resolution: Some(Arc::new(move |d| log.lock().unwrap().push(d))),
        ..ApprovalSpec::default()
    };
    let mut hooks = Hooks::new();
    let (h, _) = Fixed::new(Some(BeforeToolCallResult {
        params: Some(params(json!({"command": "ls -la"}))),
        require_approval: Some(spec),
        ..BeforeToolCallResult::default()
    }));
    hooks.on_before_tool_call(Registration::new("approver-plugin"), h);
    Arc::new(hooks)
}

/// Answer the next request with `decision` once it arrives.
fn answer(
    broker: Arc<dyn ApprovalBroker>,
    decision: ApprovalDecision,
) -> tokio::task::JoinHandle<ResolveOutcome> {
    let mut events = broker.subscribe();
    tokio::spawn(async move {
        loop {
            if let Ok(ApprovalEvent::Requested(req)) = events.recv().await {
                return broker.resolve(&req.id, decision, None);
            }
        }
    })
}

#[tokio::test]
async fn without_a_broker_an_approval_denies_as_unresolved() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let gate = Gate::new(hooks_asking(None, &log));
    match gate.check(event("exec", json!({})), &ctx()).await {
        GateVerdict::Blocked(b) => {
            assert_eq!(b.denied_reason, DeniedReason::ApprovalUnavailable);
            assert_eq!(b.source.as_deref(), Some("approver-plugin"));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn allow_once_runs_the_frozen_params_and_tells_on_resolution() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let broker: Arc<dyn ApprovalBroker> = Arc::new(MemoryApprovalBroker::in_memory());
    let gate = Gate::new(hooks_asking(None, &log)).with_broker(Arc::clone(&broker));
    let responder = answer(Arc::clone(&broker), ApprovalDecision::AllowOnce);
    match gate
        .check(event("exec", json!({"command": "rm -rf /"})), &ctx())
        .await
    {
        GateVerdict::Run {
            params: p,
            rewritten,
            approval,
            ..
        } => {
            assert_eq!(p, params(json!({"command": "ls -la"})));
            assert!(rewritten);
            let approval = approval.unwrap();
            assert_eq!(approval.decision, ApprovalDecision::AllowOnce);
            assert!(!approval.remembered);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(responder.await.unwrap(), ResolveOutcome::Applied);
    assert_eq!(
        log.lock().unwrap().clone(),
        vec![ApprovalDecision::AllowOnce]
    );
    assert!(
        broker.pending().is_empty(),
        "an approval must be single-use"
    );
}

#[tokio::test]
async fn deny_blocks() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let broker: Arc<dyn ApprovalBroker> = Arc::new(MemoryApprovalBroker::in_memory());
    let gate = Gate::new(hooks_asking(None, &log)).with_broker(Arc::clone(&broker));
    let _responder = answer(Arc::clone(&broker), ApprovalDecision::Deny);
    assert!(matches!(
        gate.check(event("exec", json!({})), &ctx()).await,
        GateVerdict::Blocked(b) if b.denied_reason == DeniedReason::ApprovalDenied
    ));
    assert_eq!(log.lock().unwrap().clone(), vec![ApprovalDecision::Deny]);
}

#[tokio::test(start_paused = true)]
async fn an_unanswered_approval_times_out_and_denies() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let broker: Arc<dyn ApprovalBroker> = Arc::new(MemoryApprovalBroker::in_memory());
    let gate = Gate::new(hooks_asking(Some(1_000), &log)).with_broker(Arc::clone(&broker));
    let started = tokio::time::Instant::now();
    assert!(matches!(
        gate.check(event("exec", json!({})), &ctx()).await,
        GateVerdict::Blocked(b) if b.denied_reason == DeniedReason::ApprovalTimeout
    ));
    assert!(started.elapsed() >= Duration::from_millis(1_000));
    assert_eq!(log.lock().unwrap().clone(), vec![ApprovalDecision::Timeout]);
}

#[tokio::test]
async fn an_abort_while_waiting_cancels() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let broker: Arc<dyn ApprovalBroker> = Arc::new(MemoryApprovalBroker::in_memory());
    let gate = Gate::new(hooks_asking(None, &log)).with_broker(Arc::clone(&broker));
    let ctx = ctx();
    let abort = ctx.abort.clone();
    let mut events = broker.subscribe();
    tokio::spawn(async move {
        let _ = events.recv().await;
        abort.cancel("user pressed stop");
    });
    assert!(matches!(
        gate.check(event("exec", json!({})), &ctx).await,
        GateVerdict::Blocked(b) if b.denied_reason == DeniedReason::ApprovalCancelled
    ));
}

#[tokio::test]
async fn a_stale_decision_is_ignored_and_the_right_one_applies() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let broker: Arc<dyn ApprovalBroker> = Arc::new(MemoryApprovalBroker::in_memory());
    let gate = Gate::new(hooks_asking(None, &log)).with_broker(Arc::clone(&broker));
    let b2 = Arc::clone(&broker);
    let mut events = broker.subscribe();
    let responder = tokio::spawn(async move {
        let Ok(ApprovalEvent::Requested(req)) = events.recv().await else {
            panic!("no request")
        };
        // The approver reviewed different params: stale.
        let stale = ApprovalBinding {
            call_id: req.call_id.clone(),
            params_hash: hash_json(&json!({"command": "rm -rf /"})),
        };
        let first = b2.resolve(&req.id, ApprovalDecision::AllowOnce, Some(&stale));
        let right = ApprovalBinding {
            call_id: req.call_id.clone(),
            params_hash: hash_json(&json!({"command": "ls -la"})),
        };
        let second = b2.resolve(&req.id, ApprovalDecision::AllowOnce, Some(&right));
        (first, second, req)
    });
    assert!(matches!(
        gate.check(event("exec", json!({})), &ctx()).await,
        GateVerdict::Run { .. }
    ));
    let (first, second, req) = responder.await.unwrap();
    assert_eq!(
        (first, second),
        (ResolveOutcome::Stale, ResolveOutcome::Applied)
    );
    // A late duplicate changes nothing.
    assert_ne!(
        broker.resolve(&req.id, ApprovalDecision::Deny, None),
        ResolveOutcome::Applied
    );
}

#[tokio::test]
async fn allow_always_survives_a_restart_of_the_sqlite_broker() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    {
        let broker: Arc<dyn ApprovalBroker> =
            Arc::new(SqliteApprovalBroker::open_in_state_dir(dir.path()).unwrap());
        let gate = Gate::new(hooks_asking(None, &log)).with_broker(Arc::clone(&broker));
        let _responder = answer(Arc::clone(&broker), ApprovalDecision::AllowAlways);
        assert!(matches!(
            gate.check(event("exec", json!({})), &ctx()).await,
            GateVerdict::Run { .. }
        ));
    }
    // A new process: nobody answers, yet the call runs from the grant.
    let broker: Arc<dyn ApprovalBroker> =
        Arc::new(SqliteApprovalBroker::open_in_state_dir(dir.path()).unwrap());
    let gate = Gate::new(hooks_asking(Some(50), &log)).with_broker(broker);
    match gate.check(event("exec", json!({})), &ctx()).await {
        GateVerdict::Run { approval, .. } => {
            let approval = approval.unwrap();
            assert_eq!(approval.decision, ApprovalDecision::AllowAlways);
            assert!(approval.remembered);
        }
        other => panic!("{other:?}"),
    }
    // The grant is scoped to the session: another session is asked.
    let other = talon_hooks::HookContext::new("main", "agent:main:other");
    assert!(
        matches!(gate.check(event("exec", json!({})), &other).await, GateVerdict::Blocked(b) if b.denied_reason == DeniedReason::ApprovalTimeout)
    );
}

#[tokio::test]
async fn a_trusted_approval_does_not_swallow_a_plugin_approval() {
    use talon_hooks::{ToolMatcher, TrustedDecision, TrustedToolPolicy};

    struct Budget;
    #[async_trait::async_trait]
    impl TrustedToolPolicy for Budget {
        async fn evaluate(
            &self,
            _e: &talon_hooks::BeforeToolCallEvent,
            _c: &talon_hooks::HookContext,
        ) -> Result<Option<TrustedDecision>, talon_hooks::HookError> {
            Ok(Some(TrustedDecision {
                require_approval: Some(ApprovalSpec {
                    title: "Budget".into(),
                    ..ApprovalSpec::default()
                }),
                ..TrustedDecision::default()
            }))
        }
    }

    let log = Arc::new(Mutex::new(Vec::new()));
    let mut hooks = Hooks::new();
    hooks
        .trusted_mut()
        .register_builtin("budget", ToolMatcher::all(), Arc::new(Budget))
        .unwrap();
    let l2 = Arc::clone(&log);
    let (plugin, _) = Fixed::new(Some(BeforeToolCallResult::approval(ApprovalSpec {
        title: "Run rm -rf?".into(),
        on_resolution: Some(Arc::new(move |d| l2.lock().unwrap().push(d))),
        ..ApprovalSpec::default()
    })));
    hooks.on_before_tool_call(Registration::new("exec-guard"), plugin);
    let broker: Arc<dyn ApprovalBroker> = Arc::new(MemoryApprovalBroker::in_memory());
    let gate = Gate::new(Arc::new(hooks)).with_broker(Arc::clone(&broker));

    // The approver allows the budget question and denies the dangerous one.
    let mut events = broker.subscribe();
    let b2 = Arc::clone(&broker);
    let asked = Arc::new(Mutex::new(Vec::new()));
    let asked2 = Arc::clone(&asked);
    tokio::spawn(async move {
        while let Ok(ev) = events.recv().await {
            if let ApprovalEvent::Requested(req) = ev {
                asked2
                    .lock()
                    .unwrap()
                    .push((req.plugin_id.clone(), req.title.clone()));
                let d = if req.title == "Budget" {
                    ApprovalDecision::AllowOnce
                } else {
                    ApprovalDecision::Deny
                };
                b2.resolve(&req.id, d, None);
            }
        }
    });
    let verdict = gate
        .check(event("exec", json!({"command": "rm -rf ~"})), &ctx())
        .await;
    assert!(
        matches!(&verdict, GateVerdict::Blocked(b) if b.denied_reason == DeniedReason::ApprovalDenied && b.source.as_deref() == Some("exec-guard")),
        "{verdict:?}"
    );
    assert_eq!(
        asked.lock().unwrap().clone(),
        vec![
            ("builtin/budget".to_owned(), "Budget".to_owned()),
            ("exec-guard".to_owned(), "Run rm -rf?".to_owned())
        ]
    );
    assert_eq!(log.lock().unwrap().clone(), vec![ApprovalDecision::Deny]);
}

#[tokio::test]
async fn a_call_too_large_to_show_whole_is_refused_without_asking() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let broker: Arc<dyn ApprovalBroker> = Arc::new(MemoryApprovalBroker::in_memory());
    let gate = Gate::new(hooks_asking(None, &log)).with_broker(Arc::clone(&broker));
    let mut events = broker.subscribe();
    let pad = "x".repeat(talon_hooks::approval::APPROVAL_DISPLAY_MAX_BYTES);
    match gate.check(event("exec", json!({"pad": pad})), &ctx()).await {
        GateVerdict::Blocked(b) => {
            assert_eq!(b.denied_reason, DeniedReason::ApprovalUnavailable);
            assert!(b.reason.contains("shown whole"), "{}", b.reason);
        }
        other => panic!("{other:?}"),
    }
    assert!(events.try_recv().is_err(), "the approver was asked");
    assert_eq!(*log.lock().unwrap(), vec![ApprovalDecision::Cancelled]);
}

/// Two gateways on one PostgreSQL database: the call is asked on A, and
/// B's approver, who hears of it because B follows the fleet, allows it.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_asked_on_one_gateway_is_approved_on_another() {
    use talon_hooks::approval::{Broker, PostgresApprovalBroker};
    use talon_state::members::{self, Member};
    use talon_tool_catalog::CancellationToken;

    let db = talon_test_support::postgres::shared_database().unwrap();
    let gateway = || -> Arc<PostgresApprovalBroker> {
        let pool = db.pool().unwrap();
        let id = members::new_member_id().unwrap();
        let member = Member {
            id: id.clone(),
            host: "test-host".into(),
            pid: std::process::id(),
            listen: "127.0.0.1:0".into(),
            version: "test".into(),
            started_at_ms: 0,
            heartbeat_at_ms: 0,
            live: true,
        };
        members::register(&pool, &member).unwrap();
        Arc::new(Broker::open_postgres(&pool, id).unwrap())
    };
    let (a, b) = (gateway(), gateway());
    let stop = CancellationToken::new();
    let follower = {
        let (b, stop) = (Arc::clone(&b), stop.clone());
        tokio::spawn(async move { b.follow_shared(&stop).await })
    };
    let responder = answer(
        Arc::clone(&b) as Arc<dyn ApprovalBroker>,
        ApprovalDecision::AllowOnce,
    );
    let log = Arc::new(Mutex::new(Vec::new()));
    let gate = Gate::new(hooks_asking(Some(30_000), &log))
        .with_broker(Arc::clone(&a) as Arc<dyn ApprovalBroker>);
    match gate
        .check(event("exec", json!({"command": "rm -rf /"})), &ctx())
        .await
    {
        GateVerdict::Run {
            params: p,
            approval,
            ..
        } => {
            assert_eq!(p, params(json!({"command": "ls -la"})));
            assert_eq!(approval.unwrap().decision, ApprovalDecision::AllowOnce);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(responder.await.unwrap(), ResolveOutcome::Applied);
    assert_eq!(
        log.lock().unwrap().clone(),
        vec![ApprovalDecision::AllowOnce]
    );
    assert!(a.pending().is_empty() && b.pending().is_empty());
    stop.cancel();
    follower.await.unwrap();
}
