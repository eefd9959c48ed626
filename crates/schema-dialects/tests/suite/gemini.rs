use pretty_assertions::assert_eq;
use serde_json::json;
use talon_schema_dialects::Dialect;

use super::util::norm;
use super::util::schema_keywords;

#[test]
fn unsupported_keywords_are_stripped_recursively() {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:tool",
        "type": "object",
        "additionalProperties": false,
        "patternProperties": {"^x": {"type": "string"}},
        "minProperties": 1,
        "maxProperties": 9,
        "not": {"required": ["x"]},
        "properties": {
            "pattern": {"type": "string", "pattern": "^a", "minLength": 1, "maxLength": 9, "format": "email", "examples": ["a"]},
            "n": {"type": "number", "minimum": 0, "maximum": 1, "multipleOf": 0.5},
            "list": {
                "type": "array",
                "minItems": 1,
                "maxItems": 3,
                "uniqueItems": true,
                "items": {"type": "object", "additionalProperties": {"type": "string", "format": "x"}, "properties": {"k": {"type": "string", "format": "uuid"}}}
            },
            "all": {"allOf": [{"type": "string", "maxLength": 4}]}
        }
    });
    assert_eq!(
        norm(&schema, Dialect::Gemini),
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string"},
                "n": {"type": "number"},
                "list": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}},
                "all": {"allOf": [{"type": "string"}]}
            }
        })
    );
}

#[test]
fn const_and_enum_values_become_unique_strings() {
    let schema = json!({
        "type": "object",
        "properties": {
            "mode": {"type": "string", "const": "fast"},
            "level": {"type": "integer", "enum": [1, 2, 2, "2", 3]},
            "flag": {"type": "boolean", "enum": [true, false]},
            "mixed": {"enum": ["a", null, {"x": 1}, [1], 1.5]},
            "junk": {"type": "string", "enum": [null, {}]},
            "obj": {"const": {"a": 1}}
        }
    });
    assert_eq!(
        norm(&schema, Dialect::Gemini),
        json!({
            "type": "object",
            "properties": {
                "mode": {"type": "string", "enum": ["fast"]},
                "level": {"type": "integer", "enum": ["1", "2", "3"]},
                "flag": {"type": "boolean", "enum": ["true", "false"]},
                "mixed": {"enum": ["a", "1.5"]},
                "junk": {"type": "string"},
                "obj": {}
            }
        })
    );
}

#[test]
fn required_is_filtered_and_empty_required_dropped() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "inner": {"type": "object", "properties": {}, "required": []},
            "loose": {"type": "object", "required": ["ghost"]}
        },
        "required": ["a", "ghost", "a", 7]
    });
    assert_eq!(
        norm(&schema, Dialect::Gemini),
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "string"},
                "inner": {"type": "object", "properties": {}},
                "loose": {"type": "object"}
            },
            "required": ["a"]
        })
    );
}

#[test]
fn type_arrays_lose_null() {
    let schema = json!({
        "type": "object",
        "properties": {
            "one": {"type": ["string", "null"]},
            "two": {"type": ["null", "string", "integer"]},
            "nullable": {"type": "integer", "nullable": true}
        }
    });
    assert_eq!(
        norm(&schema, Dialect::Gemini),
        json!({
            "type": "object",
            "properties": {
                "one": {"type": "string"},
                "two": {"type": ["string", "integer"]},
                "nullable": {"type": "integer"}
            }
        })
    );
}

#[test]
fn union_flattening() {
    let schema = json!({
        "type": "object",
        "properties": {
            "literal": {
                "description": "pick one",
                "anyOf": [
                    {"type": "string", "const": "a"},
                    {"type": "string", "enum": ["b"]},
                    {"type": "null"}
                ]
            },
            "numbers": {"oneOf": [{"type": "integer", "const": 1}, {"type": "integer", "const": 2}]},
            "optional": {
                "title": "Optional path",
                "anyOf": [{"type": "string", "minLength": 1, "description": "inner"}, {"type": "null"}]
            },
            "lone": {"type": "string", "anyOf": [{"type": "integer"}]},
            "mixed": {
                "description": "string or number",
                "anyOf": [{"type": "string"}, {"type": "number"}]
            },
            "same": {"anyOf": [{"type": "object", "properties": {"a": {}}}, {"type": "object"}]},
            "nested": {
                "type": "array",
                "items": {"anyOf": [{"const": "x"}, {"const": "y"}]}
            }
        }
    });
    assert_eq!(
        norm(&schema, Dialect::Gemini),
        json!({
            "type": "object",
            "properties": {
                "literal": {"type": "string", "enum": ["a", "b"], "description": "pick one"},
                "numbers": {"type": "integer", "enum": ["1", "2"]},
                "optional": {"type": "string", "description": "inner", "title": "Optional path"},
                "lone": {"type": "integer"},
                "mixed": {"type": "string", "description": "string or number"},
                "same": {"type": "object"},
                "nested": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}}
            }
        })
    );
}

#[test]
fn properties_null_becomes_empty_map() {
    assert_eq!(
        norm(
            &json!({"type": "object", "properties": {"o": {"type": "object", "properties": null}}}),
            Dialect::Gemini
        ),
        json!({"type": "object", "properties": {"o": {"type": "object", "properties": {}}}})
    );
}

#[test]
fn gemini_output_has_no_unions_or_stripped_keywords() {
    let schema = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "a": {"oneOf": [{"$ref": "#/$defs/X"}, {"type": "array", "items": {"$ref": "#/$defs/X"}}]}
        },
        "$defs": {"X": {"type": "string", "format": "uri", "not": {"const": ""}}}
    });
    let out = norm(&schema, Dialect::Gemini);
    let keywords = schema_keywords(&out);
    for banned in Dialect::Gemini
        .stripped_keywords()
        .iter()
        .chain(&["anyOf", "oneOf"])
    {
        assert!(!keywords.iter().any(|k| k == banned), "{banned} in {out}");
    }
    assert_eq!(
        out,
        json!({"type": "object", "properties": {"a": {"type": "string"}}})
    );
}
