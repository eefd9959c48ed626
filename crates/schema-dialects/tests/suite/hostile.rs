use pretty_assertions::assert_eq;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;
use talon_schema_dialects::Dialect;
use talon_schema_dialects::NormalizeOptions;
use talon_schema_dialects::normalize_schema;

use super::util::norm;

fn depth(schema: &Value) -> usize {
    match schema {
        Value::Object(map) => {
            1 + map
                .get("properties")
                .and_then(Value::as_object)
                .and_then(|p| p.get("p"))
                .map_or(0, depth)
        }
        _ => 0,
    }
}

fn nested(levels: usize) -> Value {
    // Built by hand: `json!` serialises interpolated values, which would
    // copy the whole tree at every level.
    let mut schema = json!({"type": "string"});
    for _ in 0..levels {
        let mut properties = Map::new();
        properties.insert("p".to_owned(), schema);
        let mut map = Map::new();
        map.insert("type".to_owned(), json!("object"));
        map.insert("properties".to_owned(), Value::Object(properties));
        schema = Value::Object(map);
    }
    schema
}

#[test]
fn deep_nesting_is_cut_at_64_levels() {
    // Built in a thread with a big stack: dropping a deep `Value` recurses.
    let handle = std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(|| {
            let schema = nested(5_000);
            let mut results = Vec::new();
            for dialect in Dialect::ALL {
                results.push(depth(&norm(&schema, dialect)));
            }
            results
        })
        .unwrap();
    // The root (depth 0) down to depth 63 keep their shape; the schema
    // at depth 64 is `{}`: 65 objects in all.
    for depth in handle.join().unwrap() {
        assert_eq!(depth, 65);
    }
}

#[test]
fn shallow_schemas_are_not_cut() {
    let schema = nested(60);
    assert_eq!(norm(&schema, Dialect::OpenAi), schema);
}

#[test]
fn huge_enums_survive() {
    let values: Vec<Value> = (0..50_000).map(Value::from).collect();
    let schema =
        json!({"type": "object", "properties": {"n": {"type": "integer", "enum": values}}});
    let out = norm(&schema, Dialect::Gemini);
    assert_eq!(
        out["properties"]["n"]["enum"].as_array().map(Vec::len),
        Some(50_000)
    );
    assert_eq!(out["properties"]["n"]["enum"][49_999], json!("49999"));
}

#[test]
fn wrong_shapes_do_not_panic() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": 5, "items": "nope", "anyOf": {"not": "an array"}, "required": {"x": 1}},
            "b": {"properties": [1, 2], "enum": "x", "const": [1]},
            "c": {"$ref": 12, "allOf": [null, 3, "s"]},
            "d": [],
            "e": {"type": ["array", 3], "nullable": "yes"},
            "f": {"anyOf": [], "oneOf": [null]}
        },
        "required": [1, null, "a"],
        "$defs": "broken",
        "anyOf": "broken"
    });
    for dialect in Dialect::ALL {
        let out = normalize_schema(&schema, dialect, &NormalizeOptions::default());
        assert_eq!(out.schema["type"], json!("object"), "{dialect}");
        let again = normalize_schema(&out.schema, dialect, &NormalizeOptions::default());
        assert_eq!(again, out, "{dialect}");
    }
}

#[test]
fn exponential_refs_stay_small() {
    let mut defs = Map::new();
    for i in 0..32 {
        let next = format!("#/$defs/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            json!({"anyOf": [{"$ref": next}, {"type": "array", "items": {"$ref": next}}]}),
        );
    }
    defs.insert("d32".to_owned(), json!({"type": "string"}));
    let schema =
        json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs});
    for dialect in Dialect::ALL {
        let out = norm(&schema, dialect);
        let size = out.to_string().len();
        assert!(size < 10_000_000, "{dialect}: {size} bytes");
        assert!(!out.to_string().contains("$ref"), "{dialect}");
    }
}
