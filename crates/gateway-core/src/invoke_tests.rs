#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use talon_tool_catalog::text_result;

use super::*;

#[test]
fn output_cap_cuts_at_char_boundary_and_notes_it() {
    let text = "é".repeat(100); // 200 bytes
    let outcome = InvokeOutcome::Completed {
        result: text_result(text),
        params_rewritten: false,
        approval: None,
    };
    let (capped, truncated) = cap_output(outcome, 51);
    assert!(truncated);
    let InvokeOutcome::Completed { result, .. } = capped else {
        panic!()
    };
    let all = result.text();
    assert!(all.starts_with(&"é".repeat(25)));
    assert!(!all.starts_with(&"é".repeat(26)));
    assert!(all.contains("output truncated by the gateway: 200 bytes, cap 51"));
}

#[test]
fn small_output_untouched() {
    let outcome = InvokeOutcome::Completed {
        result: text_result("hi"),
        params_rewritten: false,
        approval: None,
    };
    let (capped, truncated) = cap_output(outcome.clone(), 10);
    assert!(!truncated);
    assert_eq!(capped, outcome);
}

#[test]
fn write_ahead_only_for_side_effects() {
    assert!(!needs_write_ahead("session_status"));
    assert!(!needs_write_ahead("read"));
    assert!(needs_write_ahead("exec"));
    assert!(needs_write_ahead("write"));
    assert!(needs_write_ahead("cron"));
    assert!(needs_write_ahead("some_mcp_tool"));
}

fn report(outcome: InvokeOutcome) -> CallReport {
    CallReport {
        call_id: "c".into(),
        tool_call_id: "t".into(),
        tool: "x".into(),
        kind: outcome.status(),
        outcome,
        truncated: false,
    }
}

#[test]
fn a_timeout_is_reported_by_kind_not_by_text() {
    use talon_tool_catalog::{ToolError, ToolErrorCode};
    // The kind says timed out; the text does not.
    let r = report(InvokeOutcome::Failed(ToolError::new(
        ToolErrorCode::McpTimeout,
        "the server did not answer",
    )));
    assert_eq!(r.kind, CallOutcomeKind::Timeout);
    let v = r.to_json();
    assert_eq!(v["status"], json!("timeout"));
    assert_eq!(v["errorClass"], json!("timed_out"));
    assert_eq!(v["errorCode"], json!("mcp.timeout"));
    // The text says "timed out"; the kind is execution: an error.
    let r = report(InvokeOutcome::Failed(ToolError::execution(
        "upstream: request timed out (timeout)",
    )));
    assert_eq!(r.kind, CallOutcomeKind::Error);
    assert_eq!(r.to_json()["status"], json!("error"));
    assert_eq!(r.to_json()["errorClass"], json!("execution"));
}

#[test]
fn a_result_stopped_at_its_time_limit_stays_a_timeout_after_the_cap() {
    use talon_tool_catalog::ResultStatus;
    let outcome = InvokeOutcome::Completed {
        result: text_result("x".repeat(100)).with_status(ResultStatus::TimedOut),
        params_rewritten: false,
        approval: None,
    };
    let (capped, truncated) = cap_output(outcome, 10);
    assert!(truncated);
    let r = report(capped);
    assert_eq!(r.kind, CallOutcomeKind::Timeout);
    assert_eq!(r.to_json()["status"], json!("timeout"));
}

#[test]
fn fs_errors_keep_their_code_on_the_wire() {
    // The conversion from the bridge is `talon_tools::fs_error` (tested
    // there for every code); here: the code reaches the wire unchanged.
    let e = talon_tool_catalog::ToolError::input("path", "refused")
        .with_code(talon_tool_catalog::ToolErrorCode::FsEscape);
    let v = report(InvokeOutcome::Failed(e)).to_json();
    assert_eq!(v["status"], json!("error"));
    assert_eq!(v["errorClass"], json!("input"));
    assert_eq!(v["errorCode"], json!("fs.escape"));
    assert_eq!(v["param"], json!("path"));
    assert_eq!(v["error"], json!("refused"));
}
