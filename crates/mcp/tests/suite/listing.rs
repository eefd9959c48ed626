//! Listing and materialisation.

use std::collections::HashSet;

use serde_json::json;
use talon_mcp::names::is_valid_tool_name;
use talon_mcp::{ServerState, Transport};
use talon_tool_catalog::{ExecutionMode, ToolFamily};

use crate::support::{fixture_server, manager};

#[tokio::test]
async fn pages_are_followed_and_tools_materialise_sorted_with_bundle_mcp() {
    let m = manager(json!({
        "fix": fixture_server(&["--many", "23", "--page-size", "5"], json!({})),
    }));
    let reports = m.ensure_agent("main").await;
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].error, None);
    let mat = m.materialize("main");
    // 13 base tools + 23 bulk tools over 8 pages of 5.
    assert_eq!(mat.tools.len(), 36);
    let names: Vec<&str> = mat.tools.iter().map(|t| t.name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    assert!(names.contains(&"fix__bulk_0022"));
    for t in &mat.tools {
        assert_eq!(t.spec.family.plugin_id(), Some("bundle-mcp"));
        assert_eq!(
            t.spec.family,
            ToolFamily::Mcp {
                server: "fix".to_owned()
            }
        );
        assert_eq!(t.execution_mode, ExecutionMode::Serial);
        assert_eq!(t.server, "fix");
    }
    let status = m.status();
    assert_eq!(status.servers.len(), 1);
    let s = &status.servers[0];
    assert_eq!(
        (s.state, s.transport, s.tool_count),
        (ServerState::Ready, Transport::Stdio, 36)
    );
    assert_eq!(s.list_requests, 1);
    // Stable: the same input set gives the same table.
    assert_eq!(*m.materialize("main"), *mat);
    m.shutdown().await;
}

#[tokio::test]
async fn edge_names_are_made_safe_unique_and_reported() {
    let m = manager(json!({
        "fix": fixture_server(&["--edge"], json!({"supportsParallelToolCalls": true})),
        "FIX": fixture_server(&[], json!({"enabled": true})),
        "日本 server": fixture_server(&[], json!({"enabled": false})),
    }));
    m.ensure_agent("main").await;
    let mat = m.materialize("main");
    let mut seen = HashSet::new();
    for t in &mat.tools {
        assert!(is_valid_tool_name(&t.name), "{}", t.name);
        assert!(seen.insert(t.name.to_lowercase()), "duplicate {}", t.name);
    }
    let by_original = |server: &str, original: &str| {
        mat.tools
            .iter()
            .find(|t| t.server == server && t.original_name == original)
            .map(|t| t.name.clone())
            .unwrap_or_else(|| panic!("{server}/{original} missing"))
    };
    // Names are assigned in (safe server, original name) order: `ECHO`
    // sorts before `Echo` before `echo`.
    assert_eq!(by_original("fix", "ECHO"), "fix__ECHO");
    assert_eq!(by_original("fix", "Echo"), "fix__Echo-2");
    assert_eq!(by_original("fix", "echo"), "fix__echo-3");
    assert_eq!(by_original("fix", "工具"), "fix__tool---");
    assert_eq!(by_original("fix", "🚀launch"), "fix__tool---launch");
    assert_eq!(
        by_original("fix", "1starts_with_digit"),
        "fix__tool-1starts_with_digit"
    );
    assert_eq!(by_original("fix", "with space"), "fix__with-space");
    // The second server's name collides case-insensitively: `FIX-2`.
    assert_eq!(by_original("FIX", "echo"), "FIX-2__echo");
    let long = by_original("fix", &format!("very_long_tool_name_{}", "x".repeat(80)));
    assert_eq!(long.len(), 64);
    let long_b = by_original("fix", &format!("very_long_tool_name_{}_b", "x".repeat(80)));
    assert_eq!(long_b.len(), 64);
    assert!(long_b.ends_with("-2"), "{long_b}");
    // Parallel only for the server that declares it.
    for t in &mat.tools {
        let want = if t.server == "fix" {
            ExecutionMode::Parallel
        } else {
            ExecutionMode::Serial
        };
        assert_eq!(t.execution_mode, want, "{}", t.name);
        assert_eq!(t.spec.execution_mode, want);
    }
    assert!(
        mat.renamed
            .iter()
            .any(|l| l.contains("`工具`") && l.contains("fix__tool---")),
        "{:?}",
        mat.renamed
    );
    // The disabled server contributes nothing and says so.
    let status = m.status();
    let disabled = status
        .servers
        .iter()
        .find(|s| s.name == "日本 server")
        .unwrap();
    assert_eq!(disabled.state, ServerState::Disabled);
    assert_eq!(disabled.safe_name, "mcp----server");
    assert!(mat.tools.iter().all(|t| t.server != "日本 server"));
    m.shutdown().await;
}

#[tokio::test]
async fn agents_get_global_then_own_servers() {
    use talon_mcp::McpManager;
    let global = talon_mcp::parse_config(
        &json!({"servers": {"shared": fixture_server(&["--label", "global"], json!({}))}}),
        "mcp",
    )
    .unwrap();
    let own = talon_mcp::parse_config(
        &json!({"servers": {
            "shared": fixture_server(&["--label", "ops"], json!({})),
            "extra": fixture_server(&[], json!({"enabled": false})),
        }}),
        "agents.list[0].mcp",
    )
    .unwrap();
    let m = McpManager::new(global, vec![("Ops".to_owned(), own)]);
    assert!(m.has_servers("ops"));
    m.ensure_agent("ops").await;
    m.ensure_agent("main").await;
    let ops = m.tool("ops", "shared__label").unwrap();
    let main = m.tool("main", "shared__label").unwrap();
    let abort = talon_tool_catalog::CancellationToken::new();
    let ctx = talon_tool_catalog::ToolContext::new("ops", "s");
    let call = talon_tool_catalog::ToolCall {
        id: "1".into(),
        name: "shared__label".into(),
        params: Default::default(),
    };
    assert_eq!(
        ops.execute(&call, &ctx, &abort).await.unwrap().text(),
        "ops"
    );
    assert_eq!(
        main.execute(&call, &ctx, &abort).await.unwrap().text(),
        "global"
    );
    let names: Vec<(String, String)> = m
        .status()
        .servers
        .iter()
        .map(|s| (s.agent.clone(), s.name.clone()))
        .collect();
    assert_eq!(
        names,
        vec![
            ("main".to_owned(), "shared".to_owned()),
            ("ops".to_owned(), "shared".to_owned()),
            ("ops".to_owned(), "extra".to_owned()),
        ]
    );
    m.shutdown().await;
}
