//! Structural validation: walk the parsed value against the JSON Schema
//! that schemars generates for [`crate::TalonConfig`], collecting every
//! problem instead of stopping at the first.
//!
//! This is a small interpreter for the subset of JSON Schema that schemars
//! emits for plain serde types: `$ref` into `$defs`, `type` (one or a list),
//! `properties` / `required` / `additionalProperties`, `items`, `enum`,
//! `const`, `anyOf` / `oneOf` (for `Option<T>` and for enums), `minimum` /
//! `maximum`. Anything else is treated as "no constraint". Writing it here
//! (rather than using the `jsonschema` crate) keeps the messages ours:
//! line numbers from the span map, "did you mean" suggestions and fix-it
//! hints.

use serde_json::Value;

use crate::findings::Findings;
use crate::json5_spanned::truncate;
use crate::spans::{Pos, Seg, SpanNode, quote};
use crate::suggest::did_you_mean;

/// Check `value` against `schema` (a whole schema document with `$defs`).
pub(crate) fn check(schema: &Value, value: &Value, spans: &SpanNode, out: &mut Findings) {
    let checker = Checker { root: schema };
    let mut path = Vec::new();
    checker.check(schema, value, Some(spans), &mut path, out);
}

struct Checker<'a> {
    root: &'a Value,
}

/// `$ref` chains longer than this are treated as unresolvable.
const MAX_REF_HOPS: usize = 32;

impl<'a> Checker<'a> {
    /// Follow `$ref`s to the schema that constrains.
    fn resolve(&self, mut schema: &'a Value) -> &'a Value {
        for _ in 0..MAX_REF_HOPS {
            let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
                return schema;
            };
            let Some(target) = reference
                .strip_prefix('#')
                .and_then(|pointer| self.root.pointer(pointer))
            else {
                return &Value::Bool(true);
            };
            schema = target;
        }
        &Value::Bool(true)
    }

    fn check(
        &self,
        schema: &'a Value,
        value: &Value,
        span: Option<&SpanNode>,
        path: &mut Vec<Seg>,
        out: &mut Findings,
    ) {
        let schema = self.resolve(schema);
        let s = match schema {
            Value::Bool(true) => return,
            Value::Object(s) => s,
            _ => {
                out.issue(path, value_pos(span), "no value is allowed here");
                return;
            }
        };
        if let Some(Value::Array(branches)) = s.get("anyOf").or_else(|| s.get("oneOf")) {
            self.check_alternatives(branches, value, span, path, out);
            return;
        }
        if let Some(Value::Array(allowed)) = s.get("enum") {
            if !allowed.contains(value) {
                self.enum_issue(allowed.iter().collect(), value, span, path, out);
            }
            return;
        }
        if let Some(expected) = s.get("const") {
            if expected != value {
                self.enum_issue(vec![expected], value, span, path, out);
            }
            return;
        }
        if let Some(types) = s.get("type")
            && !type_matches(types, value)
        {
            out.issue(
                path,
                value_pos(span),
                type_message(&type_names(types), value),
            );
            return;
        }
        match value {
            Value::Object(map) => self.check_object(s, map, span, path, out),
            Value::Array(items) => {
                if let Some(item_schema) = s.get("items") {
                    for (i, item) in items.iter().enumerate() {
                        path.push(Seg::Index(i));
                        self.check(
                            item_schema,
                            item,
                            span.and_then(|sp| sp.element(i)),
                            path,
                            out,
                        );
                        path.pop();
                    }
                }
            }
            Value::Number(n) => {
                if let (Some(min), Some(x)) = (s.get("minimum").and_then(Value::as_f64), n.as_f64())
                    && x < min
                {
                    out.issue(
                        path,
                        value_pos(span),
                        format!("must be at least {min}, found {n}"),
                    );
                }
                if let (Some(max), Some(x)) = (s.get("maximum").and_then(Value::as_f64), n.as_f64())
                    && x > max
                {
                    out.issue(
                        path,
                        value_pos(span),
                        format!("must be at most {max}, found {n}"),
                    );
                }
            }
            Value::Null | Value::Bool(_) | Value::String(_) => {}
        }
    }

