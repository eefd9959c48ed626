//! OpenAI strict mode (`strict: true` on a function tool).

use std::collections::HashSet;

use serde_json::Map;
use serde_json::Value;

use crate::walk::MAX_DEPTH;
use crate::walk::for_each_child;
use crate::walk::for_each_child_mut;

/// Applies the strict-mode touches: `required: []` on every object schema
/// whose `properties` is empty, and `additionalProperties: false` on the
/// root when it has none.
pub(crate) fn apply_strict(schema: &mut Value) {
    add_empty_required(schema, 0);
    if let Value::Object(root) = schema
        && !root.contains_key("additionalProperties")
    {
        root.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
}

fn add_empty_required(schema: &mut Value, depth: usize) {
    if depth >= MAX_DEPTH {
        return;
    }
    let Value::Object(map) = schema else {
        return;
    };
    let empty_properties = map
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty);
    if empty_properties && !map.contains_key("required") {
        map.insert("required".to_owned(), Value::Array(Vec::new()));
    }
    for_each_child_mut(map, |child| add_empty_required(child, depth + 1));
}

/// Whether `schema` can be sent to OpenAI with `strict: true`.
///
/// Strict mode accepts a subset of JSON Schema. This checks the rules
/// Talon can verify locally: the root is `type: "object"`; no schema
/// anywhere uses `anyOf`, `oneOf` or `allOf` or a `type` array; every
/// object schema (one with `type: "object"` or `properties`) sets
/// `additionalProperties: false` and lists every property in `required`.
/// [`normalize_schema`](crate::normalize_schema) with
/// [`Dialect::OpenAiStrict`](crate::Dialect::OpenAiStrict) does not make
/// an arbitrary schema compatible; use this check to decide whether to
/// ask for strict mode at all.
pub fn openai_strict_compatible(schema: &Value) -> bool {
    let root_is_object = schema
        .as_object()
        .and_then(|root| root.get("type"))
        .and_then(Value::as_str)
        == Some("object");
    root_is_object && strict_node_ok(schema, 0)
}

fn strict_node_ok(schema: &Value, depth: usize) -> bool {
    if depth >= MAX_DEPTH {
        return false;
    }
    let Value::Object(map) = schema else {
        // Boolean schemas are only acceptable as `additionalProperties`,
        // which is checked by the parent.
        return false;
    };
    if ["anyOf", "oneOf", "allOf"]
        .iter()
        .any(|k| map.contains_key(*k))
    {
        return false;
    }
    if map.get("type").is_some_and(Value::is_array) {
        return false;
    }
    let is_object =
        map.get("type").and_then(Value::as_str) == Some("object") || map.contains_key("properties");
    if is_object {
        if map.get("additionalProperties") != Some(&Value::Bool(false)) {
            return false;
        }
        let required: HashSet<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let properties = match map.get("properties") {
            Some(Value::Object(properties)) => properties,
            Some(_) => return false,
            None => &Map::new(),
        };
        if !properties
            .keys()
            .all(|name| required.contains(&name.as_str()))
        {
            return false;
        }
    }
    let mut ok = true;
    for_each_child(map, |child| {
        // `additionalProperties: false` is the one boolean schema allowed.
        if ok && !child.is_boolean() {
            ok = strict_node_ok(child, depth + 1);
        }
    });
    ok
}

#[cfg(test)]
#[path = "openai_tests.rs"]
mod tests;
