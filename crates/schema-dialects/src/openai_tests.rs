use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

#[test]
fn strict_touches_nested_empty_objects_but_only_root_additional_properties() {
    let mut schema = json!({
        "type": "object",
        "properties": {"opts": {"type": "object", "properties": {}}}
    });
    apply_strict(&mut schema);
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "properties": {"opts": {"type": "object", "properties": {}, "required": []}},
            "additionalProperties": false
        })
    );
}

#[test]
fn strict_keeps_existing_root_additional_properties() {
    let mut schema = json!({"type": "object", "properties": {}, "additionalProperties": true});
    apply_strict(&mut schema);
    assert_eq!(
        schema,
        json!({"type": "object", "properties": {}, "additionalProperties": true, "required": []})
    );
}

#[test]
fn boolean_schemas_other_than_additional_properties_are_skipped() {
    assert!(strict_node_ok(&json!({"type": "array", "items": true}), 0));
    assert!(!strict_node_ok(&json!(true), 0));
}
