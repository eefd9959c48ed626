//! End-to-end: a published MCP server (`mcp-server-time` from PyPI) behind
//! the gateway — its tools join the session's table, calls go through the
//! gate, `mcp.status` reports it, and no server process outlives the
//! daemon.

use super::support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::{Gw, GwExt as _};

/// Processes whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<String> {
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.chars().all(|c| c.is_ascii_digit()) || name == me {
            continue;
        }
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline"))
            && String::from_utf8_lossy(&cmd).contains(needle)
        {
            found.push(name);
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_published_mcp_server_serves_through_the_gateway_and_stops_with_it() {
    let py = support::python();
    // A unique marker on the server's command line, to find its process.
    let marker = format!("talon-gw-mcp-{}", std::process::id());
    let config = json!({
        "tools": {"deny": ["time__convert_time"]},
        "mcp": {"servers": {"time": {
            "command": py,
            "args": ["-c", format!("import sys; sys.argv[0] = '{marker}'; from mcp_server_time import main; sys.argv = ['{marker}', '--local-timezone', 'UTC']; main()")],
            "timeoutMs": 20000
        }}}
    });
    let mut gw = Gw::start(&config.to_string());
    let mut ws = gw.ws().await;

    let listed = ws.ok("tools.list", json!({"sessionKey": "main"})).await;
    let names: Vec<String> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        names.contains(&"time__get_current_time".to_owned()),
        "{names:?}"
    );
    // Policy applies to MCP tools like any other.
    assert!(
        !names.contains(&"time__convert_time".to_owned()),
        "{names:?}"
    );

    let ok = ws
        .ok(
            "tools.invoke",
            json!({"sessionKey": "main", "toolName": "time__get_current_time", "params": {"timezone": "Asia/Tokyo"}}),
        )
        .await;
    assert_eq!(ok["status"], json!("ok"), "{ok}");
    assert!(ok.to_string().contains("Asia/Tokyo"), "{ok}");
    let blocked = ws
        .ok(
            "tools.invoke",
            json!({"sessionKey": "main", "toolName": "time__convert_time", "params": {}}),
        )
        .await;
    assert_eq!(blocked["status"], json!("blocked"), "{blocked}");

    let status = ws.ok("mcp.status", json!({})).await;
    let servers = status["servers"].as_array().unwrap();
    let time = servers
        .iter()
        .find(|s| s["name"] == json!("time"))
        .unwrap_or_else(|| panic!("{status}"));
    assert!(time["toolCount"].as_u64().unwrap() >= 2, "{status}");
    assert!(!processes_mentioning(&marker).is_empty());

    // SIGTERM: the daemon exits 0 and takes the server with it.
    drop(ws);
    gw.signal(15);
    assert_eq!(gw.wait_exit(Duration::from_secs(20)), Some(0));
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_mentioning(&marker).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(processes_mentioning(&marker), Vec::<String>::new());
}
