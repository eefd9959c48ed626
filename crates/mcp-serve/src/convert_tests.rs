#![allow(clippy::unwrap_used, clippy::expect_used)]

use rmcp::model::ContentBlock as McpContent;
use serde_json::{Value, json};
use talon_hooks::{BlockedCall, DeniedReason};
use talon_runtime::{InvokeOutcome, ToolDefinition};
use talon_tool_catalog::{ContentBlock, ToolError, ToolResult};

use super::{call_result, mcp_tool};

fn def(parameters: Value, description: &str) -> ToolDefinition {
    ToolDefinition {
        name: "probe".into(),
        description: description.into(),
        parameters,
    }
}

#[test]
fn a_definition_keeps_its_schema_as_given() {
    let schema =
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
    let tool = mcp_tool(&def(schema.clone(), "Probe things."));
    assert_eq!(tool.name, "probe");
    assert_eq!(tool.description.as_deref(), Some("Probe things."));
    assert_eq!(Value::Object((*tool.input_schema).clone()), schema);
}

#[test]
fn a_non_object_schema_becomes_an_empty_object_schema_and_no_description_is_none() {
    let tool = mcp_tool(&def(json!(true), ""));
    assert_eq!(tool.description, None);
    assert_eq!(
        Value::Object((*tool.input_schema).clone()),
        json!({"type": "object", "properties": {}})
    );
}

#[test]
fn completed_results_keep_text_and_images_and_drop_details() {
    let outcome = InvokeOutcome::Completed {
        result: ToolResult {
            content: vec![
                ContentBlock::Text { text: "t".into() },
                ContentBlock::Image {
                    data: "QUJD".into(),
                    mime_type: "image/gif".into(),
                },
            ],
            details: json!({"private": 1}),
            status: talon_tool_catalog::ResultStatus::Ok,
        },
        params_rewritten: false,
        approval: None,
    };
    let r = call_result("probe", &outcome);
    assert_eq!(r.is_error, Some(false));
    assert!(matches!(&r.content[0], McpContent::Text(t) if t.text == "t"));
    assert!(
        matches!(&r.content[1], McpContent::Image(i) if i.data == "QUJD" && i.mime_type == "image/gif")
    );
    assert_eq!(r.structured_content, None);
    assert!(!serde_json::to_string(&r).unwrap().contains("private"));
}

#[test]
fn blocked_and_failed_are_error_results() {
    let blocked = BlockedCall::new(DeniedReason::ToolPolicy, "no exec here")
        .source("global")
        .config_key("tools.deny");
    let r = call_result("exec", &InvokeOutcome::Blocked(blocked.clone()));
    assert_eq!(r.is_error, Some(true));
    let McpContent::Text(t) = &r.content[0] else {
        panic!("{r:?}")
    };
    let v: Value = serde_json::from_str(&t.text).unwrap();
    assert_eq!(v, blocked.to_model_json("exec"));
    assert_eq!(v["configKey"], "tools.deny");

    let r = call_result(
        "x",
        &InvokeOutcome::Failed(ToolError::execution("boom at line 3")),
    );
    assert_eq!(r.is_error, Some(true));
    assert!(matches!(&r.content[0], McpContent::Text(t) if t.text == "boom at line 3"));
}
