//! A long-lived run keeps nothing per finished call: 100,000 calls through
//! `ToolTable::invoke`, each awaiting the run's abort token, leave no waker
//! (and so no task) attached to it.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Wake, Waker};

use serde_json::json;
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, RuntimeBuilder, ToolSet};
use talon_tool_catalog::{
    CancelExt, CancellationToken, Tool, ToolCall, ToolContext, ToolError, ToolResult, ToolSpec,
    text_result,
};
use talon_tool_policy::{PolicyConfig, RunContext};

const CALLS: usize = 100_000;

/// Stands for the task of one call: alive while anything holds its waker.
struct CallWaker {
    live: Arc<AtomicUsize>,
}

impl Wake for CallWaker {
    fn wake(self: Arc<Self>) {}
}

impl Drop for CallWaker {
    fn drop(&mut self) {
        self.live.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Checks the token, then parks on it once with its own waker (as a tool
/// awaiting cancellation in a `select!` does) and returns.
struct AwaitsAbort {
    spec: ToolSpec,
    live: Arc<AtomicUsize>,
}

#[async_trait::async_trait]
impl Tool for AwaitsAbort {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(
        &self,
        _call: &ToolCall,
        _ctx: &ToolContext,
        abort: &CancellationToken,
    ) -> Result<ToolResult, ToolError> {
        abort.check()?;
        self.live.fetch_add(1, Ordering::SeqCst);
        let waker = Waker::from(Arc::new(CallWaker {
            live: Arc::clone(&self.live),
        }));
        let mut cx = Context::from_waker(&waker);
        let mut fired = pin!(abort.cancelled());
        assert!(
            fired.as_mut().poll(&mut cx).is_pending(),
            "nobody aborted the run"
        );
        Ok(text_result("ok"))
    }
}

#[tokio::test]
async fn a_hundred_thousand_calls_leave_nothing_on_the_run_token() {
    let live = Arc::new(AtomicUsize::new(0));
    let tool = AwaitsAbort {
        spec: ToolSpec::core("read").unwrap(),
        live: Arc::clone(&live),
    };
    let runtime = RuntimeBuilder::new(PolicyConfig::default())
        .family(Arc::new(ToolSet::new("t").with(Arc::new(tool))))
        .build()
        .unwrap();
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    for i in 0..CALLS {
        let out = table
            .invoke(ModelToolCall::new(
                format!("c{i}"),
                "read",
                json!({"path": i}),
            ))
            .await;
        assert!(
            matches!(out, InvokeOutcome::Completed { .. }),
            "call {i}: {out:?}"
        );
        // Checked as it goes so a leak fails fast, naming the call.
        if i % 10_000 == 9_999 {
            assert_eq!(
                live.load(Ordering::SeqCst),
                0,
                "wakers retained after {} calls",
                i + 1
            );
        }
    }
    assert_eq!(live.load(Ordering::SeqCst), 0);
}
