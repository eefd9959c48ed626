//! Inlining of local `$ref`s.
//!
//! Providers want self-contained schemas, so every local reference is
//! replaced by a copy of its target. The walk builds a new tree from the
//! borrowed input and is bounded three ways: by schema depth (ref hops
//! count as depth), by a budget on nodes copied out of definitions, and by
//! the stack of references being expanded (a reference met again while it
//! is being expanded is a cycle and becomes `{}`).

use serde_json::Map;
use serde_json::Value;

use crate::walk::ARRAY_KEYS;
use crate::walk::MAP_KEYS;
use crate::walk::MAX_DEPTH;
use crate::walk::SINGLE_KEYS;
use crate::walk::copy_meta;
use crate::walk::empty_schema;

/// Most schema nodes copied out of reference targets in one schema. Past
/// this, further references become `{}` so a hostile "billion laughs" set
/// of definitions cannot blow up memory.
const MAX_INLINED_NODES: usize = 20_000;

/// The keys that hold reusable definitions (at the root, usually).
const DEFINITION_CONTAINERS: &[&str] = &["$defs", "definitions", "components"];

/// Returns `schema` with every resolvable local `$ref` inlined.
///
/// External references (anything not starting with `#`, plus `#anchor`
/// forms) lose their `$ref` keyword; nothing is ever fetched. Definition
/// containers (`$defs`, `definitions`, `components`) are copied verbatim;
/// [`drop_unused_definitions`] removes them once nothing refers to them.
pub(crate) fn inline_refs(schema: &Value) -> Value {
    let mut inliner = Inliner {
        root: schema,
        inlined_nodes: 0,
    };
    let mut scopes = Vec::new();
    let mut stack = Vec::new();
    inliner.node(schema, 0, &mut scopes, &mut stack)
}

/// Drops the definition containers from `schema` unless some local
/// `$ref` outside them is still there.
///
/// Run at the end of the pipeline rather than straight after inlining: an
/// unresolved reference inside a root union variant that flattening
/// discards no longer needs its definitions.
pub(crate) fn drop_unused_definitions(schema: &mut Value) {
    if !has_local_ref(schema, 0) {
        drop_definition_containers(schema, 0);
    }
}

fn has_local_ref(schema: &Value, depth: usize) -> bool {
    if depth >= MAX_DEPTH {
        return false;
    }
    let Value::Object(map) = schema else {
        return false;
    };
    if map
        .get("$ref")
        .and_then(Value::as_str)
        .is_some_and(is_local)
    {
        return true;
    }
    let mut found = false;
    crate::walk::for_each_child_except(map, DEFINITION_CONTAINERS, |child| {
        found = found || has_local_ref(child, depth + 1);
    });
    found
}

/// One definitions scope: the `$defs` and `definitions` maps of a schema
/// on the path from the root to the node being inlined.
#[derive(Clone, Copy)]
struct Scope<'a> {
    defs: Option<&'a Map<String, Value>>,
    definitions: Option<&'a Map<String, Value>>,
}

struct Inliner<'a> {
    root: &'a Value,
    inlined_nodes: usize,
}

impl<'a> Inliner<'a> {
    fn node(
        &mut self,
        node: &'a Value,
        depth: usize,
        scopes: &mut Vec<Scope<'a>>,
        stack: &mut Vec<&'a str>,
    ) -> Value {
        if depth >= MAX_DEPTH {
            return empty_schema();
        }
        if !stack.is_empty() {
            self.inlined_nodes += 1;
        }
        let Value::Object(map) = node else {
            return node.clone();
        };
        let defs = map.get("$defs").and_then(Value::as_object);
        let definitions = map.get("definitions").and_then(Value::as_object);
        let pushed = defs.is_some() || definitions.is_some();
        if pushed {
            scopes.push(Scope { defs, definitions });
        }
        let out = match map.get("$ref") {
            Some(Value::String(reference)) => self.reference(map, reference, depth, scopes, stack),
            _ => self.plain(map, false, depth, scopes, stack),
        };
        if pushed {
            scopes.pop();
        }
        out
    }

