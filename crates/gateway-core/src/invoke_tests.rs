#![allow(clippy::unwrap_used, clippy::expect_used)]

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
