//! A test `ToolSource` over a real `talon_runtime::Runtime`, its tools, and
//! an in-process server on loopback (mounted as the gateway mounts it).

#![allow(dead_code, unreachable_pub)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use talon_mcp_serve::{Grant, McpCaller, ServeConfig, SourceError, ToolSource};
use talon_runtime::{
    InvokeOutcome, ModelToolCall, RunSpec, Runtime, RuntimeBuilder, ToolDefinition, ToolSet,
    ToolTable,
};
pub use talon_test_support::probe_tool::Probe;
use talon_test_support::probe_tool::{ProbeTool, Reply};
use talon_tool_catalog::image_result;
use talon_tool_policy::{PolicyConfig, RunContext};

/// A 1×1 PNG.
pub const PIXEL_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

pub const AGENT_TOKEN: &str = "agent-token-3f9c";
pub const READER_TOKEN: &str = "reader-token-77a1";

/// A real runtime over the shared probe tool: `echo`, `picture`, `fails`,
/// `slow` (plugin `testkit`) and the core `exec`, which the policy denies
/// (`tools.deny: ["exec"]`). `echo`, `exec` and `slow` record into `probe`.
pub fn runtime(probe: &Arc<Probe>) -> Runtime {
    let mut policy = PolicyConfig::default();
    policy.tools.deny = Some(vec!["exec".into()]);
    let object = |props: Value| json!({"type": "object", "properties": props});
    let tool = |name: &str, description: &str, parameters: Value, reply: Reply| {
        ProbeTool::plugin(name, "testkit", description, parameters, reply)
    };
    let mut picture = image_result(
        "pixel.png",
        PIXEL_PNG,
        "image/png",
        json!({"secret": "host-only"}),
    );
    picture.content.insert(
        0,
        talon_tool_catalog::ContentBlock::Text {
            text: "a pixel".into(),
        },
    );
    let set = ToolSet::new("testkit")
        .with(Arc::new(
            tool(
                "echo",
                "Echo the text back.",
                object(json!({"text": {"type": "string", "description": "What to echo"}})),
                Reply::EchoText,
            )
            .with_probe(probe),
        ))
        .with(Arc::new(tool(
            "picture",
            "Return a picture.",
            object(json!({})),
            Reply::Fixed(picture),
        )))
        .with(Arc::new(tool(
            "fails",
            "Always fails.",
            object(json!({})),
            Reply::Fail("the disk is on fire".into()),
        )))
        .with(Arc::new(
            tool(
                "slow",
                "Takes 30 seconds.",
                object(json!({})),
                Reply::Sleep(Duration::from_secs(30)),
            )
            .with_probe(probe),
        ))
        .with(Arc::new(
            ProbeTool::core("exec", Reply::EchoText).with_probe(probe),
        ));
    RuntimeBuilder::new(policy)
        .family(Arc::new(set))
        .build()
        .unwrap()
}

/// Token → scope; session name → its table. Counts `authorize` calls.
pub struct TestSource {
    pub probe: Arc<Probe>,
    tables: HashMap<String, Arc<ToolTable>>,
    tokens: Mutex<HashMap<String, &'static str>>,
    pub authorizations: AtomicUsize,
}

impl TestSource {
    pub fn new() -> Arc<Self> {
        let probe = Arc::new(Probe::default());
        let rt = runtime(&probe);
        let mut tables = HashMap::new();
        for agent in ["main", "ops"] {
            let table = rt.assemble(RunSpec::new(RunContext::new(agent)));
            tables.insert(agent.to_owned(), Arc::new(table));
        }
        let tokens = HashMap::from([
            (AGENT_TOKEN.to_owned(), "agent"),
            (READER_TOKEN.to_owned(), "read-only"),
        ]);
        Arc::new(TestSource {
            probe,
            tables,
            tokens: Mutex::new(tokens),
            authorizations: AtomicUsize::new(0),
        })
    }

    pub fn revoke(&self, token: &str) {
        self.tokens.lock().unwrap().remove(token);
    }

    pub fn table(&self, session: &str) -> Arc<ToolTable> {
        Arc::clone(&self.tables[session])
    }

    fn check(&self, caller: &McpCaller) -> Result<Arc<ToolTable>, SourceError> {
        let token = caller
            .bearer_token()
            .ok_or_else(|| SourceError::Unauthorized("no bearer token".into()))?;
        let scope = self
            .tokens
            .lock()
            .unwrap()
            .get(token)
            .copied()
            .ok_or_else(|| SourceError::Unauthorized("unknown token".into()))?;
        if scope != "agent" {
            return Err(SourceError::Forbidden(format!(
                "a {scope} token cannot use /mcp (needs agent scope)"
            )));
        }
        let session = caller
            .session_hint()
            .ok_or_else(|| SourceError::UnknownSession("(none named)".into()))?;
        self.tables
            .get(&session)
            .cloned()
            .ok_or_else(|| SourceError::UnknownSession(session.clone()))
    }
}

#[async_trait::async_trait]
impl ToolSource for TestSource {
    async fn authorize(&self, caller: &McpCaller) -> Result<Option<Grant>, SourceError> {
        self.authorizations.fetch_add(1, Ordering::SeqCst);
        self.check(caller).map(|_| None)
    }

    async fn list_tools(&self, caller: &McpCaller) -> Result<Vec<ToolDefinition>, SourceError> {
        Ok(self.check(caller)?.definitions())
    }

    async fn call_tool(
        &self,
        caller: &McpCaller,
        call: ModelToolCall,
    ) -> Result<InvokeOutcome, SourceError> {
        let table = self.check(caller)?;
        Ok(table.invoke(call).await)
    }
}

/// A server on 127.0.0.1:0 with `/mcp` nested as the gateway does.
pub struct Served {
    pub addr: SocketAddr,
    pub url: String,
    shutdown: tokio_util::sync::CancellationToken,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

pub async fn serve(source: Arc<dyn ToolSource>, config: ServeConfig) -> Served {
    let shutdown = config.shutdown.clone();
    let app = axum::Router::new()
        .route("/healthz", axum::routing::get(|| async { "ok" }))
        .nest_service("/mcp", talon_mcp_serve::router_with(source, config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled_owned().await })
            .await;
    });
    Served {
        addr,
        url: format!("http://{addr}/mcp"),
        shutdown,
    }
}
