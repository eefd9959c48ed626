//! Forcing the root of a tool schema into a single object schema.
//!
//! Every provider wants the parameters of a tool to be an object. Roots
//! that are unions are flattened into one object whose properties are the
//! union of the variants' properties; roots that are not objects at all
//! are replaced by an empty object schema.

use std::collections::HashMap;
use std::collections::HashSet;

use serde_json::Map;
use serde_json::Value;

use crate::walk::MAX_DEPTH;
use crate::walk::dedup_key;

/// Keywords that only constrain non-object instances. At the root they
/// contradict `type: "object"`, so they are dropped.
const NON_OBJECT_KEYWORDS: &[&str] = &[
    "items",
    "prefixItems",
    "additionalItems",
    "contains",
    "minContains",
    "maxContains",
    "minItems",
    "maxItems",
    "uniqueItems",
    "unevaluatedItems",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "enum",
    "const",
];

/// Rewrites `schema` so its root is `type: "object"` with a `properties`
/// map, flattening a root `anyOf`/`oneOf`.
pub(crate) fn fix_top_level(schema: Value) -> Value {
    let Value::Object(mut root) = schema else {
        return empty_object();
    };
    let union_key = ["anyOf", "oneOf"]
        .into_iter()
        .find(|key| root.get(*key).is_some_and(Value::is_array));
    if let Some(key) = union_key {
        root = flatten_union(root, key);
    }
    root.retain(|key, _| !NON_OBJECT_KEYWORDS.contains(&key.as_str()));
    ensure_object(&mut root);
    match root.get_mut("required") {
        Some(Value::Array(required)) => required.retain(Value::is_string),
        Some(_) => {
            root.shift_remove("required");
        }
        None => {}
    }
    Value::Object(root)
}

/// Sets `type: "object"` and a `properties` map on `root` if either is
/// missing or wrong. Runs last too, in case keyword stripping removed them.
pub(crate) fn ensure_object(root: &mut Map<String, Value>) {
    if root.get("type").and_then(Value::as_str) != Some("object") {
        root.insert("type".to_owned(), Value::from("object"));
    }
    if !root.get("properties").is_some_and(Value::is_object) {
        root.insert("properties".to_owned(), Value::Object(Map::new()));
    }
}

/// `{"type": "object", "properties": {}}`.
pub(crate) fn empty_object() -> Value {
    let mut root = Map::new();
    ensure_object(&mut root);
    Value::Object(root)
}

/// Collects the object-shaped variants of a union, looking through nested
/// `anyOf`/`oneOf` variants that carry no properties of their own (such as
/// the wrapper `nullable: true` produces).
fn collect_object_variants<'v>(
    variants: &'v [Value],
    depth: usize,
    out: &mut Vec<&'v Map<String, Value>>,
) {
    if depth >= MAX_DEPTH {
        return;
    }
    for variant in variants {
        let Value::Object(map) = variant else {
            continue;
        };
        if map.get("properties").is_some_and(Value::is_object) {
            out.push(map);
            continue;
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(nested)) = map.get(key) {
                collect_object_variants(nested, depth + 1, out);
            }
        }
    }
}

