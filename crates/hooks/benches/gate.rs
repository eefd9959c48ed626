//! Tool-call gate benchmarks: `Gate::check` with nothing configured (the
//! fast path), with three plugin `before_tool_call` handlers, and with loop
//! detection over a full 30-call history.
//!
//! The workspace's criterion has no `async_tokio` feature, so `b.to_async`
//! is not available. Each benchmark instead uses `iter_custom` and runs the
//! whole batch of iterations inside one `block_on` of a current-thread
//! tokio runtime, which is exactly what criterion's `to_async(&rt).iter`
//! does: the `block_on` entry cost is paid once per batch, not per call.
//!
//! The event is built once, outside the timed loop, and cloned inside it:
//! `check` takes the event by value, and a real caller builds a fresh one
//! for every call, so the clone (tool name, a three-key params map, call
//! id) is part of the figure. `baseline_gate_event_clone` times that
//! clone alone, in the same run.

// A panic here is a benchmark setup failure, never a measured path.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Map, Value, json};
use talon_hooks::loop_detection::{LoopDetectionConfig, LoopDetector, LoopOutcome};
use talon_hooks::{
    BeforeToolCallEvent, BeforeToolCallHandler, BeforeToolCallResult, Gate, GateVerdict,
    HookContext, Hooks, Registration,
};
use talon_tool_catalog::text_result;
use tokio::runtime::Runtime;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn params(i: usize) -> Map<String, Value> {
    let mut p = Map::new();
    p.insert("path".into(), json!(format!("src/module_{i}.rs")));
    p.insert("offset".into(), json!(i * 10));
    p.insert("limit".into(), json!(200));
    p
}

fn event() -> BeforeToolCallEvent {
    BeforeToolCallEvent::new("read", params(7)).with_call_id("call_1")
}

fn context() -> HookContext {
    let mut ctx = HookContext::new("main", "agent:main:main");
    ctx.run_id = Some("run-1".into());
    ctx
}

/// Time `iters` awaits of `f` inside one `block_on` (what `to_async` does).
fn time_async<F, Fut>(rt: &Runtime, iters: u64, mut f: F) -> Duration
where
    F: FnMut(u64) -> Fut,
    Fut: Future<Output = ()>,
{
    rt.block_on(async {
        let start = Instant::now();
        for i in 0..iters {
            f(i).await;
        }
        start.elapsed()
    })
}

/// Returns no decision.
struct Observe;

#[async_trait::async_trait]
impl BeforeToolCallHandler for Observe {
    async fn before_tool_call(
        &self,
        _event: &BeforeToolCallEvent,
        _ctx: &HookContext,
    ) -> Result<Option<BeforeToolCallResult>, talon_hooks::HookError> {
        Ok(None)
    }
}

/// Returns rewritten params (caps `limit`).
struct CapLimit;

#[async_trait::async_trait]
impl BeforeToolCallHandler for CapLimit {
    async fn before_tool_call(
        &self,
        event: &BeforeToolCallEvent,
        _ctx: &HookContext,
    ) -> Result<Option<BeforeToolCallResult>, talon_hooks::HookError> {
        let mut params = event.params.clone();
        params.insert("limit".into(), json!(100));
        Ok(Some(BeforeToolCallResult::params(params)))
    }
}

/// Inspects the params and returns no decision (it would block `rm -rf`).
struct Inspect;

#[async_trait::async_trait]
impl BeforeToolCallHandler for Inspect {
    async fn before_tool_call(
        &self,
        event: &BeforeToolCallEvent,
        _ctx: &HookContext,
    ) -> Result<Option<BeforeToolCallResult>, talon_hooks::HookError> {
        let suspicious = event.params.values().any(|v| {
            v.as_str()
                .is_some_and(|s| s.contains("rm -rf") || s.starts_with("/etc/"))
        });
        Ok(suspicious.then(|| BeforeToolCallResult::block("not here")))
    }
}

