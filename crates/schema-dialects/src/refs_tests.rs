use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn inline(schema: &Value) -> Value {
    let mut out = inline_refs(schema);
    drop_unused_definitions(&mut out);
    out
}

#[test]
fn resolves_nested_defs_scope_before_root_pointer() {
    let schema = json!({
        "$defs": {"A": {"type": "string"}},
        "properties": {
            "x": {
                "$defs": {"A": {"type": "integer"}},
                "properties": {"y": {"$ref": "#/$defs/A"}}
            },
            "z": {"$ref": "#/$defs/A"}
        }
    });
    assert_eq!(
        inline(&schema),
        json!({
            "properties": {
                "x": {"properties": {"y": {"type": "integer"}}},
                "z": {"type": "string"}
            }
        })
    );
}

#[test]
fn pointer_segments_are_unescaped_and_array_indices_followed() {
    let schema = json!({
        "properties": {
            "a/b": {"type": "string"},
            "t~n": {"anyOf": [{"type": "null"}, {"type": "boolean"}]},
            "one": {"$ref": "#/properties/a~1b"},
            "two": {"$ref": "#/properties/t~0n/anyOf/1"},
            "bad": {"$ref": "#/properties/t~0n/anyOf/01"}
        }
    });
    let out = inline(&schema);
    assert_eq!(out["properties"]["one"], json!({"type": "string"}));
    assert_eq!(out["properties"]["two"], json!({"type": "boolean"}));
    assert_eq!(
        out["properties"]["bad"],
        json!({"$ref": "#/properties/t~0n/anyOf/01"})
    );
}

#[test]
fn follow_rejects_non_canonical_indices() {
    let doc = json!([10, 11]);
    assert_eq!(follow(&doc, &["1".to_owned()]), Some(&json!(11)));
    assert_eq!(follow(&doc, &["01".to_owned()]), None);
    assert_eq!(follow(&doc, &["-1".to_owned()]), None);
    assert_eq!(follow(&doc, &["2".to_owned()]), None);
}

#[test]
fn exponential_definitions_stay_within_budget() {
    // Each level references the next twice: 2^40 nodes if fully expanded.
    let mut defs = serde_json::Map::new();
    for i in 0..40 {
        let next = format!("#/$defs/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            json!({"type": "object", "properties": {"l": {"$ref": next}, "r": {"$ref": next}}}),
        );
    }
    defs.insert("d40".to_owned(), json!({"type": "string"}));
    let schema = json!({"$defs": defs, "properties": {"root": {"$ref": "#/$defs/d0"}}});
    let out = inline(&schema);
    let text = out.to_string();
    assert!(text.len() < 5_000_000, "output is {} bytes", text.len());
    assert!(!text.contains("$ref"));
}

#[test]
fn long_ref_chains_count_as_depth() {
    let mut defs = serde_json::Map::new();
    for i in 0..5_000 {
        defs.insert(
            format!("d{i}"),
            json!({"$ref": format!("#/$defs/d{}", i + 1)}),
        );
    }
    defs.insert("d5000".to_owned(), json!({"type": "string"}));
    let schema = json!({"$defs": defs, "properties": {"p": {"$ref": "#/$defs/d0"}}});
    assert_eq!(inline(&schema), json!({"properties": {"p": {}}}));
}
