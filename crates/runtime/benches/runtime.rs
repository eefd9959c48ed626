//! Run-time tool table benchmarks: assembling a coding run's table, one
//! `invoke` round trip with nothing configured, and the same tool's
//! `execute` called directly (the same-run baseline for `invoke`).
//!
//! The workspace's criterion has no `async_tokio` feature, so `b.to_async`
//! is not available. The async benchmarks use `iter_custom` and run the
//! whole batch of iterations inside one `block_on` of a current-thread
//! tokio runtime, which is what criterion's `to_async(&rt).iter` does.

// A panic here is a benchmark setup failure, never a measured path.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(
    clippy::print_stderr,
    reason = "the bench prints the assembly stage breakdown once, next to criterion's output"
)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, RuntimeBuilder, ToolSet};
use talon_test_support::probe_tool::{ProbeTool, Reply};
use talon_tool_catalog::{
    CancellationToken, Tool, ToolCall, ToolContext, ToolFamily as Family, ToolSpec, text_result,
};
use talon_tool_policy::config::ToolsConfig;
use talon_tool_policy::{PolicyConfig, RunContext};
use tokio::runtime::Runtime;

/// A tool that returns a short, fixed text result (records nothing).
fn fake(spec: ToolSpec) -> ProbeTool {
    ProbeTool::new(spec, Reply::Fixed(text_result("ok: 12 lines")))
}

/// Core tools the fake family offers (the coding profile keeps most).
const CORE: &[&str] = &[
    "read",
    "write",
    "edit",
    "apply_patch",
    "exec",
    "process",
    "code_execution",
    "web_search",
    "web_fetch",
    "memory_search",
    "memory_get",
    "sessions_list",
    "sessions_history",
    "update_plan",
    "image",
    "cron",
];

fn plugin_schema(i: usize) -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": format!("what tool {i} looks for")},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100},
            "mode": {"type": "string", "enum": ["fast", "full"]}
        },
        "required": ["query"]
    })
}

/// 40 tools: 16 core, 12 from two plugins, 12 from three MCP servers.
fn tool_set() -> ToolSet {
    let mut set = ToolSet::new("bench");
    for name in CORE {
        let spec = ToolSpec::core(name).expect("core tool");
        set = set.with(Arc::new(fake(spec)));
    }
    for i in 0..12 {
        let plugin = if i % 2 == 0 { "git-tools" } else { "jira" };
        let spec = ToolSpec::new(
            format!("{}_{i}", plugin.replace('-', "_")),
            Family::Plugin {
                plugin_id: plugin.into(),
            },
        )
        .with_description(format!("plugin tool {i}"))
        .with_parameters(plugin_schema(i));
        set = set.with(Arc::new(fake(spec)));
    }
    for i in 0..12 {
        let server = format!("srv{}", i % 3);
        let spec = ToolSpec::new(format!("{server}__tool_{i}"), Family::Mcp { server })
            .with_description(format!("MCP tool {i}"))
            .with_parameters(plugin_schema(i));
        set = set.with(Arc::new(fake(spec)));
    }
    set
}

fn policy() -> PolicyConfig {
    PolicyConfig {
        tools: ToolsConfig {
            profile: Some("coding".into()),
            also_allow: Some(vec!["git-tools".into()]),
            deny: Some(vec!["web_search".into()]),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn context() -> RunContext {
    RunContext {
        model_provider: Some("openai".into()),
        ..RunContext::new("main")
    }
}

/// Time `iters` awaits of `f` inside one `block_on` (what `to_async` does).
fn time_async<F, Fut>(rt: &Runtime, iters: u64, mut f: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    rt.block_on(async {
        let start = Instant::now();
        for _ in 0..iters {
            f().await;
        }
        start.elapsed()
    })
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let set = tool_set();
    let runtime = RuntimeBuilder::new(policy())
        .family(Arc::new(set.clone()))
        .build()
        .expect("runtime");
    let ctx = context();

    // Sanity: the policy keeps core, MCP and the also-allowed plugin's
    // tools, and drops the denied and non-allowed ones.
    let table = runtime.assemble(RunSpec::new(ctx.clone()));
    assert!(table.contains("read") && table.contains("session_status"));
    assert!(table.contains("srv1__tool_4") && table.contains("git_tools_0"));
    assert!(!table.contains("web_search") && !table.contains("jira_1"));
    let kept = table.names().len();
    // Where the assembly time goes (stage timings, averaged).
    let mut sums: BTreeMap<&'static str, (usize, u64)> = BTreeMap::new();
    for _ in 0..500 {
        let t = runtime.assemble(RunSpec::new(ctx.clone()));
        for (i, s) in t.timings().iter().enumerate() {
            let e = sums.entry(s.stage).or_insert((i, 0));
            e.1 += s.micros;
        }
    }
    let mut stages: Vec<_> = sums.into_iter().collect();
    stages.sort_by_key(|(_, (i, _))| *i);
    let stages: Vec<String> = stages
        .iter()
        .map(|(stage, (_, sum))| format!("{stage} {:.1} µs", *sum as f64 / 500.0))
        .collect();
    eprintln!(
        "runtime_assemble_coding_run: {kept} of 41 offered tools kept; stage means over 500 runs: {}",
        stages.join(", ")
    );

    c.bench_function("runtime_assemble_coding_run", |b| {
        b.iter(|| runtime.assemble(black_box(RunSpec::new(ctx.clone()))))
    });

    // One call through the table: argument decoding, the gate (no hooks,
    // loop detection off), execute, diagnostics, loop record, after-call
    // event. The ModelToolCall is cloned per call (`invoke` takes it by
    // value).
    let call = ModelToolCall::new(
        "call_1",
        "read",
        json!({"path": "src/lib.rs", "offset": 1, "limit": 50}),
    );
    let outcome = rt.block_on(table.invoke(call.clone()));
    assert!(
        matches!(&outcome, InvokeOutcome::Completed { result, .. } if result.text() == "ok: 12 lines"),
        "{outcome:?}"
    );
    c.bench_function("runtime_invoke_nothing_configured", |b| {
        b.iter_custom(|iters| {
            time_async(&rt, iters, || async {
                black_box(table.invoke(black_box(call.clone())).await);
            })
        })
    });

    // The baseline: the same tool's `execute`, called directly with an
    // already decoded ToolCall (cloned per call, as `invoke` clones its
    // ModelToolCall), no gate, no diagnostics.
    let tool: Arc<dyn Tool> = Arc::new(fake(ToolSpec::core("read").expect("core tool")));
    let Value::Object(params) = call.arguments.clone() else {
        panic!("arguments are an object");
    };
    let tool_call = ToolCall {
        id: call.id.clone(),
        name: "read".into(),
        params,
    };
    let tool_ctx = ToolContext::new(&ctx.agent_id, &ctx.session_key);
    let abort = CancellationToken::new();
    c.bench_function("baseline_direct_tool_execute", |b| {
        b.iter_custom(|iters| {
            time_async(&rt, iters, || async {
                let call = black_box(tool_call.clone());
                let _ = black_box(tool.execute(&call, &tool_ctx, &abort).await);
            })
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
