use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

#[test]
fn common_json_type_rules() {
    assert_eq!(common_json_type(&[json!(1), json!(2)]), Some("integer"));
    assert_eq!(common_json_type(&[json!(1), json!(2.5)]), Some("number"));
    assert_eq!(common_json_type(&[json!("a"), json!("b")]), Some("string"));
    assert_eq!(common_json_type(&[json!("a"), json!(1)]), None);
    assert_eq!(common_json_type(&[]), None);
}

#[test]
fn literal_values_reads_enum_const_and_literal_unions() {
    assert_eq!(
        literal_values(&json!({"enum": [1, 2]}), 0),
        Some(vec![json!(1), json!(2)])
    );
    assert_eq!(
        literal_values(&json!({"const": "x"}), 0),
        Some(vec![json!("x")])
    );
    assert_eq!(
        literal_values(&json!({"anyOf": [{"const": "a"}, {"enum": ["b"]}]}), 0),
        Some(vec![json!("a"), json!("b")])
    );
    assert_eq!(
        literal_values(&json!({"anyOf": [{"const": "a"}, {"type": "string"}]}), 0),
        None
    );
    assert_eq!(literal_values(&json!({"type": "string"}), 0), None);
}

#[test]
fn non_object_root_keeps_annotations_only() {
    let out =
        fix_top_level(json!({"type": "string", "description": "d", "minLength": 2, "enum": ["a"]}));
    assert_eq!(
        out,
        json!({"type": "object", "description": "d", "properties": {}})
    );
}

#[test]
fn bad_required_at_root_is_cleaned() {
    assert_eq!(
        fix_top_level(json!({"properties": {}, "required": "a"})),
        json!({"properties": {}, "type": "object"})
    );
    assert_eq!(
        fix_top_level(json!({"properties": {}, "required": ["a", 1]})),
        json!({"properties": {}, "required": ["a"], "type": "object"})
    );
}
