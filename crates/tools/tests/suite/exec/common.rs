//! Shared helpers: a workspace, a registry and both tools.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use talon_tool_catalog::{CancellationToken, Tool, ToolCall, ToolContext, ToolError, ToolResult};
use talon_tools::{
    ExecConfig, ExecTool, HostLauncher, ProcessRegistry, ProcessTool, RegistryOptions,
};
use tempfile::TempDir;

/// The session key most tests run as.
pub(crate) const KEY: &str = "agent:main:main";
/// The longest any test may take.
pub(crate) const TEST_LIMIT: Duration = Duration::from_secs(30);

/// Runs a test body with a hard time limit.
pub(crate) async fn bounded<F: Future<Output = ()>>(body: F) {
    tokio::time::timeout(TEST_LIMIT, body)
        .await
        .expect("test exceeded its time limit");
}

pub(crate) struct Harness {
    pub(crate) dir: TempDir,
    pub(crate) registry: Arc<ProcessRegistry>,
    pub(crate) exec: ExecTool,
    pub(crate) process: ProcessTool,
}

pub(crate) fn small_options() -> RegistryOptions {
    RegistryOptions {
        retention: Duration::from_secs(60),
        max_output_bytes: 64 * 1024,
        max_running_per_key: 8,
    }
}

impl Harness {
    pub(crate) fn new() -> Self {
        Self::with(small_options(), ExecConfig::default(), |l| l)
    }

    pub(crate) fn with(
        options: RegistryOptions,
        config: ExecConfig,
        launcher: impl FnOnce(HostLauncher) -> HostLauncher,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let registry = Arc::new(ProcessRegistry::new(options));
        let host = launcher(HostLauncher::new(dir.path()).unwrap());
        let exec = ExecTool::new(Arc::new(host), Arc::clone(&registry), config).unwrap();
        let process = ProcessTool::new(Arc::clone(&registry));
        Harness {
            dir,
            registry,
            exec,
            process,
        }
    }

    pub(crate) async fn exec(&self, params: Value) -> Result<ToolResult, ToolError> {
        self.exec_as(KEY, params, &CancellationToken::new()).await
    }

    pub(crate) async fn exec_as(
        &self,
        key: &str,
        params: Value,
        abort: &CancellationToken,
    ) -> Result<ToolResult, ToolError> {
        self.exec
            .execute(&call("exec", params), &ToolContext::new("main", key), abort)
            .await
    }

    pub(crate) async fn process(&self, params: Value) -> Result<ToolResult, ToolError> {
        self.process_as(KEY, params).await
    }

    pub(crate) async fn process_as(
        &self,
        key: &str,
        params: Value,
    ) -> Result<ToolResult, ToolError> {
        self.process
            .execute(
                &call("process", params),
                &ToolContext::new("main", key),
                &CancellationToken::new(),
            )
            .await
    }

    /// Polls until the session has exited; returns every output seen.
    pub(crate) async fn poll_until_done(&self, id: &str) -> (String, ToolResult) {
        let mut seen = String::new();
        loop {
            let r = self
                .process(serde_json::json!({"action": "poll", "sessionId": id, "timeout": 1000}))
                .await
                .unwrap();
            seen.push_str(r.details["output"].as_str().unwrap_or_default());
            if r.details["status"] != "running" {
                return (seen, r);
            }
        }
    }

    /// Polls until the output seen so far contains `needle`.
    pub(crate) async fn poll_until_contains(&self, id: &str, needle: &str) -> String {
        let mut seen = String::new();
        while !seen.contains(needle) {
            let r = self
                .process(serde_json::json!({"action": "poll", "sessionId": id, "timeout": 1000}))
                .await
                .unwrap();
            seen.push_str(r.details["output"].as_str().unwrap_or_default());
            assert!(
                r.details["status"] == "running" || seen.contains(needle),
                "session ended before printing {needle:?}: {seen}"
            );
        }
        seen
    }
}

pub(crate) fn call(name: &str, params: Value) -> ToolCall {
    let Value::Object(params) = params else {
        panic!("params must be an object")
    };
    ToolCall {
        id: "call-1".into(),
        name: name.into(),
        params: params as Map<String, Value>,
    }
}

/// Whether `pid` is a live (not zombie) process. In containers whose PID 1
/// does not reap orphans, a killed grandchild stays a zombie: dead, holding
/// only its pid.
pub(crate) fn pid_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next());
            !matches!(state, Some('Z' | 'X'))
        }
        Err(_) => false,
    }
}

/// Waits (bounded) until `pid` is gone.
pub(crate) async fn wait_gone(pid: u32, within: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < within {
        if !pid_alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    !pid_alive(pid)
}

/// Waits (bounded) until `pid` has been reaped: no `/proc` entry at all,
/// not even a zombie. Only for direct children of this process (their
/// parent is us, so nobody else can leave them unreaped).
pub(crate) async fn wait_reaped(pid: u32, within: Duration) -> bool {
    let start = Instant::now();
    let path = format!("/proc/{pid}");
    while start.elapsed() < within {
        if !std::path::Path::new(&path).exists() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    !std::path::Path::new(&path).exists()
}

/// The number after `label=` in `text`.
pub(crate) fn number_after(text: &str, label: &str) -> u32 {
    let start = text
        .find(label)
        .unwrap_or_else(|| panic!("{label} not in {text:?}"))
        + label.len();
    text[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap()
}