    fn check_object(
        &self,
        s: &'a serde_json::Map<String, Value>,
        map: &serde_json::Map<String, Value>,
        span: Option<&SpanNode>,
        path: &mut Vec<Seg>,
        out: &mut Findings,
    ) {
        let properties = s.get("properties").and_then(Value::as_object);
        let additional = s.get("additionalProperties");
        if let Some(Value::Array(required)) = s.get("required") {
            for key in required.iter().filter_map(Value::as_str) {
                if !map.contains_key(key) {
                    out.issue(
                        path,
                        value_pos(span),
                        format!("missing required key `{key}`"),
                    );
                }
            }
        }
        for (key, child) in map {
            let child_span = span.and_then(|sp| sp.member(key));
            path.push(Seg::Key(key.clone()));
            match (properties.and_then(|p| p.get(key)), additional) {
                (Some(prop), _) => self.check(prop, child, child_span, path, out),
                (None, Some(Value::Bool(false))) => {
                    let allowed: Vec<&str> = properties
                        .map(|p| p.keys().map(String::as_str).collect())
                        .unwrap_or_default();
                    let pos = child_span.map(SpanNode::key_or_value).unwrap_or_default();
                    out.issue(path, pos, unknown_key_message(key, &allowed));
                }
                (None, Some(extra)) => self.check(extra, child, child_span, path, out),
                (None, None) => {}
            }
            path.pop();
        }
    }

    fn check_alternatives(
        &self,
        branches: &'a [Value],
        value: &Value,
        span: Option<&SpanNode>,
        path: &mut Vec<Seg>,
        out: &mut Findings,
    ) {
        let resolved: Vec<&Value> = branches.iter().map(|b| self.resolve(b)).collect();
        if value.is_null() && resolved.iter().any(|b| self.accepts_null(b)) {
            return;
        }
        // An enum written as one `const` (or `enum`) per variant.
        let mut choices: Vec<&Value> = Vec::new();
        let mut all_enumerated = true;
        for branch in resolved.iter().filter(|b| !is_null_schema(b)) {
            match self.enumerated(branch) {
                Some(values) => choices.extend(values),
                None => all_enumerated = false,
            }
        }
        if all_enumerated && !choices.is_empty() {
            if !choices.contains(&value) {
                self.enum_issue(choices, value, span, path, out);
            }
            return;
        }
        let compatible: Vec<&Value> = resolved
            .iter()
            .copied()
            .filter(|b| {
                self.types_of(b)
                    .is_none_or(|t| t.iter().any(|t| type_name_matches(t, value)))
            })
            .collect();
        let Some(first) = compatible.first() else {
            let mut names: Vec<String> = Vec::new();
            for b in &resolved {
                for t in self.types_of(b).unwrap_or_default() {
                    if !names.contains(&t) {
                        names.push(t);
                    }
                }
            }
            out.issue(path, value_pos(span), type_message(&names, value));
            return;
        };
        for branch in &compatible {
            let mut scratch = Findings::default();
            self.check(branch, value, span, path, &mut scratch);
            if scratch.issues.is_empty() {
                return;
            }
        }
        self.check(first, value, span, path, out);
    }

    fn accepts_null(&self, schema: &Value) -> bool {
        match self.types_of(schema) {
            None => true,
            Some(types) => types.iter().any(|t| t == "null"),
        }
    }

