//! Streamable HTTP, and a third-party server from PyPI.

use std::io::BufRead;
use std::process::{Child, Command, Stdio};

use serde_json::json;
use talon_mcp::{ServerState, Transport};

use crate::suite::calls::call;
use crate::support::{fixture_bin, manager, python};

/// The fixture serving streamable HTTP on a loopback port; killed on drop.
pub(crate) struct HttpFixture {
    pub(crate) child: Child,
    pub(crate) url: String,
}

impl HttpFixture {
    pub(crate) fn start() -> Self {
        let mut child = Command::new(fixture_bin())
            .args(["--http", "127.0.0.1:0", "--label", "over-http"])
            .stdout(Stdio::piped())
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.starts_with("http://127.0.0.1:"), "{line}");
        HttpFixture {
            child,
            url: line.trim().to_owned(),
        }
    }
}

impl Drop for HttpFixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn streamable_http_servers_list_and_call_with_env_headers() {
    let fixture = HttpFixture::start();
    // SAFETY of the test: a variable only this test reads.
    let var = "TALON_MCP_TEST_HTTP_TOKEN";
    let m = manager(
        json!({"web": {"url": fixture.url, "allowPrivateNetwork": true, "headers": {"Authorization": format!("Bearer ${{{var}}}"), "X-Static": "1"}}}),
    );
    // Unset: a clear error naming the server and the header.
    let reports = m.ensure_agent("main").await;
    let err = reports[0].error.as_ref().unwrap();
    assert_eq!(err.kind(), talon_mcp::StartErrorKind::Config);
    let err = err.to_string();
    assert!(
        err.contains("header `Authorization`")
            && err.contains(var)
            && err.contains("mcp.servers.web.headers"),
        "{err}"
    );
    m.shutdown().await;

    let m = manager(
        json!({"web": {"url": fixture.url, "allowPrivateNetwork": true, "headers": {"X-Home": "${HOME}"}, "supportsParallelToolCalls": true}}),
    );
    let reports = m.ensure_agent("main").await;
    assert_eq!(reports[0].error, None);
    let status = &m.status().servers[0];
    assert_eq!(
        (status.transport, status.state),
        (Transport::StreamableHttp, ServerState::Ready)
    );
    assert_eq!(
        call(&m, "web__label", json!({})).await.unwrap().text(),
        "over-http"
    );
    assert_eq!(
        call(&m, "web__add", json!({"a": 2, "b": 3}))
            .await
            .unwrap()
            .text(),
        "5"
    );
    let mat = m.materialize("main");
    assert!(
        mat.tools
            .iter()
            .all(|t| t.execution_mode == talon_tool_catalog::ExecutionMode::Parallel)
    );
    m.shutdown().await;
}

#[tokio::test]
async fn the_published_time_server_lists_and_answers() {
    let py = python();
    let m = manager(
        json!({"time": {"command": py, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"], "timeoutMs": 20000}}),
    );
    let reports = m.ensure_agent("main").await;
    assert_eq!(
        reports[0].error, None,
        "is mcp-server-time installed? run `cargo xtask py-env`"
    );
    let mat = m.materialize("main");
    let names: Vec<&str> = mat.tools.iter().map(|t| t.name.as_str()).collect();
    assert!(names.contains(&"time__get_current_time"), "{names:?}");
    assert!(names.contains(&"time__convert_time"), "{names:?}");
    let r = call(
        &m,
        "time__get_current_time",
        json!({"timezone": "Asia/Tokyo"}),
    )
    .await
    .unwrap();
    let body: serde_json::Value = serde_json::from_str(&r.text()).unwrap();
    assert_eq!(body["timezone"], "Asia/Tokyo");
    assert!(
        body["datetime"].as_str().unwrap().ends_with("+09:00"),
        "{body}"
    );
    // A bad timezone is the server's own tool error, for that call only.
    let err = call(
        &m,
        "time__get_current_time",
        json!({"timezone": "Not/AZone"}),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().to_lowercase().contains("timezone"), "{err}");
    assert!(
        call(&m, "time__get_current_time", json!({"timezone": "UTC"}))
            .await
            .is_ok()
    );
    m.shutdown().await;
}

#[tokio::test]
async fn a_dead_http_server_fails_the_call_clearly() {
    let mut fixture = HttpFixture::start();
    let m = manager(
        json!({"web": {"url": fixture.url, "allowPrivateNetwork": true, "timeoutMs": 2000}}),
    );
    assert_eq!(m.ensure_agent("main").await[0].error, None);
    assert_eq!(
        call(&m, "web__echo", json!({"text": "up"}))
            .await
            .unwrap()
            .text(),
        "up"
    );
    fixture.child.kill().unwrap();
    fixture.child.wait().unwrap();
    let started = std::time::Instant::now();
    let err = call(&m, "web__echo", json!({"text": "down"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert!(err.contains("mcp server `web`"), "{err}");
    m.shutdown().await;
}

#[tokio::test]
async fn an_http_answer_over_the_frame_budget_fails_the_call_and_the_next_works() {
    // With the default 200,000-byte cap the body budget is about 4.6 MB:
    // a 10 MB answer (which rmcp's own 16 MiB default read and parsed
    // whole) is refused while it is read, promptly, without ending the
    // server.
    let fixture = HttpFixture::start();
    let m = manager(
        json!({"web": {"url": fixture.url, "allowPrivateNetwork": true, "timeoutMs": 30_000}}),
    );
    assert_eq!(m.ensure_agent("main").await[0].error, None);
    let started = std::time::Instant::now();
    let err = call(&m, "web__huge", json!({"bytes": 10_000_000}))
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert!(err.message().contains("mcp server `web`"), "{err}");
    // Under the budget it is cut to the cap as before.
    let r = call(&m, "web__huge", json!({"bytes": 1_000_000}))
        .await
        .unwrap();
    assert_eq!(r.details["mcp"]["truncated"], true);
    let mut ok = false;
    for _ in 0..50 {
        if let Ok(r) = call(&m, "web__echo", json!({"text": "still up"})).await {
            assert_eq!(r.text(), "still up");
            ok = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(ok, "the server answers after the refused body");
    m.shutdown().await;
}
