use serde_json::Value;
use talon_schema_dialects::Dialect;
use talon_schema_dialects::NormalizeOptions;
use talon_schema_dialects::normalize_schema;

/// Normalises with default options and returns only the schema.
pub(crate) fn norm(schema: &Value, dialect: Dialect) -> Value {
    normalize_schema(schema, dialect, &NormalizeOptions::default()).schema
}

/// Keywords that sit in schema positions anywhere under `schema`.
pub(crate) fn schema_keywords(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    collect(schema, &mut out);
    out
}

fn collect(schema: &Value, out: &mut Vec<String>) {
    let Value::Object(map) = schema else {
        return;
    };
    for (key, value) in map {
        out.push(key.clone());
        match key.as_str() {
            "items"
            | "additionalItems"
            | "contains"
            | "additionalProperties"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "propertyNames"
            | "not"
            | "if"
            | "then"
            | "else" => match value {
                Value::Array(items) => items.iter().for_each(|v| collect(v, out)),
                other => collect(other, out),
            },
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Value::Array(items) = value {
                    items.iter().for_each(|v| collect(v, out));
                }
            }
            "properties" | "patternProperties" | "dependentSchemas" | "$defs" | "definitions" => {
                if let Value::Object(entries) = value {
                    entries.values().for_each(|v| collect(v, out));
                }
            }
            _ => {}
        }
    }
}