    /// The values a schema allows, if it is a `const` / `enum` / a union
    /// of them.
    fn enumerated(&self, schema: &'a Value) -> Option<Vec<&'a Value>> {
        let schema = self.resolve(schema);
        if let Some(c) = schema.get("const") {
            return Some(vec![c]);
        }
        if let Some(Value::Array(values)) = schema.get("enum") {
            return Some(values.iter().collect());
        }
        if let Some(Value::Array(branches)) = schema.get("anyOf").or_else(|| schema.get("oneOf")) {
            let mut out = Vec::new();
            for b in branches {
                if is_null_schema(self.resolve(b)) {
                    continue;
                }
                out.extend(self.enumerated(b)?);
            }
            return Some(out);
        }
        None
    }

    /// The JSON types a schema accepts; `None` means any.
    fn types_of(&self, schema: &Value) -> Option<Vec<String>> {
        let schema = self.resolve(schema);
        if let Some(types) = schema.get("type") {
            return Some(type_names(types));
        }
        if let Some(c) = schema.get("const") {
            return Some(vec![json_type(c).to_owned()]);
        }
        if let Some(Value::Array(values)) = schema.get("enum") {
            return Some(values.iter().map(|v| json_type(v).to_owned()).collect());
        }
        if let Some(Value::Array(branches)) = schema.get("anyOf").or_else(|| schema.get("oneOf")) {
            let mut out = Vec::new();
            for b in branches {
                out.extend(self.types_of(b)?);
            }
            return Some(out);
        }
        None
    }

    fn enum_issue(
        &self,
        choices: Vec<&Value>,
        value: &Value,
        span: Option<&SpanNode>,
        path: &[Seg],
        out: &mut Findings,
    ) {
        let listed: Vec<String> = choices
            .iter()
            .map(|c| format!("`{}`", display_scalar(c)))
            .collect();
        let shown = match value {
            Value::String(s) => quote(&truncate(s, 40)),
            other => describe_value(other),
        };
        let mut message = format!(
            "invalid value {shown}: expected one of {}",
            listed.join(", ")
        );
        if let Value::String(s) = value {
            let names: Vec<&str> = choices.iter().filter_map(|c| c.as_str()).collect();
            if let Some(best) = did_you_mean(s, &names) {
                message.push_str(&format!(" (did you mean `{best}`?)"));
            }
        }
        out.issue(path, value_pos(span), message);
    }
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
        || schema.get("const") == Some(&Value::Null)
}

fn value_pos(span: Option<&SpanNode>) -> Pos {
    span.map(|s| s.value).unwrap_or_default()
}

fn type_names(types: &Value) -> Vec<String> {
    match types {
        Value::String(t) => vec![t.clone()],
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

fn type_matches(types: &Value, value: &Value) -> bool {
    let names = type_names(types);
    names.is_empty() || names.iter().any(|t| type_name_matches(t, value))
}

fn type_name_matches(name: &str, value: &Value) -> bool {
    match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        _ => true,
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_phrase(name: &str) -> &'static str {
    match name {
        "null" => "null",
        "boolean" => "a boolean (`true` or `false`)",
        "object" => "an object",
        "array" => "an array",
        "string" => "a string",
        "number" => "a number",
        "integer" => "an integer",
        _ => "a value",
    }
}

/// "expected an array, found a string (\"exec\")", with a fix-it where one
/// is obvious.
fn type_message(expected: &[String], value: &Value) -> String {
    let mut names: Vec<&str> = expected
        .iter()
        .map(String::as_str)
        .filter(|t| *t != "null")
        .collect();
    if names.is_empty() {
        names.push("null");
    }
    if names.contains(&"number") {
        names.retain(|t| *t != "integer");
    }
    let mut phrases: Vec<&str> = Vec::new();
    for n in &names {
        let p = type_phrase(n);
        if !phrases.contains(&p) {
            phrases.push(p);
        }
    }
    let mut message = format!(
        "expected {}, found {}",
        phrases.join(" or "),
        describe_value(value)
    );
    if names == ["array"]
        && let Value::String(s) = value
    {
        message.push_str(&format!(
            " (write [{}] for a list of one)",
            quote(&truncate(s, 40))
        ));
    } else if names == ["boolean"]
        && let Value::String(s) = value
        && matches!(s.as_str(), "true" | "false")
    {
        message.push_str(&format!(" (write {s} without quotes)"));
    }
    message
}

/// A value as messages show it: its type, and scalars verbatim.
pub(crate) fn describe_value(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("a boolean (`{b}`)"),
        Value::Number(n) => format!("a number (`{n}`)"),
        Value::String(s) => format!("a string ({})", quote(&truncate(s, 40))),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

fn display_scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// "unknown key `alow` (did you mean `allow`?)", else the allowed keys.
pub(crate) fn unknown_key_message(key: &str, allowed: &[&str]) -> String {
    let shown = if key.chars().all(|c| !c.is_control()) && !key.contains('`') {
        format!("`{}`", truncate(key, 60))
    } else {
        quote(&truncate(key, 60))
    };
    let mut message = format!("unknown key {shown}");
    if let Some(best) = did_you_mean(key, allowed) {
        message.push_str(&format!(" (did you mean `{best}`?)"));
    } else if !allowed.is_empty() && allowed.len() <= 20 {
        let list: Vec<String> = allowed.iter().map(|k| format!("`{k}`")).collect();
        message.push_str(&format!("; expected one of {}", list.join(", ")));
    }
    message
}

#[cfg(test)]
#[path = "schema_check_tests.rs"]
mod tests;
