use serde_json::{Value, json};

use super::*;

#[test]
fn a_long_string_is_cut_and_the_line_stays_json() {
    let big = "x".repeat(10_000);
    let line = format!(
        "{}\n",
        json!({"jsonrpc": "2.0", "id": 1, "result": {"text": big}})
    );
    let out = bound_stdout(line.as_bytes(), 100);
    assert!(!out.closed);
    let text = String::from_utf8(out.bytes).unwrap();
    let v: Value = serde_json::from_str(text.trim_end()).unwrap();
    let kept = v["result"]["text"].as_str().unwrap();
    assert!(kept.len() < 200, "{kept}");
    assert!(kept.ends_with("more bytes cut by talon]"), "{kept}");
}

#[test]
fn structure_past_the_hard_budget_closes_the_session() {
    let cap = 10;
    let hard = bound_stdout(b"", cap).hard_line;
    // Many short strings: nothing to cut, so the line itself is too long.
    let items: Vec<Value> = (0..hard / 4).map(|_| json!("ab")).collect();
    let line = format!("{}\n", Value::Array(items));
    let out = bound_stdout(line.as_bytes(), cap);
    assert!(out.closed);
    assert!(out.bytes.len() <= hard + 1, "{}", out.bytes.len());
}

#[test]
fn results_are_capped_and_tool_errors_typed() {
    let ok = convert_call_result(
        json!({"content": [{"type": "text", "text": "y".repeat(500)}]}),
        "s",
        "t",
        100,
    )
    .unwrap();
    assert!(ok.text().contains("output truncated"), "{}", ok.text());
    let err = convert_call_result(
        json!({"content": [{"type": "text", "text": "boom"}], "isError": true}),
        "s",
        "t",
        100,
    )
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::McpToolError);
    let err = convert_call_result(json!({"content": 5}), "s", "t", 100).unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::McpCallFailed);
}