fn bench(c: &mut Criterion) {
    let rt = runtime();
    let ctx = context();

    // 1. Nothing configured: no hooks, loop detection off.
    let plain = Gate::new(Arc::new(Hooks::new()));
    assert!(plain.is_passthrough());
    let ev = event();
    let verdict = rt.block_on(plain.check(ev.clone(), &ctx));
    assert!(matches!(
        verdict,
        GateVerdict::Run {
            rewritten: false,
            ..
        }
    ));
    c.bench_function("gate_check_nothing_configured", |b| {
        b.iter_custom(|iters| {
            time_async(&rt, iters, |_| async {
                black_box(plain.check(black_box(ev.clone()), &ctx).await);
            })
        })
    });

    // The same-run baseline for 1: the event clone alone, so the gate's
    // own share of the fast path is the difference.
    c.bench_function("baseline_gate_event_clone", |b| {
        b.iter_custom(|iters| {
            time_async(&rt, iters, |_| async {
                black_box(black_box(&ev).clone());
            })
        })
    });

    // 2. Three plugin handlers, loop detection off.
    let mut hooks = Hooks::new();
    hooks.on_before_tool_call(Registration::new("observer"), Arc::new(Observe));
    hooks.on_before_tool_call(Registration::new("limits"), Arc::new(CapLimit));
    hooks.on_before_tool_call(Registration::new("inspector"), Arc::new(Inspect));
    let hooked = Gate::new(Arc::new(hooks));
    let verdict = rt.block_on(hooked.check(ev.clone(), &ctx));
    assert!(
        matches!(&verdict, GateVerdict::Run { rewritten: true, params, .. } if params["limit"] == json!(100)),
        "{verdict:?}"
    );
    c.bench_function("gate_check_3_plugin_hooks", |b| {
        b.iter_custom(|iters| {
            time_async(&rt, iters, |_| async {
                black_box(hooked.check(black_box(ev.clone()), &ctx).await);
            })
        })
    });

    // 3. Loop detection on, the session's window (30) full of varied
    // calls with outcomes. Each timed call has a fresh call id and one of
    // 50 parameter sets, so no signature repeats inside the window and
    // the detectors never warn; the window stays at 30 records.
    let config = LoopDetectionConfig {
        enabled: Some(true),
        ..Default::default()
    }
    .resolve();
    assert_eq!(config.history_size, 30);
    let detector = Arc::new(LoopDetector::new(config));
    let looped = Gate::new(Arc::new(Hooks::new())).with_loop_detector(detector);
    let tools = ["read", "write", "edit", "exec", "web_fetch"];
    let events: Vec<BeforeToolCallEvent> = (0..50)
        .map(|i| BeforeToolCallEvent::new(tools[i % tools.len()], params(i)))
        .collect();
    let result = text_result("ok: 12 lines");
    let mut seq: u64 = 0;
    let call = |seq: u64| {
        let ev = &events[usize::try_from(seq % 50).unwrap()];
        let id = format!("call_{seq}");
        let tool = ev.tool_name.clone();
        let ev = ev.clone().with_call_id(id.clone());
        (ev, id, tool)
    };
    for _ in 0..30 {
        let (ev, id, tool) = call(seq);
        seq += 1;
        let verdict = rt.block_on(looped.check(ev, &ctx));
        assert!(matches!(verdict, GateVerdict::Run { .. }), "{verdict:?}");
        looped.record_outcome(&ctx, &id, &tool, LoopOutcome::Result(&result));
    }
    c.bench_function("gate_check_loop_detection_30_history", |b| {
        b.iter_custom(|iters| {
            let base = seq;
            seq += iters;
            time_async(&rt, iters, |i| {
                let (ev, id, tool) = call(base + i);
                let looped = &looped;
                let ctx = &ctx;
                let result = &result;
                async move {
                    let verdict = looped.check(black_box(ev), ctx).await;
                    assert!(matches!(verdict, GateVerdict::Run { .. }));
                    looped.record_outcome(ctx, &id, &tool, LoopOutcome::Result(result));
                    black_box(verdict);
                }
            })
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