fn flatten_union(mut root: Map<String, Value>, key: &str) -> Map<String, Value> {
    let variants = match root.shift_remove(key) {
        Some(Value::Array(variants)) => variants,
        _ => Vec::new(),
    };
    // A root with both keys: the other union is flattened too.
    let other = if key == "anyOf" { "oneOf" } else { "anyOf" };
    let mut all = variants;
    if let Some(Value::Array(more)) = root.shift_remove(other) {
        all.extend(more);
    }
    let mut objects = Vec::new();
    collect_object_variants(&all, 0, &mut objects);

    let mut properties = match root.shift_remove("properties") {
        Some(Value::Object(base)) => base,
        _ => Map::new(),
    };
    // Names in first-seen order, with how many variants require each.
    let mut required_order: Vec<String> = Vec::new();
    let mut required_counts: HashMap<String, usize> = HashMap::new();
    for variant in &objects {
        if let Some(Value::Object(props)) = variant.get("properties") {
            for (name, schema) in props {
                match properties.get_mut(name) {
                    Some(existing) => merge_property(existing, schema),
                    None => {
                        properties.insert(name.clone(), schema.clone());
                    }
                }
            }
        }
        let mut seen: HashSet<&str> = HashSet::new();
        for name in variant
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(name) = name.as_str() else {
                continue;
            };
            if !seen.insert(name) {
                continue;
            }
            let count = required_counts.entry(name.to_owned()).or_insert(0);
            if *count == 0 {
                required_order.push(name.to_owned());
            }
            *count += 1;
        }
    }

    let base_required: Vec<Value> = root
        .shift_remove("required")
        .and_then(|r| match r {
            Value::Array(items) => Some(items),
            _ => None,
        })
        .unwrap_or_default()
        .into_iter()
        .filter(Value::is_string)
        .collect();
    let required: Vec<Value> = if !base_required.is_empty() {
        base_required
    } else {
        required_order
            .into_iter()
            .filter(|name| required_counts.get(name) == Some(&objects.len()))
            .map(Value::String)
            .collect()
    };

    root.shift_remove("type");
    let mut out = Map::new();
    out.insert("type".to_owned(), Value::from("object"));
    for meta in ["title", "description"] {
        if let Some(value) = root.shift_remove(meta) {
            out.insert(meta.to_owned(), value);
        }
    }
    out.insert("properties".to_owned(), Value::Object(properties));
    if !required.is_empty() {
        out.insert("required".to_owned(), Value::Array(required));
    }
    // Everything else the root carried (`additionalProperties`, `allOf`,
    // `$schema`, kept definitions, …) stays.
    out.extend(root);
    out
}

/// Merges a property schema met again in a later union variant. When both
/// sides are literal sets (`enum`, `const`, or a union of those), the
/// values are merged into one `enum`, typed when every value has the same
/// JSON type. Otherwise the first schema wins.
fn merge_property(existing: &mut Value, incoming: &Value) {
    let (Some(mut values), Some(more)) = (literal_values(existing, 0), literal_values(incoming, 0))
    else {
        return;
    };
    let mut seen: HashSet<String> = values.iter().map(dedup_key).collect();
    for value in more {
        if seen.insert(dedup_key(&value)) {
            values.push(value);
        }
    }
    let mut merged = Map::new();
    for source in [&*existing, incoming] {
        if let Value::Object(map) = source {
            for key in crate::walk::META_KEYS {
                if let (false, Some(v)) = (merged.contains_key(*key), map.get(*key)) {
                    merged.insert((*key).to_owned(), v.clone());
                }
            }
        }
    }
    if let Some(json_type) = common_json_type(&values) {
        merged.insert("type".to_owned(), Value::from(json_type));
    }
    merged.insert("enum".to_owned(), Value::Array(values));
    *existing = Value::Object(merged);
}

/// The literal values a schema allows, if it is a pure literal set.
fn literal_values(schema: &Value, depth: usize) -> Option<Vec<Value>> {
    if depth >= MAX_DEPTH {
        return None;
    }
    let Value::Object(map) = schema else {
        return None;
    };
    if let Some(Value::Array(values)) = map.get("enum") {
        return Some(values.clone());
    }
    if let Some(value) = map.get("const") {
        return Some(vec![value.clone()]);
    }
    let variants = ["anyOf", "oneOf"]
        .iter()
        .find_map(|k| map.get(*k).and_then(Value::as_array))?;
    let mut out = Vec::new();
    for variant in variants {
        out.extend(literal_values(variant, depth + 1)?);
    }
    (!out.is_empty()).then_some(out)
}

/// The one JSON type shared by `values`: `integer` when every value is an
/// integral number, `number` for numbers in general.
pub(crate) fn common_json_type(values: &[Value]) -> Option<&'static str> {
    let mut common: Option<&'static str> = None;
    for value in values {
        let this = match value {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        common = match common {
            None => Some(this),
            Some(seen) if seen == this => Some(seen),
            Some("integer" | "number") if matches!(this, "integer" | "number") => Some("number"),
            Some(_) => return None,
        };
    }
    common
}

#[cfg(test)]
#[path = "top_level_tests.rs"]
mod tests;