    fn reference(
        &mut self,
        site: &'a Map<String, Value>,
        reference: &'a str,
        depth: usize,
        scopes: &mut Vec<Scope<'a>>,
        stack: &mut Vec<&'a str>,
    ) -> Value {
        if !is_local(reference) {
            // Never fetched: the keyword goes and the siblings stay.
            return self.plain(site, true, depth, scopes, stack);
        }
        if stack.contains(&reference) || self.inlined_nodes >= MAX_INLINED_NODES {
            return empty_schema();
        }
        let Some(target) = self.resolve(reference, scopes) else {
            return self.plain(site, false, depth, scopes, stack);
        };
        stack.push(reference);
        // A reference hop counts as depth so long `$ref` chains cannot
        // exhaust the stack.
        let inlined = self.node(target, depth + 1, scopes, stack);
        stack.pop();
        let Value::Object(mut inlined) = inlined else {
            return inlined;
        };
        copy_meta(site, &mut inlined);
        if site.get("nullable") == Some(&Value::Bool(true)) {
            inlined.insert("nullable".to_owned(), Value::Bool(true));
        }
        Value::Object(inlined)
    }

    fn plain(
        &mut self,
        map: &'a Map<String, Value>,
        skip_ref: bool,
        depth: usize,
        scopes: &mut Vec<Scope<'a>>,
        stack: &mut Vec<&'a str>,
    ) -> Value {
        let mut out = Map::new();
        for (key, value) in map {
            let k = key.as_str();
            if skip_ref && k == "$ref" {
                continue;
            }
            // Containers come first: `MAP_KEYS` lists `$defs` too.
            let next = if DEFINITION_CONTAINERS.contains(&k) {
                // Kept raw; removed at the end unless a reference stayed
                // unresolved (see `drop_unused_definitions`).
                value.clone()
            } else if SINGLE_KEYS.contains(&k) && !value.is_array() {
                self.node(value, depth + 1, scopes, stack)
            } else if ARRAY_KEYS.contains(&k) && value.is_array() {
                match value {
                    Value::Array(items) => Value::Array(
                        items
                            .iter()
                            .map(|v| self.node(v, depth + 1, scopes, stack))
                            .collect(),
                    ),
                    other => other.clone(),
                }
            } else if MAP_KEYS.contains(&k) && value.is_object() {
                match value {
                    Value::Object(entries) => Value::Object(
                        entries
                            .iter()
                            .map(|(name, v)| (name.clone(), self.node(v, depth + 1, scopes, stack)))
                            .collect(),
                    ),
                    other => other.clone(),
                }
            } else {
                value.clone()
            };
            out.insert(key.clone(), next);
        }
        Value::Object(out)
    }

    /// Finds the target of a local reference: first `#/$defs/<name>` and
    /// `#/definitions/<name>` in the enclosing scopes (innermost first),
    /// then the reference as a JSON pointer into the root document.
    fn resolve(&self, reference: &str, scopes: &[Scope<'a>]) -> Option<&'a Value> {
        let pointer = reference.strip_prefix('#')?;
        let segments: Vec<String> = pointer.split('/').skip(1).map(unescape_segment).collect();
        if let [namespace, name, rest @ ..] = segments.as_slice() {
            let wants_defs = namespace == "$defs";
            if wants_defs || namespace == "definitions" {
                for scope in scopes.iter().rev() {
                    let map = if wants_defs {
                        scope.defs
                    } else {
                        scope.definitions
                    };
                    if let Some(target) =
                        map.and_then(|m| m.get(name)).and_then(|d| follow(d, rest))
                    {
                        return Some(target);
                    }
                }
            }
        }
        follow(self.root, &segments)
    }
}

/// Whether a `$ref` points into the same document.
fn is_local(reference: &str) -> bool {
    reference == "#" || reference.starts_with("#/")
}

fn unescape_segment(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

/// Follows already-unescaped pointer segments from `start`.
fn follow<'a>(start: &'a Value, segments: &[String]) -> Option<&'a Value> {
    let mut current = start;
    for segment in segments {
        current = match current {
            Value::Object(map) => map.get(segment)?,
            Value::Array(items) => {
                let canonical = segment == "0" || !segment.starts_with('0');
                if !canonical || !segment.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                items.get(segment.parse::<usize>().ok()?)?
            }
            _ => return None,
        };
    }
    Some(current)
}

/// Removes definition containers from `schema` and every subschema.
fn drop_definition_containers(schema: &mut Value, depth: usize) {
    if depth >= MAX_DEPTH {
        return;
    }
    if let Value::Object(map) = schema {
        map.retain(|key, _| !DEFINITION_CONTAINERS.contains(&key.as_str()));
        crate::walk::for_each_child_mut(map, |child| drop_definition_containers(child, depth + 1));
    }
}

#[cfg(test)]
#[path = "refs_tests.rs"]
mod tests;
