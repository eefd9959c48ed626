#![allow(clippy::unwrap_used, clippy::expect_used)]

use rmcp::model::{CallToolResult, ContentBlock as McpBlock};

use super::*;

#[test]
fn small_results_pass_through_with_details() {
    let r = CallToolResult::success(vec![
        McpBlock::text("hello"),
        McpBlock::image("aGk=", "image/png"),
    ]);
    let out = convert_result(r, "fix", "echo", 1024).unwrap();
    assert_eq!(out.text(), "hello");
    assert_eq!(out.content.len(), 2);
    assert_eq!(out.details["mcp"]["truncated"], false);
}

#[test]
fn long_text_is_cut_at_a_char_boundary_with_a_note() {
    let text = "é".repeat(1000); // 2000 bytes
    let r = CallToolResult::success(vec![McpBlock::text(text)]);
    let out = convert_result(r, "fix", "huge", 1025).unwrap();
    let first = match &out.content[0] {
        ContentBlock::Text { text } => text.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(first.len(), 1024);
    let note = out.text();
    assert!(
        note.contains("output truncated: the result was 2000 bytes"),
        "{note}"
    );
    assert!(note.contains("mcp.servers.fix.maxOutputBytes"), "{note}");
    assert_eq!(out.details["mcp"]["truncated"], true);
}

#[test]
fn tool_errors_become_execution_errors() {
    let r = CallToolResult::error(vec![McpBlock::text("boom")]);
    let err = convert_result(r, "fix", "fail", 1024).unwrap_err();
    assert_eq!(
        err,
        ToolError::new(talon_tool_catalog::ToolErrorCode::McpToolError, "boom")
    );
    assert_eq!(err.kind(), talon_tool_catalog::ToolErrorKind::Execution);
}
