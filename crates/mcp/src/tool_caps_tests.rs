#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;

fn tool(description: &str, schema: Value) -> McpTool {
    let Value::Object(schema) = schema else {
        panic!("schema must be an object")
    };
    McpTool::new("t", description.to_owned(), Arc::new(schema))
}

#[test]
fn a_small_tool_is_untouched() {
    let mut t = tool(
        "Adds numbers.",
        json!({"type": "object", "properties": {"a": {"type": "number"}}}),
    );
    let before = t.clone();
    assert_eq!(cap_tool(&mut t), None);
    assert_eq!(t, before);
}

#[test]
fn a_huge_description_is_cut_with_a_note() {
    let mut t = tool(&"d".repeat(10 << 20), json!({"type": "object"}));
    let note = cap_tool(&mut t).unwrap();
    assert!(note.contains("cut from 10485760"), "{note}");
    let d = t.description.unwrap();
    assert!(d.len() < MAX_TOOL_DESCRIPTION_BYTES + 200, "{}", d.len());
    assert!(d.ends_with(&note));
}

#[test]
fn a_huge_schema_is_reduced_step_by_step() {
    let long = "s".repeat(MAX_TOOL_SCHEMA_BYTES);
    let mut t = tool(
        "x",
        json!({"type": "object", "properties": {"a": {"type": "string", "description": long}}, "required": ["a"]}),
    );
    let note = cap_tool(&mut t).unwrap();
    assert!(
        note.contains("descriptions inside it were shortened"),
        "{note}"
    );
    assert_eq!(t.input_schema["properties"]["a"]["type"], "string");
    let props: serde_json::Map<String, Value> = (0..5000)
        .map(|i| (format!("p{i}"), json!({"enum": vec!["v"; 10]})))
        .collect();
    let mut t = tool("x", json!({"type": "object", "properties": props}));
    let note = cap_tool(&mut t).unwrap();
    assert!(note.contains("only its property names"), "{note}");
    assert!(schema_len(&t.input_schema) <= MAX_TOOL_SCHEMA_BYTES);
    assert_eq!(t.input_schema["properties"]["p4999"], json!({}));
}
