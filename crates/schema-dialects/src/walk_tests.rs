use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

#[test]
fn strip_keywords_spares_property_names_and_data() {
    let mut schema = json!({
        "type": "object",
        "format": "x",
        "properties": {
            "format": {"type": "string", "format": "date"},
            "list": {"type": "array", "items": {"format": "uri"}}
        },
        "default": {"format": "kept: plain data"}
    });
    strip_keywords(&mut schema, &["format"], 0);
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "properties": {
                "format": {"type": "string"},
                "list": {"type": "array", "items": {}}
            },
            "default": {"format": "kept: plain data"}
        })
    );
}

#[test]
fn for_each_child_visits_every_schema_position() {
    let schema = json!({
        "items": [{"a": 1}],
        "prefixItems": [{"a": 2}],
        "additionalProperties": {"a": 3},
        "properties": {"p": {"a": 4}},
        "$defs": {"d": {"a": 5}},
        "anyOf": [{"a": 6}],
        "not": {"a": 7},
        "enum": [{"a": 99}],
        "const": {"a": 99}
    });
    let mut seen = Vec::new();
    if let Value::Object(map) = &schema {
        for_each_child(map, |child| seen.push(child["a"].clone()));
    }
    assert_eq!(
        seen,
        vec![
            json!(1),
            json!(2),
            json!(3),
            json!(4),
            json!(5),
            json!(6),
            json!(7)
        ]
    );
}

#[test]
fn truncate_replaces_deep_subschemas() {
    let mut schema = json!({"properties": {"a": {"properties": {"b": {"type": "string"}}}}});
    // Depth 0 is the root; with the root already at depth MAX_DEPTH - 2,
    // `a` sits at MAX_DEPTH - 1 and `b` at MAX_DEPTH.
    truncate(&mut schema, MAX_DEPTH - 2);
    assert_eq!(
        schema,
        json!({"properties": {"a": {"properties": {"b": {}}}}})
    );
}

#[test]
fn type_includes_reads_scalars_and_arrays() {
    let scalar = json!({"type": "array"});
    let list = json!({"type": ["null", "array"]});
    let other = json!({"type": 3});
    assert!(type_includes(scalar.as_object().unwrap(), "array"));
    assert!(type_includes(list.as_object().unwrap(), "array"));
    assert!(!type_includes(other.as_object().unwrap(), "array"));
}
