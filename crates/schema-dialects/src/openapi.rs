//! OpenAPI-flavoured keywords turned into plain JSON Schema.
//!
//! Many MCP servers and OpenAPI-derived tools send `nullable: true` and
//! annotation keywords (`example`, `xml`, …) that strict validators
//! reject. `nullable: true` is rewritten into the JSON Schema way of
//! allowing `null`; the annotation keywords are dropped.

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use crate::walk::MAX_DEPTH;
use crate::walk::META_KEYS;
use crate::walk::for_each_child_mut;

/// OpenAPI-only keywords that are removed everywhere.
const OPENAPI_KEYWORDS: &[&str] = &[
    "nullable",
    "discriminator",
    "externalDocs",
    "readOnly",
    "writeOnly",
    "xml",
    "example",
];

/// Rewrites OpenAPI keywords in `schema` and every subschema below it.
pub(crate) fn clean_openapi(schema: &mut Value, depth: usize) {
    if depth >= MAX_DEPTH {
        return;
    }
    let Value::Object(map) = schema else {
        return;
    };
    for_each_child_mut(map, |child| clean_openapi(child, depth + 1));
    let nullable = map.get("nullable") == Some(&Value::Bool(true));
    map.retain(|key, _| !OPENAPI_KEYWORDS.contains(&key.as_str()));
    if !nullable {
        return;
    }
    if ["anyOf", "oneOf", "allOf"]
        .iter()
        .any(|k| map.get(*k).is_some_and(Value::is_array))
    {
        if !union_allows_null(map) {
            *schema = wrap_nullable(std::mem::take(map));
        }
        return;
    }
    match map.get_mut("type") {
        Some(Value::String(t)) if t != "null" => {
            let t = std::mem::take(t);
            map.insert("type".to_owned(), json!([t, "null"]));
        }
        Some(Value::Array(types)) if !types.iter().any(|t| t.as_str() == Some("null")) => {
            types.push(Value::from("null"));
        }
        _ => {}
    }
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
}

/// Whether an `anyOf`/`oneOf` already has a variant that accepts `null`.
fn union_allows_null(map: &Map<String, Value>) -> bool {
    ["anyOf", "oneOf"].iter().any(|key| {
        map.get(*key)
            .and_then(Value::as_array)
            .is_some_and(|variants| variants.iter().any(is_null_like))
    })
}

fn is_null_like(schema: &Value) -> bool {
    let Value::Object(map) = schema else {
        return false;
    };
    let type_null = match map.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(types)) => types.iter().any(|t| t.as_str() == Some("null")),
        _ => false,
    };
    type_null
        || map.get("const") == Some(&Value::Null)
        || map
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| e.contains(&Value::Null))
}

/// `anyOf: [schema, {type: "null"}]`, with the annotations moved onto the
/// wrapper so they are not sent twice.
fn wrap_nullable(mut inner: Map<String, Value>) -> Value {
    let mut outer = Map::new();
    for key in META_KEYS {
        if let Some(value) = inner.shift_remove(*key) {
            outer.insert((*key).to_owned(), value);
        }
    }
    outer.insert(
        "anyOf".to_owned(),
        json!([Value::Object(inner), {"type": "null"}]),
    );
    Value::Object(outer)
}

/// Gives array schemas without `items` an explicit `items: {}`.
pub(crate) fn add_missing_items(schema: &mut Value, depth: usize) {
    if depth >= MAX_DEPTH {
        return;
    }
    let Value::Object(map) = schema else {
        return;
    };
    if crate::walk::type_includes(map, "array") && !map.contains_key("items") {
        map.insert("items".to_owned(), Value::Object(Map::new()));
    }
    for_each_child_mut(map, |child| add_missing_items(child, depth + 1));
}

/// Removes `items: {}` from array schemas (compat `omitEmptyArrayItems`).
pub(crate) fn omit_empty_items(schema: &mut Value, depth: usize) {
    if depth >= MAX_DEPTH {
        return;
    }
    let Value::Object(map) = schema else {
        return;
    };
    let empty_items = map
        .get("items")
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty);
    if empty_items && crate::walk::type_includes(map, "array") {
        map.shift_remove("items");
    }
    for_each_child_mut(map, |child| omit_empty_items(child, depth + 1));
}

#[cfg(test)]
#[path = "openapi_tests.rs"]
mod tests;
