//! `talon mcp tools` and `talon mcp call` against the published
//! `mcp-server-time` (a real stdio MCP server from PyPI).

use serde_json::json;

use super::util::{Run, cli};

fn python() -> String {
    std::env::var("TALON_TEST_PYTHON").unwrap_or_else(|_| {
        panic!("TALON_TEST_PYTHON is not set: run `cargo xtask py-env` (or `cargo xtask test`)")
    })
}

fn talon(dir: &std::path::Path, args: &[&str]) -> Run {
    cli()
        .config(dir.join("talon.json"))
        .home(dir)
        .state_dir(dir.join("state"))
        .args(args)
        .run()
}

fn env_with(config: serde_json::Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("talon.json"), config.to_string()).unwrap();
    dir
}

#[test]
fn mcp_tools_lists_and_mcp_call_calls_through_the_gate() {
    let time = json!({"command": python(), "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"], "timeoutMs": 20000});
    let dir = env_with(json!({"mcp": {"servers": {"time": time}}}));
    let r = talon(dir.path(), &["mcp", "tools", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows = r.json();
    let get = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "time__get_current_time")
        .unwrap_or_else(|| panic!("{rows}"));
    assert_eq!(get["server"], "time");
    assert_eq!(get["originalName"], "get_current_time");
    assert_eq!(get["executionMode"], "sequential");
    assert_eq!(get["allowed"], true);

    let r = talon(
        dir.path(),
        &[
            "mcp",
            "call",
            "time__get_current_time",
            "--params",
            r#"{"timezone": "Asia/Tokyo"}"#,
            "--json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["outcome"], "result");
    let text = v["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("Asia/Tokyo"), "{text}");

    // Denying the bundle blocks the call before the server sees it.
    let dir =
        env_with(json!({"tools": {"deny": ["bundle-mcp"]}, "mcp": {"servers": {"time": time}}}));
    let r = talon(
        dir.path(),
        &["mcp", "call", "time__get_current_time", "--params", "{}"],
    );
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    let r = talon(dir.path(), &["mcp", "tools", "--json"]);
    assert!(
        r.json()
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["allowed"] == false)
    );
}

#[test]
fn a_server_that_does_not_start_is_named_and_exits_1() {
    let dir = env_with(json!({"mcp": {"servers": {"gone": {"command": "/nonexistent/server"}}}}));
    let r = talon(dir.path(), &["mcp", "tools"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("mcp server `gone` did not start"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.contains("has no MCP tools"), "{}", r.stdout);
}
