//! Snapshots of every core tool's schema for every dialect: a change to a
//! catalog schema or to a dialect rule shows up as a reviewed diff.

use serde_json::{Map, Value, json};
use talon_schema_dialects::{Dialect, NormalizeOptions, normalize_schema};
use talon_tool_catalog::core_tool_specs;

fn all_for(dialect: Dialect) -> Value {
    let mut out = Map::new();
    for spec in core_tool_specs() {
        let n = normalize_schema(&spec.parameters, dialect, &NormalizeOptions::default());
        out.insert(
            spec.name.clone(),
            json!({ "emptyObjectArgs": n.empty_object_args, "schema": n.schema }),
        );
    }
    Value::Object(out)
}

#[test]
fn core_tool_schemas_per_dialect() {
    for dialect in Dialect::ALL {
        let value = all_for(dialect);
        insta::assert_json_snapshot!(format!("core_tools_{}", dialect.as_str()), value);
    }
}

#[test]
fn every_core_schema_is_a_top_level_object_for_every_dialect() {
    for dialect in Dialect::ALL {
        for spec in core_tool_specs() {
            let n = normalize_schema(&spec.parameters, dialect, &NormalizeOptions::default());
            assert_eq!(
                n.schema["type"],
                "object",
                "{} / {}",
                spec.name,
                dialect.as_str()
            );
            assert!(
                n.schema["properties"].is_object(),
                "{} / {}",
                spec.name,
                dialect.as_str()
            );
        }
    }
}

#[test]
fn gemini_output_of_core_schemas_has_no_stripped_keyword() {
    fn walk(v: &Value, path: &str, bad: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, child) in m {
                    // Property names are data, not keywords.
                    let is_props = path.ends_with("/properties");
                    if !is_props && Dialect::Gemini.stripped_keywords().contains(&k.as_str()) {
                        bad.push(format!("{path}/{k}"));
                    }
                    walk(child, &format!("{path}/{k}"), bad);
                }
            }
            Value::Array(a) => a
                .iter()
                .enumerate()
                .for_each(|(i, c)| walk(c, &format!("{path}/{i}"), bad)),
            _ => {}
        }
    }
    for spec in core_tool_specs() {
        let n = normalize_schema(
            &spec.parameters,
            Dialect::Gemini,
            &NormalizeOptions::default(),
        );
        let mut bad = Vec::new();
        walk(&n.schema, "", &mut bad);
        assert!(bad.is_empty(), "{}: {bad:?}", spec.name);
    }
}

#[test]
fn strict_openai_core_schemas_close_the_top_level() {
    for spec in core_tool_specs() {
        let n = normalize_schema(
            &spec.parameters,
            Dialect::OpenAiStrict,
            &NormalizeOptions::default(),
        );
        // Strict mode adds `additionalProperties: false` only where the
        // catalog left it unset (cron's job payload keeps its explicit value).
        let expected = spec
            .parameters
            .get("additionalProperties")
            .cloned()
            .unwrap_or(Value::Bool(false));
        assert_eq!(n.schema["additionalProperties"], expected, "{}", spec.name);
    }
}
