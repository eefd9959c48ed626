//! The Gemini dialect: Google's function-calling schema is a restricted
//! OpenAPI 3.0 subset, so unsupported keywords are stripped, literals
//! become string enums and unions are flattened away.

use std::collections::HashSet;

use serde_json::Map;
use serde_json::Value;

use crate::walk::MAX_DEPTH;
use crate::walk::copy_meta;
use crate::walk::empty_schema;
use crate::walk::for_each_child_mut;

/// Keywords Gemini rejects; removed from every subschema.
pub(crate) const GEMINI_STRIPPED_KEYWORDS: &[&str] = &[
    "patternProperties",
    "additionalProperties",
    "$schema",
    "$id",
    "$ref",
    "$defs",
    "definitions",
    "examples",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "multipleOf",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "not",
];

/// Rewrites `schema` (and everything below it) into Gemini's subset.
pub(crate) fn clean_for_gemini(schema: &mut Value, depth: usize) {
    if depth >= MAX_DEPTH {
        return;
    }
    let Value::Object(map) = schema else {
        // Gemini has no boolean schemas; anything else is not a schema.
        *schema = empty_schema();
        return;
    };
    map.retain(|key, _| !GEMINI_STRIPPED_KEYWORDS.contains(&key.as_str()));
    if map.get("properties").is_some_and(|p| !p.is_object()) {
        map.insert("properties".to_owned(), Value::Object(Map::new()));
    }

    // Null variants are recognised before cleaning, which would turn
    // `{"enum": [null]}` into `{}`.
    for key in ["anyOf", "oneOf"] {
        match map.get_mut(key) {
            Some(Value::Array(variants)) => variants.retain(|v| !is_null_schema(v)),
            Some(_) => {
                map.shift_remove(key);
            }
            None => {}
        }
    }

    for_each_child_mut(map, |child| clean_for_gemini(child, depth + 1));

    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(variants)) = map.shift_remove(key)
            && let Some(simplified) = simplify_union(map, variants)
        {
            *schema = simplified;
            return;
        }
    }

    clean_literals(map);
    clean_type(map);
    clean_required(map);
}

/// Replaces a union (already stripped of null variants, each variant
/// already cleaned) with a single schema. `None` means the union was empty
/// and simply disappears.
fn simplify_union(node: &Map<String, Value>, variants: Vec<Value>) -> Option<Value> {
    if variants.is_empty() {
        return None;
    }
    let mut out = Map::new();
    if let Some(literals) = literal_union(&variants) {
        out.extend(literals);
    } else if let [lone] = variants.as_slice() {
        if let Value::Object(lone) = lone {
            out.extend(lone.clone());
        }
    } else if let Some(representative) = representative_type(&variants) {
        out.insert("type".to_owned(), representative);
    }
    copy_meta(node, &mut out);
    Some(Value::Object(out))
}

/// `{type, enum}` when every variant is a literal (after cleaning, a
/// non-empty `enum`). The type is the variants' shared scalar type, or
/// `string` since Gemini enum values are strings anyway.
fn literal_union(variants: &[Value]) -> Option<Map<String, Value>> {
    let mut values: Vec<Value> = Vec::new();
    let mut seen = HashSet::new();
    let mut declared: Option<Option<&str>> = None;
    for variant in variants {
        let map = variant.as_object()?;
        let literal = map
            .get("enum")
            .and_then(Value::as_array)
            .filter(|e| !e.is_empty())?;
        for value in literal {
            if seen.insert(crate::walk::dedup_key(value)) {
                values.push(value.clone());
            }
        }
        let this = map.get("type").and_then(Value::as_str);
        declared = match declared {
            None => Some(this),
            Some(seen) if seen == this => Some(seen),
            Some(_) => Some(None),
        };
    }
    let json_type = declared.flatten().unwrap_or("string");
    let mut out = Map::new();
    out.insert("type".to_owned(), Value::from(json_type));
    out.insert("enum".to_owned(), Value::Array(values));
    Some(out)
}

/// The type kept when a union cannot be expressed: the shared type of the
/// variants, otherwise the first variant's type.
fn representative_type(variants: &[Value]) -> Option<Value> {
    let types: Vec<&Value> = variants
        .iter()
        .filter_map(|v| v.as_object().and_then(|m| m.get("type")))
        .collect();
    let first = types.first()?;
    if types.iter().all(|t| t == first) {
        return Some((*first).clone());
    }
    variants
        .first()
        .and_then(Value::as_object)
        .and_then(|m| m.get("type"))
        .cloned()
}

fn is_null_schema(schema: &Value) -> bool {
    let Value::Object(map) = schema else {
        return false;
    };
    if map.get("const") == Some(&Value::Null) {
        return true;
    }
    if let Some(Value::Array(values)) = map.get("enum")
        && values.len() == 1
    {
        return values[0].is_null();
    }
    match map.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(types)) => types.len() == 1 && types[0].as_str() == Some("null"),
        _ => false,
    }
}

/// `const` becomes a one-value `enum`; enum values become strings
/// (numbers and booleans stringified, anything else dropped) without
/// duplicates; an enum left empty is removed.
fn clean_literals(map: &mut Map<String, Value>) {
    if let Some(value) = map.shift_remove("const") {
        map.insert("enum".to_owned(), Value::Array(vec![value]));
    }
    let Some(slot) = map.get_mut("enum") else {
        return;
    };
    let mut values: Vec<Value> = Vec::new();
    if let Value::Array(source) = slot {
        let mut seen = HashSet::new();
        for value in source.drain(..) {
            let text = match value {
                Value::String(s) => s,
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                Value::Null | Value::Array(_) | Value::Object(_) => continue,
            };
            if seen.insert(text.clone()) {
                values.push(Value::String(text));
            }
        }
    }
    if values.is_empty() {
        map.shift_remove("enum");
    } else {
        *slot = Value::Array(values);
    }
}

/// Type arrays lose `"null"` and collapse to a scalar when one type is
/// left.
fn clean_type(map: &mut Map<String, Value>) {
    let Some(Value::Array(types)) = map.get("type") else {
        return;
    };
    let mut kept: Vec<Value> = Vec::new();
    let mut seen = HashSet::new();
    for t in types {
        if let Some(name) = t.as_str().filter(|s| *s != "null")
            && seen.insert(name)
        {
            kept.push(t.clone());
        }
    }
    match kept.len() {
        0 => {
            map.shift_remove("type");
        }
        1 => {
            map.insert("type".to_owned(), kept.remove(0));
        }
        _ => {
            map.insert("type".to_owned(), Value::Array(kept));
        }
    }
}

/// `required` keeps only names of existing properties, once each, and is
/// removed when that leaves nothing.
fn clean_required(map: &mut Map<String, Value>) {
    let Some(required) = map.get("required") else {
        return;
    };
    let mut kept: Vec<Value> = Vec::new();
    if let (Value::Array(names), Some(Value::Object(properties))) =
        (required, map.get("properties"))
    {
        let mut seen = HashSet::new();
        for name in names {
            if let Some(n) = name.as_str().filter(|n| properties.contains_key(*n))
                && seen.insert(n)
            {
                kept.push(name.clone());
            }
        }
    }
    if kept.is_empty() {
        map.shift_remove("required");
    } else {
        map.insert("required".to_owned(), Value::Array(kept));
    }
}

#[cfg(test)]
#[path = "gemini_tests.rs"]
mod tests;
