use pretty_assertions::assert_eq;
use serde_json::json;
use talon_schema_dialects::Dialect;
use talon_schema_dialects::NormalizeOptions;
use talon_schema_dialects::normalize_schema;
use talon_schema_dialects::openai_strict_compatible;

use super::util::norm;

#[test]
fn strict_adds_required_and_closes_the_root() {
    let out = normalize_schema(
        &json!({}),
        Dialect::OpenAiStrict,
        &NormalizeOptions::default(),
    );
    assert_eq!(
        out.schema,
        json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
    );
    assert!(out.empty_object_args);
    assert!(openai_strict_compatible(&out.schema));
}

#[test]
fn strict_normalisation_of_a_typical_tool() {
    let schema = json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "opts": {"type": "object", "properties": {}, "additionalProperties": false}
        },
        "required": ["path", "opts"]
    });
    let out = norm(&schema, Dialect::OpenAiStrict);
    assert_eq!(
        out,
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "opts": {"type": "object", "properties": {}, "additionalProperties": false, "required": []}
            },
            "required": ["path", "opts"],
            "additionalProperties": false
        })
    );
    assert!(openai_strict_compatible(&out));
    // Plain OpenAI leaves the root open.
    assert!(!openai_strict_compatible(&norm(&schema, Dialect::OpenAi)));
}

#[test]
fn strict_keeps_an_explicit_open_root() {
    let out = norm(
        &json!({"type": "object", "properties": {}, "additionalProperties": true}),
        Dialect::OpenAiStrict,
    );
    assert_eq!(out["additionalProperties"], json!(true));
    assert!(!openai_strict_compatible(&out));
}

#[test]
fn compatibility_rules() {
    let ok = json!({
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "array", "items": {"type": "object", "properties": {"c": {"type": "integer"}}, "required": ["c"], "additionalProperties": false}}
        },
        "required": ["a", "b"],
        "additionalProperties": false
    });
    assert!(openai_strict_compatible(&ok));

    let not_strict = [
        // Optional property.
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": [], "additionalProperties": false}),
        // Open object.
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}),
        // Nested open object.
        json!({"type": "object", "properties": {"a": {"type": "object", "properties": {}}}, "required": ["a"], "additionalProperties": false}),
        // Unions and type arrays.
        json!({"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}]}}, "required": ["a"], "additionalProperties": false}),
        json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}}, "required": ["a"], "additionalProperties": false}),
        json!({"type": "object", "properties": {}, "additionalProperties": false, "allOf": []}),
        // Not an object at the root.
        json!({"type": "string"}),
        json!(null),
    ];
    for schema in not_strict {
        assert!(!openai_strict_compatible(&schema), "{schema}");
    }
}
