use pretty_assertions::assert_eq;
use serde_json::json;
use talon_schema_dialects::Dialect;

use super::util::norm;

#[test]
fn defs_and_definitions_are_inlined_and_dropped() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/Name"},
            "b": {"$ref": "#/definitions/Count"}
        },
        "$defs": {"Name": {"type": "string"}},
        "definitions": {"Count": {"type": "integer"}}
    });
    assert_eq!(
        norm(&schema, Dialect::Anthropic),
        json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}
        })
    );
}

#[test]
fn general_pointers_with_escapes() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a/b": {"type": "string", "enum": ["x"]},
            "c": {"$ref": "#/properties/a~1b"},
            "d": {"$ref": "#/components/schemas/Thing~0s"}
        },
        "components": {"schemas": {"Thing~s": {"type": "boolean"}}}
    });
    assert_eq!(
        norm(&schema, Dialect::OpenAi),
        json!({
            "type": "object",
            "properties": {
                "a/b": {"type": "string", "enum": ["x"]},
                "c": {"type": "string", "enum": ["x"]},
                "d": {"type": "boolean"}
            }
        })
    );
}

#[test]
fn ref_site_annotations_and_nullable_are_copied() {
    let schema = json!({
        "type": "object",
        "properties": {
            "when": {
                "$ref": "#/$defs/Date",
                "description": "site description",
                "title": "When",
                "default": "today",
                "nullable": true,
                "minLength": 99
            }
        },
        "$defs": {"Date": {"type": "string", "description": "def description", "format": "date"}}
    });
    assert_eq!(
        norm(&schema, Dialect::Anthropic),
        json!({
            "type": "object",
            "properties": {
                "when": {
                    "type": ["string", "null"],
                    "description": "site description",
                    "format": "date",
                    "title": "When",
                    "default": "today"
                }
            }
        })
    );
}

#[test]
fn cycles_become_empty_schemas() {
    let schema = json!({
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "value": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
                }
            }
        }
    });
    assert_eq!(
        norm(&schema, Dialect::OpenAi),
        json!({
            "type": "object",
            "properties": {
                "tree": {
                    "type": "object",
                    "properties": {
                        "value": {"type": "string"},
                        "children": {"type": "array", "items": {}}
                    }
                }
            }
        })
    );
}

#[test]
fn mutual_cycles_and_self_root_refs_terminate() {
    let schema = json!({
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}, "me": {"$ref": "#"}},
        "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}
    });
    assert_eq!(
        norm(&schema, Dialect::OpenAi),
        json!({
            "type": "object",
            "properties": {
                "a": {},
                "me": {"type": "object", "properties": {"a": {}, "me": {}}}
            }
        })
    );
}

#[test]
fn external_refs_are_dropped_not_fetched() {
    let schema = json!({
        "type": "object",
        "properties": {
            "remote": {"$ref": "https://example.com/schemas/thing.json"},
            "file": {"$ref": "other.json#/defs/x", "description": "kept"},
            "anchor": {"$ref": "#thing"}
        }
    });
    assert_eq!(
        norm(&schema, Dialect::Anthropic),
        json!({
            "type": "object",
            "properties": {"remote": {}, "file": {"description": "kept"}, "anchor": {}}
        })
    );
}

#[test]
fn unresolved_local_refs_keep_the_definitions() {
    let schema = json!({
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/Missing"}, "b": {"$ref": "#/$defs/Here"}},
        "$defs": {"Here": {"type": "string"}}
    });
    assert_eq!(
        norm(&schema, Dialect::Anthropic),
        json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/Missing"}, "b": {"type": "string"}},
            "$defs": {"Here": {"type": "string"}}
        })
    );
    // Gemini cannot take references at all.
    assert_eq!(
        norm(&schema, Dialect::Gemini),
        json!({"type": "object", "properties": {"a": {}, "b": {"type": "string"}}})
    );
}

#[test]
fn root_ref_is_inlined() {
    let schema = json!({
        "$ref": "#/$defs/Args",
        "$defs": {"Args": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}
    });
    assert_eq!(
        norm(&schema, Dialect::OpenAi),
        json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]})
    );
}
