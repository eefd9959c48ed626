//! Schema-position traversal shared by every pass.
//!
//! JSON Schema mixes two kinds of keys: keywords whose value is itself a
//! schema (`items`, `anyOf`, `properties.<name>`, …) and keywords whose
//! value is plain data (`enum`, `default`, `required`, …). Every pass in
//! this crate must only rewrite the first kind, otherwise a property that
//! happens to be called `format` or a default value shaped like a schema
//! would be mangled. This module is the one place that knows the split.

use serde_json::Map;
use serde_json::Value;

/// Deepest schema nesting kept. Subschemas at this depth or deeper are
/// replaced with `{}`.
pub(crate) const MAX_DEPTH: usize = 64;

/// Keywords whose value is a single subschema.
pub(crate) const SINGLE_KEYS: &[&str] = &[
    "items",
    "additionalItems",
    "contains",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
];

/// Keywords whose value is an array of subschemas (`items` in its
/// pre-2020 tuple form is handled here too).
pub(crate) const ARRAY_KEYS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems", "items"];

/// Keywords whose value is a map from names to subschemas.
pub(crate) const MAP_KEYS: &[&str] = &[
    "properties",
    "patternProperties",
    "dependentSchemas",
    "$defs",
    "definitions",
];

/// Calls `f` on every direct subschema of `schema`, in key order.
///
/// Values in schema positions that are neither objects nor booleans are
/// still passed to `f`; callers decide what to do with them.
pub(crate) fn for_each_child_mut(schema: &mut Map<String, Value>, mut f: impl FnMut(&mut Value)) {
    for (key, value) in schema.iter_mut() {
        let key = key.as_str();
        if SINGLE_KEYS.contains(&key) && !value.is_array() {
            f(value);
        } else if ARRAY_KEYS.contains(&key) {
            if let Value::Array(items) = value {
                items.iter_mut().for_each(&mut f);
            }
        } else if MAP_KEYS.contains(&key)
            && let Value::Object(map) = value
        {
            map.values_mut().for_each(&mut f);
        }
    }
}

/// Read-only twin of [`for_each_child_mut`].
pub(crate) fn for_each_child(schema: &Map<String, Value>, f: impl FnMut(&Value)) {
    for_each_child_except(schema, &[], f);
}

/// [`for_each_child`], skipping the keywords in `skip`.
pub(crate) fn for_each_child_except(
    schema: &Map<String, Value>,
    skip: &[&str],
    mut f: impl FnMut(&Value),
) {
    for (key, value) in schema {
        let key = key.as_str();
        if skip.contains(&key) {
            continue;
        }
        if SINGLE_KEYS.contains(&key) && !value.is_array() {
            f(value);
        } else if ARRAY_KEYS.contains(&key) {
            if let Value::Array(items) = value {
                items.iter().for_each(&mut f);
            }
        } else if MAP_KEYS.contains(&key)
            && let Value::Object(map) = value
        {
            map.values().for_each(&mut f);
        }
    }
}

/// Replaces every subschema at `MAX_DEPTH` or deeper with `{}`.
pub(crate) fn truncate(schema: &mut Value, depth: usize) {
    if depth >= MAX_DEPTH {
        *schema = Value::Object(Map::new());
        return;
    }
    if let Value::Object(map) = schema {
        for_each_child_mut(map, |child| truncate(child, depth + 1));
    }
}

/// Removes `keywords` from `schema` and from every subschema below it.
///
/// Keys are only removed where they are schema keywords: a property called
/// `format` survives stripping `format`.
pub(crate) fn strip_keywords(schema: &mut Value, keywords: &[&str], depth: usize) {
    if depth >= MAX_DEPTH || keywords.is_empty() {
        return;
    }
    if let Value::Object(map) = schema {
        map.retain(|key, _| !keywords.contains(&key.as_str()));
        for_each_child_mut(map, |child| strip_keywords(child, keywords, depth + 1));
    }
}

/// The keys that carry human-facing annotations and are copied when one
/// schema stands in for another.
pub(crate) const META_KEYS: &[&str] = &["title", "description", "default"];

/// Copies `title`, `description` and `default` from `from` onto `to`,
/// overwriting what `to` had.
pub(crate) fn copy_meta(from: &Map<String, Value>, to: &mut Map<String, Value>) {
    for key in META_KEYS {
        if let Some(value) = from.get(*key) {
            to.insert((*key).to_owned(), value.clone());
        }
    }
}

/// Whether the `type` keyword of `schema` is, or lists, `wanted`.
pub(crate) fn type_includes(schema: &Map<String, Value>, wanted: &str) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == wanted,
        Some(Value::Array(types)) => types.iter().any(|t| t.as_str() == Some(wanted)),
        _ => false,
    }
}

/// A hashable stand-in for a JSON value, for de-duplicating large enums
/// without quadratic comparisons. Compact JSON text distinguishes `1`
/// from `"1"` and, with `preserve_order`, is deterministic per value.
pub(crate) fn dedup_key(value: &Value) -> String {
    value.to_string()
}

/// `{}`, the schema that accepts anything.
pub(crate) fn empty_schema() -> Value {
    Value::Object(Map::new())
}

#[cfg(test)]
#[path = "walk_tests.rs"]
mod tests;
