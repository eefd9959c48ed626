use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

#[test]
fn nullable_type_and_enum() {
    let mut schema = json!({
        "type": "string",
        "enum": ["a", "b"],
        "nullable": true,
        "example": "a",
        "readOnly": true
    });
    clean_openapi(&mut schema, 0);
    assert_eq!(
        schema,
        json!({"type": ["string", "null"], "enum": ["a", "b", null]})
    );
}

#[test]
fn nullable_on_type_array_adds_null_once() {
    let mut schema = json!({"type": ["string", "integer"], "nullable": true});
    clean_openapi(&mut schema, 0);
    assert_eq!(schema, json!({"type": ["string", "integer", "null"]}));
    let mut already = json!({"type": ["string", "null"], "nullable": true});
    clean_openapi(&mut already, 0);
    assert_eq!(already, json!({"type": ["string", "null"]}));
}

#[test]
fn nullable_false_is_just_dropped() {
    let mut schema = json!({"type": "string", "nullable": false, "xml": {"name": "x"}});
    clean_openapi(&mut schema, 0);
    assert_eq!(schema, json!({"type": "string"}));
}

#[test]
fn nullable_composition_is_wrapped_with_meta_on_the_outside() {
    let mut schema = json!({
        "description": "either",
        "oneOf": [{"type": "string"}, {"type": "integer"}],
        "nullable": true
    });
    clean_openapi(&mut schema, 0);
    assert_eq!(
        schema,
        json!({
            "description": "either",
            "anyOf": [
                {"oneOf": [{"type": "string"}, {"type": "integer"}]},
                {"type": "null"}
            ]
        })
    );
}

#[test]
fn nullable_composition_that_already_allows_null_is_not_wrapped() {
    let mut schema = json!({"anyOf": [{"type": "string"}, {"type": "null"}], "nullable": true});
    clean_openapi(&mut schema, 0);
    assert_eq!(
        schema,
        json!({"anyOf": [{"type": "string"}, {"type": "null"}]})
    );
}

#[test]
fn items_added_and_omitted() {
    let mut schema = json!({"type": "object", "properties": {"a": {"type": ["array", "null"]}}});
    add_missing_items(&mut schema, 0);
    assert_eq!(
        schema,
        json!({"type": "object", "properties": {"a": {"type": ["array", "null"], "items": {}}}})
    );
    omit_empty_items(&mut schema, 0);
    assert_eq!(
        schema,
        json!({"type": "object", "properties": {"a": {"type": ["array", "null"]}}})
    );
}
