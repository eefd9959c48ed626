//! `config.schema.lookup`: the JSON Schema of one dotted config path.

use std::collections::HashSet;

use serde_json::{Map, Value};
use talon_tool_catalog::ToolError;

/// Nested `$ref`s inlined at most this deep in a returned schema.
const INLINE_DEPTH: usize = 6;
/// `$ref` hops followed for one node.
const MAX_REF_HOPS: usize = 32;

/// Split `agents.list[0].tools` into `agents`, `list`, `0`, `tools`.
pub(crate) fn split_path(path: &str) -> Result<Vec<String>, ToolError> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let mut rest = part;
        let head_end = rest.find('[').unwrap_or(rest.len());
        let head = &rest[..head_end];
        if head.is_empty() && head_end == rest.len() {
            return Err(ToolError::input(
                "path",
                format!(
                    "path {path:?} has an empty segment; write dotted keys like agents.defaults"
                ),
            ));
        }
        if !head.is_empty() {
            out.push(head.to_owned());
        }
        rest = &rest[head_end..];
        while let Some(inner) = rest.strip_prefix('[') {
            let Some(close) = inner.find(']') else {
                return Err(ToolError::input(
                    "path",
                    format!("path {path:?} has an unclosed `[`"),
                ));
            };
            out.push(inner[..close].trim_matches(['"', '\'']).to_owned());
            rest = &inner[close + 1..];
        }
        if !rest.is_empty() {
            return Err(ToolError::input(
                "path",
                format!("path {path:?}: unexpected {rest:?} after `]`"),
            ));
        }
    }
    Ok(out)
}

/// Follow `$ref` (local `#/...` pointers only).
fn deref<'a>(root: &'a Value, mut node: &'a Value) -> Result<&'a Value, ToolError> {
    for _ in 0..MAX_REF_HOPS {
        let Some(reference) = node.get("$ref").and_then(Value::as_str) else {
            return Ok(node);
        };
        let pointer = reference.strip_prefix('#').ok_or_else(|| {
            ToolError::execution(format!("schema reference {reference:?} is not local"))
        })?;
        node = root.pointer(pointer).ok_or_else(|| {
            ToolError::execution(format!("schema reference {reference:?} points nowhere"))
        })?;
    }
    Err(ToolError::execution("schema references loop"))
}

fn property_names(node: &Value) -> Vec<String> {
    node.get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// One step down from `node` by `seg`.
fn step<'a>(root: &'a Value, node: &'a Value, seg: &str, depth: usize) -> Option<&'a Value> {
    if depth > 8 {
        return None;
    }
    let node = deref(root, node).ok()?;
    if let Some(p) = node.get("properties").and_then(|p| p.get(seg)) {
        return Some(p);
    }
    if let Some(patterns) = node.get("patternProperties").and_then(Value::as_object) {
        for (pattern, sub) in patterns {
            if regex::Regex::new(pattern).is_ok_and(|re| re.is_match(seg)) {
                return Some(sub);
            }
        }
    }
    let index_like = seg == "*" || seg == "[]" || seg.bytes().all(|b| b.is_ascii_digit());
    if index_like {
        match node.get("items") {
            Some(items @ Value::Object(_)) => return Some(items),
            Some(Value::Array(tuple)) => {
                if let Some(item) = seg.parse::<usize>().ok().and_then(|i| tuple.get(i)) {
                    return Some(item);
                }
            }
            _ => {}
        }
        if let Some(item) = node
            .get("prefixItems")
            .and_then(Value::as_array)
            .and_then(|t| seg.parse::<usize>().ok().and_then(|i| t.get(i)))
        {
            return Some(item);
        }
    }
    if let Some(additional @ Value::Object(_)) = node.get("additionalProperties") {
        return Some(additional);
    }
    for combinator in ["allOf", "anyOf", "oneOf"] {
        for branch in node
            .get(combinator)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(found) = step(root, branch, seg, depth + 1) {
                return Some(found);
            }
        }
    }
    None
}

/// Every property name reachable at `node`, combinators included.
fn known_keys(root: &Value, node: &Value, depth: usize) -> Vec<String> {
    let Ok(node) = deref(root, node) else {
        return Vec::new();
    };
    let mut keys = property_names(node);
    if depth < 4 {
        for combinator in ["allOf", "anyOf", "oneOf"] {
            for branch in node
                .get(combinator)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                for k in known_keys(root, branch, depth + 1) {
                    if !keys.contains(&k) {
                        keys.push(k);
                    }
                }
            }
        }
    }
    keys
}

/// Inline `$ref`s up to [`INLINE_DEPTH`]; a reference already being
/// expanded on the way down is left as is (recursive types).
fn inline(root: &Value, node: &Value, depth: usize, seen: &mut HashSet<String>) -> Value {
    match node {
        Value::Object(map) => {
            if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                if depth >= INLINE_DEPTH || seen.contains(reference) {
                    return node.clone();
                }
                let Ok(target) = deref(root, node) else {
                    return node.clone();
                };
                seen.insert(reference.to_owned());
                let mut expanded = inline(root, target, depth + 1, seen);
                seen.remove(reference);
                // Sibling keywords next to `$ref` (description, default)
                // win over the target's.
                if let Value::Object(out) = &mut expanded {
                    for (k, v) in map {
                        if k != "$ref" {
                            out.insert(k.clone(), inline(root, v, depth + 1, seen));
                        }
                    }
                }
                return expanded;
            }
            let mut out = Map::with_capacity(map.len());
            for (k, v) in map {
                if depth == 0 && (k == "$defs" || k == "definitions") {
                    continue;
                }
                out.insert(k.clone(), inline(root, v, depth + 1, seen));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| inline(root, v, depth + 1, seen))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The schema of `path` in `root`, with references inlined, and the
/// property names one level down. The error names the first segment that
/// does not exist and the keys that do.
pub(crate) fn lookup_schema(root: &Value, path: &str) -> Result<(Value, Vec<String>), ToolError> {
    let segments = split_path(path)?;
    let mut node = root;
    let mut walked: Vec<&str> = Vec::new();
    for seg in &segments {
        match step(root, node, seg, 0) {
            Some(next) => node = next,
            None => {
                let at = if walked.is_empty() {
                    "the config root".to_owned()
                } else {
                    format!("`{}`", walked.join("."))
                };
                let mut keys = known_keys(root, node, 0);
                keys.truncate(40);
                let hint = if keys.is_empty() {
                    "it has no sub-keys".to_owned()
                } else {
                    format!("known keys: {}", keys.join(", "))
                };
                return Err(ToolError::input(
                    "path",
                    format!(
                        "config path `{path}` not found: `{seg}` is not a key of {at} ({hint})"
                    ),
                ));
            }
        }
        walked.push(seg);
    }
    let keys = known_keys(root, node, 0);
    let mut seen = HashSet::new();
    Ok((inline(root, node, 0, &mut seen), keys))
}
