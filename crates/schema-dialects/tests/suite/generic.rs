use pretty_assertions::assert_eq;
use serde_json::json;
use talon_schema_dialects::Dialect;
use talon_schema_dialects::NormalizeOptions;
use talon_schema_dialects::normalize_schema;

use super::util::norm;

#[test]
fn openapi_keywords_are_cleaned_everywhere() {
    let schema = json!({
        "type": "object",
        "discriminator": {"propertyName": "kind"},
        "externalDocs": {"url": "https://example.com"},
        "properties": {
            "name": {"type": "string", "nullable": true, "example": "bob", "readOnly": true},
            "level": {"enum": ["low", "high"], "nullable": true},
            "tags": {"type": "array", "items": {"type": "string", "writeOnly": true, "xml": {"name": "tag"}}},
            "example": {"type": "string"}
        }
    });
    assert_eq!(
        norm(&schema, Dialect::Permissive),
        json!({
            "type": "object",
            "properties": {
                "name": {"type": ["string", "null"]},
                "level": {"enum": ["low", "high", null]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "example": {"type": "string"}
            }
        })
    );
}

#[test]
fn nullable_composition_is_wrapped() {
    let schema = json!({
        "type": "object",
        "properties": {
            "target": {
                "description": "where",
                "allOf": [{"type": "string"}, {"minLength": 1}],
                "nullable": true
            }
        }
    });
    assert_eq!(
        norm(&schema, Dialect::Anthropic),
        json!({
            "type": "object",
            "properties": {
                "target": {
                    "description": "where",
                    "anyOf": [
                        {"allOf": [{"type": "string"}, {"minLength": 1}]},
                        {"type": "null"}
                    ]
                }
            }
        })
    );
}

#[test]
fn arrays_get_items_unless_omitted() {
    let schema = json!({
        "type": "object",
        "properties": {
            "any": {"type": "array"},
            "maybe": {"type": ["array", "null"]},
            "typed": {"type": "array", "items": {"type": "integer"}},
            "explicit": {"type": "array", "items": {}}
        }
    });
    assert_eq!(
        norm(&schema, Dialect::OpenAi),
        json!({
            "type": "object",
            "properties": {
                "any": {"type": "array", "items": {}},
                "maybe": {"type": ["array", "null"], "items": {}},
                "typed": {"type": "array", "items": {"type": "integer"}},
                "explicit": {"type": "array", "items": {}}
            }
        })
    );
    let opts = NormalizeOptions {
        omit_empty_array_items: true,
        ..Default::default()
    };
    assert_eq!(
        normalize_schema(&schema, Dialect::OpenAi, &opts).schema,
        json!({
            "type": "object",
            "properties": {
                "any": {"type": "array"},
                "maybe": {"type": ["array", "null"]},
                "typed": {"type": "array", "items": {"type": "integer"}},
                "explicit": {"type": "array"}
            }
        })
    );
}

#[test]
fn xai_strips_contains_bounds_recursively() {
    let schema = json!({
        "type": "object",
        "properties": {
            "list": {
                "type": "array",
                "contains": {"type": "string"},
                "minContains": 1,
                "maxContains": 3,
                "items": {"anyOf": [{"type": "array", "minContains": 2, "items": {}}]}
            },
            "minContains": {"type": "integer"}
        },
        "allOf": [{"maxContains": 1}]
    });
    assert_eq!(
        norm(&schema, Dialect::Xai),
        json!({
            "type": "object",
            "properties": {
                "list": {
                    "type": "array",
                    "contains": {"type": "string"},
                    "items": {"anyOf": [{"type": "array", "items": {}}]}
                },
                "minContains": {"type": "integer"}
            },
            "allOf": [{}]
        })
    );
}

#[test]
fn anthropic_keeps_full_draft_2020_12() {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "pattern": "^/", "format": "uri-reference"},
            "n": {"type": "integer", "minimum": 0, "maximum": 10, "multipleOf": 2},
            "kind": {"const": "file"},
            "any": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "list": {"type": "array", "items": {"type": "string"}, "minItems": 1, "uniqueItems": true, "minContains": 1}
        },
        "patternProperties": {"^x-": {"type": "string"}},
        "additionalProperties": false,
        "not": {"required": ["forbidden"]}
    });
    assert_eq!(norm(&schema, Dialect::Anthropic), schema);
    assert_eq!(norm(&schema, Dialect::OpenAi), schema);
    assert_eq!(norm(&schema, Dialect::Permissive), schema);
}

#[test]
fn unsupported_keywords_are_stripped_after_the_dialect() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "string", "title": "A", "description": "first"},
            "b": {"anyOf": [{"type": "string", "description": "inner"}, {"type": "integer"}]}
        }
    });
    let opts = NormalizeOptions {
        unsupported_keywords: vec!["description".to_owned(), "title".to_owned()],
        ..Default::default()
    };
    assert_eq!(
        normalize_schema(&schema, Dialect::Anthropic, &opts).schema,
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "string"},
                "b": {"anyOf": [{"type": "string"}, {"type": "integer"}]}
            }
        })
    );
    // Gemini keeps descriptions, so the extra list still applies on top.
    assert_eq!(
        normalize_schema(&schema, Dialect::Gemini, &opts).schema,
        json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}}
        })
    );
}
