use pretty_assertions::assert_eq;
use serde_json::json;
use talon_schema_dialects::Dialect;
use talon_schema_dialects::NormalizeOptions;
use talon_schema_dialects::normalize_schema;

use super::util::norm;

#[test]
fn empty_schema_becomes_an_empty_object() {
    let out = normalize_schema(&json!({}), Dialect::OpenAi, &NormalizeOptions::default());
    assert_eq!(out.schema, json!({"type": "object", "properties": {}}));
    assert!(out.empty_object_args);
}

#[test]
fn properties_or_required_without_type() {
    assert_eq!(
        norm(
            &json!({"properties": {"a": {"type": "string"}}}),
            Dialect::OpenAi
        ),
        json!({"type": "object", "properties": {"a": {"type": "string"}}})
    );
    assert_eq!(
        norm(&json!({"required": ["a"]}), Dialect::OpenAi),
        json!({"type": "object", "properties": {}, "required": ["a"]})
    );
}

#[test]
fn typed_object_without_valid_properties() {
    assert_eq!(
        norm(&json!({"type": "object"}), Dialect::OpenAi),
        json!({"type": "object", "properties": {}})
    );
    assert_eq!(
        norm(
            &json!({"type": "object", "properties": ["a"]}),
            Dialect::OpenAi
        ),
        json!({"type": "object", "properties": {}})
    );
}

#[test]
fn non_object_roots_become_empty_objects() {
    for root in [json!(null), json!(true), json!(3), json!("x"), json!([1])] {
        assert_eq!(
            norm(&root, Dialect::OpenAi),
            json!({"type": "object", "properties": {}}),
            "{root}"
        );
    }
    assert_eq!(
        norm(
            &json!({"type": "string", "title": "Query", "maxLength": 5}),
            Dialect::Anthropic
        ),
        json!({"type": "object", "title": "Query", "properties": {}})
    );
    assert_eq!(
        norm(
            &json!({"type": ["object", "null"], "properties": {}}),
            Dialect::OpenAi
        ),
        json!({"type": "object", "properties": {}})
    );
}

#[test]
fn top_level_any_of_is_flattened() {
    let schema = json!({
        "title": "Files",
        "description": "read or write",
        "anyOf": [
            {
                "type": "object",
                "properties": {
                    "action": {"const": "read", "description": "what to do"},
                    "path": {"type": "string"}
                },
                "required": ["action", "path"]
            },
            {
                "type": "object",
                "properties": {
                    "action": {"const": "write"},
                    "path": {"type": "string", "description": "ignored: first wins"},
                    "content": {"type": "string"}
                },
                "required": ["action", "path", "content"]
            },
            {"type": "string"}
        ]
    });
    let out = normalize_schema(&schema, Dialect::OpenAi, &NormalizeOptions::default());
    assert_eq!(
        out.schema,
        json!({
            "type": "object",
            "title": "Files",
            "description": "read or write",
            "properties": {
                "action": {"description": "what to do", "type": "string", "enum": ["read", "write"]},
                "path": {"type": "string"},
                "content": {"type": "string"}
            },
            "required": ["action", "path"]
        })
    );
    assert!(!out.empty_object_args);
}

#[test]
fn flattening_merges_base_properties_and_respects_base_required() {
    let schema = json!({
        "properties": {"id": {"type": "integer"}},
        "required": ["id"],
        "additionalProperties": false,
        "oneOf": [
            {"properties": {"level": {"enum": [1, 2]}}, "required": ["level"]},
            {"properties": {"level": {"enum": [2, 3.5]}}}
        ]
    });
    assert_eq!(
        norm(&schema, Dialect::Anthropic),
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "integer"},
                "level": {"type": "number", "enum": [1, 2, 3.5]}
            },
            "required": ["id"],
            "additionalProperties": false
        })
    );
}

#[test]
fn flattening_mixed_literal_types_leaves_type_off() {
    let schema = json!({
        "anyOf": [
            {"properties": {"v": {"const": "a"}}},
            {"properties": {"v": {"const": 1}}}
        ]
    });
    assert_eq!(
        norm(&schema, Dialect::OpenAi),
        json!({"type": "object", "properties": {"v": {"enum": ["a", 1]}}})
    );
}

#[test]
fn nullable_root_union_is_still_flattened() {
    let schema = json!({
        "nullable": true,
        "anyOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "boolean"}}, "required": ["a", "b"]}
        ]
    });
    assert_eq!(
        norm(&schema, Dialect::OpenAi),
        json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "boolean"}},
            "required": ["a"]
        })
    );
}

#[test]
fn top_level_all_of_is_kept() {
    let schema = json!({
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}},
            {"required": ["a"]}
        ]
    });
    assert_eq!(
        norm(&schema, Dialect::OpenAi),
        json!({
            "type": "object",
            "properties": {},
            "allOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}},
                {"required": ["a"]}
            ]
        })
    );
}
