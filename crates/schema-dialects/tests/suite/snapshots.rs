//! A few whole-pipeline fixtures kept as insta snapshots, one per dialect.

use serde_json::json;
use talon_schema_dialects::Dialect;

use super::util::norm;

fn fixture() -> serde_json::Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "search",
        "description": "Search a corpus",
        "anyOf": [
            {
                "type": "object",
                "properties": {
                    "mode": {"const": "text"},
                    "query": {"type": "string", "minLength": 1},
                    "limit": {"$ref": "#/$defs/Limit"}
                },
                "required": ["mode", "query"]
            },
            {
                "type": "object",
                "properties": {
                    "mode": {"const": "regex"},
                    "query": {"type": "string", "format": "regex"},
                    "flags": {"type": "array", "nullable": true, "uniqueItems": true}
                },
                "required": ["mode", "query"]
            }
        ],
        "$defs": {
            "Limit": {"type": ["integer", "null"], "minimum": 1, "maximum": 100, "default": 10}
        }
    })
}

#[test]
fn search_fixture_per_dialect() {
    let schema = fixture();
    for dialect in Dialect::ALL {
        insta::assert_json_snapshot!(
            format!("search_{}", dialect.as_str()),
            norm(&schema, dialect)
        );
    }
}
