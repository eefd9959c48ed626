//! Calls: results, tool errors, timeouts, crashes, output caps, aborts.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use talon_mcp::{McpManager, ServerState};
use talon_tool_catalog::{
    CancellationToken, Tool, ToolCall, ToolContext, ToolError, ToolErrorCode, ToolResult,
};

use crate::support::{fixture_server, manager};

pub(crate) async fn call(
    m: &McpManager,
    name: &str,
    params: Value,
) -> Result<ToolResult, ToolError> {
    let tool: Arc<dyn Tool> = m
        .tool("main", name)
        .unwrap_or_else(|| panic!("no tool {name}"));
    let params: Map<String, Value> = params.as_object().cloned().unwrap_or_default();
    let call = ToolCall {
        id: "c".into(),
        name: name.into(),
        params,
    };
    tool.execute(
        &call,
        &ToolContext::new("main", "s"),
        &CancellationToken::new(),
    )
    .await
}

#[tokio::test]
async fn results_and_tool_errors() {
    let m = manager(json!({"fix": fixture_server(&[], json!({}))}));
    m.ensure_agent("main").await;
    let r = call(&m, "fix__add", json!({"a": 40, "b": 2}))
        .await
        .unwrap();
    assert_eq!(r.text(), "42");
    assert_eq!(r.details["mcp"]["tool"], "add");
    let err = call(&m, "fix__fail", json!({})).await.unwrap_err();
    assert_eq!(
        err,
        ToolError::new(ToolErrorCode::McpToolError, "this tool always fails")
    );
    m.shutdown().await;
}

#[tokio::test]
async fn a_hung_call_times_out_alone_and_the_next_call_works() {
    let m = manager(json!({"fix": fixture_server(&[], json!({"timeoutMs": 300}))}));
    m.ensure_agent("main").await;
    let started = Instant::now();
    let err = call(&m, "fix__slow", json!({"ms": 10_000}))
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(
        err.is_timeout(),
        "a hung server is a timeout by kind: {err:?}"
    );
    assert_eq!(err.code().as_str(), "mcp.timeout");
    let msg = err.to_string();
    assert!(
        msg.contains("did not answer within 300 ms") && msg.contains("mcp.servers.fix.timeoutMs"),
        "{msg}"
    );
    assert_eq!(
        call(&m, "fix__echo", json!({"text": "still here"}))
            .await
            .unwrap()
            .text(),
        "still here"
    );
    assert_eq!(m.status().servers[0].restarts, 0);
    m.shutdown().await;
}

#[tokio::test]
async fn a_crash_mid_call_fails_that_call_and_the_server_restarts() {
    let m = manager(json!({"fix": fixture_server(&[], json!({"timeoutMs": 5000}))}));
    m.ensure_agent("main").await;
    let first_pid = call(&m, "fix__pid", json!({})).await.unwrap().text();
    let err = call(&m, "fix__crash", json!({})).await.unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("mcp server `fix`"), "{msg}");
    // The next call restarts it (after the backoff) and works.
    let second_pid = call(&m, "fix__pid", json!({})).await.unwrap().text();
    assert_ne!(first_pid, second_pid);
    let status = &m.status().servers[0];
    assert_eq!(status.state, ServerState::Ready);
    assert_eq!(status.restarts, 1);
    assert!(crate::support::wait_gone(first_pid.parse().unwrap(), Duration::from_secs(2)).await);
    m.shutdown().await;
}

#[tokio::test]
async fn huge_output_is_cut_to_the_cap_with_a_note() {
    let m = manager(json!({"fix": fixture_server(&[], json!({"maxOutputBytes": 4096}))}));
    m.ensure_agent("main").await;
    let r = call(&m, "fix__huge", json!({"bytes": 2_000_000}))
        .await
        .unwrap();
    let text = r.text();
    assert!(text.len() < 4096 + 300, "{}", text.len());
    assert!(text.starts_with(&"x".repeat(4096)));
    assert!(
        text.contains("output truncated: the result was 2000000 bytes"),
        "{}",
        &text[4096..]
    );
    assert_eq!(r.details["mcp"]["truncated"], true);
    // Under the cap nothing is cut.
    let small = call(&m, "fix__huge", json!({"bytes": 100})).await.unwrap();
    assert_eq!(small.text(), "x".repeat(100));
    m.shutdown().await;
}

#[tokio::test]
async fn an_abort_ends_the_call_and_the_server_stays_usable() {
    let m = manager(json!({"fix": fixture_server(&[], json!({}))}));
    m.ensure_agent("main").await;
    let tool = m.tool("main", "fix__slow").unwrap();
    let abort = CancellationToken::new();
    let a2 = abort.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        a2.cancel();
    });
    let call = ToolCall {
        id: "c".into(),
        name: "fix__slow".into(),
        params: json!({"ms": 10_000}).as_object().cloned().unwrap(),
    };
    let started = Instant::now();
    let err = tool
        .execute(&call, &ToolContext::new("main", "s"), &abort)
        .await
        .unwrap_err();
    assert!(err.is_aborted(), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(
        crate::suite::calls::call(&m, "fix__echo", json!({"text": "ok"}))
            .await
            .unwrap()
            .text(),
        "ok"
    );
    m.shutdown().await;
}

