//! The checked-in schema and reference are what the types generate
//! (`UPDATE_SCHEMA=1` rewrites them), and the schema's shape is an insta
//! snapshot.

use std::path::PathBuf;

use serde_json::Value;
use talon_gateway_protocol::{MethodName, markdown, schema_file, schema_json};

fn docs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs")
}

/// Compare `path` with `generated`, or rewrite it under `UPDATE_SCHEMA=1`.
fn check_generated(name: &str, generated: &str) {
    let path = docs_dir().join(name);
    if std::env::var_os("UPDATE_SCHEMA").is_some_and(|v| v == "1") {
        std::fs::write(&path, generated).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "{} is stale: regenerate it with `UPDATE_SCHEMA=1 cargo test -p talon-gateway-protocol` and commit the result",
        path.display()
    );
}

#[test]
fn checked_in_schema_is_current() {
    check_generated("gateway-protocol.schema.json", &schema_file());
}

#[test]
fn checked_in_reference_is_current() {
    check_generated("gateway-protocol.md", &markdown());
}

#[test]
fn schema_lists_every_method_with_its_scope_and_resolvable_types() {
    let schema = schema_json();
    let methods = schema["x-talon-methods"].as_array().unwrap();
    assert_eq!(methods.len(), MethodName::ALL.len());
    let defs = schema["$defs"].as_object().unwrap();
    for (m, row) in MethodName::ALL.iter().zip(methods) {
        assert_eq!(row["method"], m.as_str());
        assert_eq!(row["scope"], m.scope().as_str());
        for key in ["params", "result"] {
            let r = row[key]["$ref"].as_str();
            let name = r.and_then(|r| r.strip_prefix("#/$defs/"));
            assert!(
                name.is_some_and(|n| defs.contains_key(n)),
                "{m}: {key} is not a named type: {}",
                row[key]
            );
        }
    }
    // Every $ref anywhere resolves.
    fn walk(v: &Value, defs: &serde_json::Map<String, Value>) {
        match v {
            Value::Object(o) => {
                if let Some(r) = o.get("$ref").and_then(Value::as_str) {
                    let name = r.strip_prefix("#/$defs/").unwrap_or(r);
                    assert!(defs.contains_key(name), "dangling $ref {r}");
                }
                o.values().for_each(|x| walk(x, defs));
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, defs)),
            _ => {}
        }
    }
    walk(&schema, defs);
}

#[test]
fn schema_snapshot() {
    insta::assert_json_snapshot!("gateway_protocol_schema", schema_json());
}
