use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn clean(mut schema: Value) -> Value {
    clean_for_gemini(&mut schema, 0);
    schema
}

#[test]
fn null_variants_detected_before_cleaning() {
    assert!(is_null_schema(&json!({"enum": [null]})));
    assert!(is_null_schema(&json!({"const": null})));
    assert!(is_null_schema(&json!({"type": ["null"]})));
    assert!(!is_null_schema(&json!({"type": ["null", "string"]})));
    assert_eq!(
        clean(json!({"anyOf": [{"enum": [null]}, {"type": "integer", "minimum": 0}]})),
        json!({"type": "integer"})
    );
}

#[test]
fn literal_union_with_mixed_types_is_a_string_enum() {
    assert_eq!(
        clean(
            json!({"oneOf": [{"const": 1, "type": "integer"}, {"const": "one", "type": "string"}]})
        ),
        json!({"type": "string", "enum": ["1", "one"]})
    );
}

#[test]
fn representative_type_prefers_a_shared_type() {
    assert_eq!(
        representative_type(&[
            json!({"type": "object", "properties": {}}),
            json!({"type": "object"})
        ]),
        Some(json!("object"))
    );
    assert_eq!(
        representative_type(&[json!({"type": "array"}), json!({"type": "string"})]),
        Some(json!("array"))
    );
    assert_eq!(representative_type(&[json!({}), json!({})]), None);
}

#[test]
fn empty_union_disappears_and_keeps_the_rest() {
    assert_eq!(
        clean(json!({"type": "string", "anyOf": [{"type": "null"}]})),
        json!({"type": "string"})
    );
}

#[test]
fn boolean_and_invalid_subschemas_become_empty() {
    assert_eq!(
        clean(json!({"type": "object", "properties": {"a": true, "b": 3}})),
        json!({"type": "object", "properties": {"a": {}, "b": {}}})
    );
}

#[test]
fn type_array_of_only_null_is_removed() {
    assert_eq!(
        clean(json!({"type": ["null"], "description": "x"})),
        json!({"description": "x"})
    );
}
