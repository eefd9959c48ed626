#![allow(clippy::unwrap_used)]

use pretty_assertions::assert_eq;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::*;

#[test]
fn key_order_does_not_matter_at_any_depth() {
    let a = json!({"b": 1, "a": {"y": [1, 2, {"q": 1, "p": 2}], "x": null}});
    let b = json!({"a": {"x": null, "y": [1, 2, {"p": 2, "q": 1}]}, "b": 1});
    assert_eq!(canonical_json(&a), canonical_json(&b));
    assert_eq!(
        canonical_json(&a),
        r#"{"a":{"x":null,"y":[1,2,{"p":2,"q":1}]},"b":1}"#
    );
    assert_eq!(hash_json(&a), hash_json(&b));
}

#[test]
fn array_order_and_values_matter() {
    assert_ne!(hash_json(&json!([1, 2])), hash_json(&json!([2, 1])));
    assert_ne!(
        hash_json(&json!({"env": {"A": "1"}})),
        hash_json(&json!({"env": {"A": "2"}}))
    );
    assert_eq!(canonical_json(&json!([[], {}, [{}]])), "[[],{},[{}]]");
}

#[test]
fn keys_sort_by_utf16_code_units() {
    // U+FF5E sorts after U+1F600 in UTF-16 (0xFF5E > 0xD83D) but before
    // it in UTF-8 and char order.
    let v = json!({"\u{FF5E}": 2, "\u{1F600}": 1, "z": 0, "Z": 0, "é": 3});
    assert_eq!(
        canonical_json(&v),
        "{\"Z\":0,\"z\":0,\"é\":3,\"\u{1F600}\":1,\"\u{FF5E}\":2}"
    );
}

#[test]
fn strings_are_escaped_as_serde_json_escapes_them() {
    let mut all = String::new();
    for c in (0u32..0x80).chain([0xe9, 0x2028, 0xfeff, 0x1f600]) {
        all.push(char::from_u32(c).unwrap());
    }
    let v = Value::String(all.clone());
    assert_eq!(canonical_json(&v), v.to_string());
    let keyed = json!({ all: true });
    assert_eq!(canonical_json(&keyed), keyed.to_string());
}

#[test]
fn numbers_keep_their_serde_json_text() {
    let v: Value = serde_json::from_str(
        r#"[0, -1, 18446744073709551615, -9223372036854775808, 1.0, 0.1, 1e300, -0.0, 2.5e-8]"#,
    )
    .unwrap();
    assert_eq!(
        canonical_json(&v),
        "[0,-1,18446744073709551615,-9223372036854775808,1.0,0.1,1e+300,-0.0,2.5e-8]"
    );
}

#[test]
fn the_hash_is_sha256_of_the_canonical_text() {
    let v = json!({"command": "ls", "cwd": "/tmp", "env": {"B": "2", "A": "1"}});
    assert_eq!(hash_json(&v), sha256_hex(canonical_json(&v)));
    let Value::Object(map) = &v else {
        unreachable!()
    };
    assert_eq!(hash_object(map), hash_json(&v));
    assert_eq!(
        sha256_hex("abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    // The journal's digests from before this crate stay valid: the same
    // text gives the same digest.
    assert_eq!(
        hash_json(&json!({"b": [1, {"d": 2, "c": "x"}], "a": null, "Z": true})),
        sha256_hex(r#"{"Z":true,"a":null,"b":[1,{"c":"x","d":2}]}"#)
    );
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        // Quarters are exact in binary and decimal, so they read back equal.
        any::<i32>().prop_map(|i| Value::from(f64::from(i) / 4.0)),
        ".{0,8}".prop_map(Value::String),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((".{0,6}", inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// The same value with every object's keys in reverse order.
fn reversed(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .rev()
                .map(|(k, v)| (k.clone(), reversed(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(reversed).collect()),
        other => other.clone(),
    }
}

proptest! {
    #[test]
    fn canonical_text_reads_back_equal_and_ignores_key_order(v in json_value()) {
        let text = canonical_json(&v);
        let back: Value = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(&back, &v);
        prop_assert_eq!(&text, &canonical_json(&reversed(&v)));
        prop_assert_eq!(hash_json(&v), sha256_hex(&text));
    }
}
