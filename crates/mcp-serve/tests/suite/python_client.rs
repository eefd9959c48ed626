//! The reference Python MCP SDK (`mcp` 2.3.0) as a client of the server
//! face: `tests/py/mcp_client.py` run by `$TALON_TEST_PYTHON`.

use super::support;

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::Value;
use talon_mcp_serve::ServeConfig;

use support::{AGENT_TOKEN, PIXEL_PNG, TestSource, serve};

fn python() -> String {
    match std::env::var("TALON_TEST_PYTHON") {
        Ok(p) if !p.trim().is_empty() => p,
        _ => panic!(
            "TALON_TEST_PYTHON is not set: this test needs the Python MCP SDK. \
             Run `cargo xtask py-env` and export TALON_TEST_PYTHON=target/talon-pyenv/bin/python \
             (or run the suite with `cargo xtask test`)."
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_python_sdk_lists_calls_and_is_refused_a_bad_token() {
    let python = python();
    let source = TestSource::new();
    // Small pages so the SDK has to follow cursors.
    let served = serve(source.clone(), ServeConfig::default().page_size(2)).await;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/py/mcp_client.py");
    let run = tokio::process::Command::new(&python)
        .arg(&script)
        .arg(&served.url)
        .arg(AGENT_TOKEN)
        .arg("main")
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the Python client hung")
        .unwrap_or_else(|e| panic!("cannot run {python}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "python failed: {stderr}");
    let seen: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("bad output ({e}): {}", String::from_utf8_lossy(&out.stdout)));

    assert_eq!(seen["protocol_version"], "2025-11-25");
    assert_eq!(seen["server_name"], "talon");
    assert_eq!(seen["has_tools_capability"], true);

    let table = source.table("main").definitions();
    let tools = seen["tools"].as_array().unwrap();
    assert_eq!(tools.len(), table.len());
    for (tool, def) in tools.iter().zip(&table) {
        assert_eq!(tool["name"], def.name.as_str());
        assert_eq!(tool["description"], def.description.as_str());
        assert_eq!(tool["input_schema"], def.parameters);
    }
    assert_eq!(seen["pages"], table.len().div_ceil(2) as u64);

    assert_eq!(seen["echo"]["is_error"], false);
    assert_eq!(seen["echo"]["texts"][0], "echo: from python");

    assert_eq!(seen["exec"]["is_error"], true);
    let blocked: Value = serde_json::from_str(seen["exec"]["texts"][0].as_str().unwrap()).unwrap();
    assert_eq!(blocked["status"], "blocked");
    assert_eq!(blocked["configKey"], "tools.deny");

    assert_eq!(seen["picture"]["is_error"], false);
    assert_eq!(seen["picture"]["images"][0]["data"], PIXEL_PNG);
    assert_eq!(seen["picture"]["images"][0]["mime_type"], "image/png");

    // The stateless 2026-07-28 lifecycle sees the same table and gate.
    assert_eq!(seen["modern_version"], "2026-07-28");
    let names: Vec<&str> = table.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(seen["modern_tools"], serde_json::json!(names));
    assert_eq!(seen["modern_echo"]["texts"][0], "echo: modern");
    assert_eq!(seen["modern_exec"]["is_error"], true);
    assert!(
        seen["modern_exec"]["texts"][0]
            .as_str()
            .unwrap()
            .contains("tools.deny")
    );

    assert_eq!(seen["bad_token_status"], 401);
    assert_eq!(seen["bad_token_body"]["error"]["code"], "unauthorized");
    let sdk = seen["bad_token_sdk"].as_str().unwrap();
    // The SDK turns the 401 into an MCPError (not a hang or a timeout).
    assert!(sdk.starts_with("refused: MCPError"), "{sdk}");
    // Only the two echoes ran (exec was denied before running).
    assert_eq!(source.probe.calls.load(Ordering::SeqCst), 2);
}