#[tokio::test]
async fn a_server_that_cannot_start_is_a_clear_error_for_the_call() {
    let m = manager(json!({
        "gone": {"command": "/nonexistent/mcp-server"},
        "fix": fixture_server(&[], json!({})),
    }));
    let reports = m.ensure_agent("main").await;
    let gone = reports.iter().find(|r| r.server == "gone").unwrap();
    let gone_error = gone.error.as_ref().unwrap();
    assert_eq!(gone_error.kind(), talon_mcp::StartErrorKind::Start);
    assert!(
        gone_error
            .to_string()
            .contains("cannot start `/nonexistent/mcp-server`"),
        "{gone:?}"
    );
    assert!(
        reports
            .iter()
            .find(|r| r.server == "fix")
            .unwrap()
            .error
            .is_none()
    );
    let status = m.status();
    let s = status.servers.iter().find(|s| s.name == "gone").unwrap();
    assert_eq!(s.state, ServerState::Failed);
    assert!(s.last_error.is_some());
    m.shutdown().await;
}

#[tokio::test]
async fn blocked_env_keys_and_unset_references_refuse_to_start() {
    let m = manager(json!({
        "preload": fixture_server(&[], json!({"env": {"LD_PRELOAD": "/tmp/evil.so"}})),
        "unset": fixture_server(&[], json!({"env": {"TOKEN": "${TALON_TEST_SURELY_UNSET_VAR}"}})),
    }));
    let reports = m.ensure_agent("main").await;
    let preload = reports[0].error.as_ref().unwrap();
    assert_eq!(preload.kind(), talon_mcp::StartErrorKind::Config);
    let preload = preload.to_string();
    assert!(
        preload.contains("LD_PRELOAD") && preload.contains("mcp.servers.preload.env"),
        "{preload}"
    );
    let unset = reports[1].error.as_ref().unwrap().to_string();
    assert!(
        unset.contains("TALON_TEST_SURELY_UNSET_VAR") && unset.contains("env `TOKEN`"),
        "{unset}"
    );
    assert!(m.materialize("main").tools.is_empty());
    m.shutdown().await;
}

#[tokio::test]
async fn a_server_that_keeps_timing_out_is_restarted() {
    let m = manager(json!({"fix": fixture_server(&[], json!({"timeoutMs": 200}))}));
    m.ensure_agent("main").await;
    let pid = call(&m, "fix__pid", json!({})).await.unwrap().text();
    for i in 1..=3 {
        let err = call(&m, "fix__slow", json!({"ms": 10_000}))
            .await
            .unwrap_err()
            .to_string();
        assert_eq!(
            err.contains("restarted on the next call"),
            i == 3,
            "{i}: {err}"
        );
    }
    assert!(crate::support::wait_gone(pid.parse().unwrap(), Duration::from_secs(2)).await);
    let new_pid = call(&m, "fix__pid", json!({})).await.unwrap().text();
    assert_ne!(pid, new_pid);
    assert_eq!(m.status().servers[0].restarts, 1);
    m.shutdown().await;
}

#[tokio::test]
async fn an_output_over_the_transport_line_limit_is_cut_while_read() {
    // Over rmcp's 16 MiB stdio line limit the old path dropped the line and
    // the call hung until its timeout; the frame guard cuts it while it is
    // read, so the call answers at once, truncated, and the server keeps
    // working.
    let m = manager(json!({"fix": fixture_server(&[], json!({"timeoutMs": 30_000}))}));
    m.ensure_agent("main").await;
    let started = std::time::Instant::now();
    let r = call(&m, "fix__huge", json!({"bytes": 20_000_000}))
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(r.details["mcp"]["truncated"], true);
    assert!(
        r.text().contains("the result was 20000000 bytes"),
        "{}",
        &r.text()[r.text().len().saturating_sub(200)..]
    );
    assert_eq!(
        call(&m, "fix__echo", json!({"text": "ok"}))
            .await
            .unwrap()
            .text(),
        "ok"
    );
    m.shutdown().await;
}

/// A server that dies before the handshake (a real `/bin/sh` writing its
/// reason to stderr) fails its start at once, and the error carries what
/// it said, the last lines only.
#[tokio::test]
async fn a_server_that_dies_at_start_reports_its_stderr_tail() {
    let script = "for i in $(seq 1 40); do echo \"noise line $i\" >&2; done; \
                  echo 'fatal: cannot read /etc/ops/creds.json (permission denied)' >&2; exit 3";
    let m = manager(json!({
        "dies": {"command": "/bin/sh", "args": ["-c", script]},
    }));
    let started = std::time::Instant::now();
    let reports = m.ensure_agent("main").await;
    let err = reports[0].error.as_ref().unwrap();
    assert_eq!(err.kind(), talon_mcp::StartErrorKind::Handshake);
    let err = err.to_string();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(err.contains("its stderr ended with"), "{err}");
    assert!(
        err.contains("fatal: cannot read /etc/ops/creds.json (permission denied)"),
        "{err}"
    );
    assert!(err.contains("noise line 40"), "{err}");
    assert!(
        !err.contains("noise line 1 |"),
        "only the tail is kept: {err}"
    );
    m.shutdown().await;
}
