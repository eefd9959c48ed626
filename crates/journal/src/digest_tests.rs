#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use sha2::{Digest, Sha256};

use super::{is_digest, params_digest};

fn sha_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn digest_is_sha256_of_sorted_compact_json() {
    let params = json!({"b": [1, {"d": 2, "c": "x"}], "a": null, "Z": true});
    assert_eq!(
        params_digest(&params),
        sha_hex(r#"{"Z":true,"a":null,"b":[1,{"c":"x","d":2}]}"#)
    );
}

#[test]
fn key_order_does_not_change_the_digest_but_values_do() {
    let a = json!({"command": "ls", "env": {"B": "2", "A": "1"}});
    let b = json!({"env": {"A": "1", "B": "2"}, "command": "ls"});
    let c = json!({"env": {"A": "1", "B": "3"}, "command": "ls"});
    assert_eq!(params_digest(&a), params_digest(&b));
    assert_ne!(params_digest(&a), params_digest(&c));
    // Array order is meaningful.
    assert_ne!(params_digest(&json!([1, 2])), params_digest(&json!([2, 1])));
}

#[test]
fn keys_are_escaped_and_sorted_by_bytes() {
    let params = json!({"é": 1, "z": 2, "q\"uote": 3});
    assert_eq!(
        params_digest(&params),
        sha_hex(r#"{"q\"uote":3,"z":2,"é":1}"#)
    );
}

#[test]
fn digest_shape_check() {
    let d = params_digest(&json!({}));
    assert!(is_digest(&d));
    assert!(!is_digest(&d.to_uppercase()));
    assert!(!is_digest(&d[..63]));
    assert!(!is_digest(&format!("{}g", &d[..63])));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

    /// Any insertion order of the same keys gives the same digest; changing
    /// one value changes it.
    #[test]
    fn digest_ignores_key_order_only(
        entries in proptest::collection::btree_map("[a-zA-Z0-9_é\"\\\\]{0,8}", -1000i64..1000, 1..12),
        rotate in 0usize..12,
    ) {
        let forward: serde_json::Map<String, serde_json::Value> =
            entries.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        let mut pairs: Vec<_> = entries.iter().collect();
        let by = rotate % pairs.len();
        pairs.rotate_left(by);
        pairs.reverse();
        let shuffled: serde_json::Map<String, serde_json::Value> =
            pairs.iter().map(|(k, v)| ((*k).clone(), json!(v))).collect();
        let a = params_digest(&serde_json::Value::Object(forward.clone()));
        proptest::prop_assert_eq!(&a, &params_digest(&serde_json::Value::Object(shuffled)));
        proptest::prop_assert!(is_digest(&a));

        let mut changed = forward;
        let first = changed.keys().next().cloned().unwrap();
        let old = changed[&first].as_i64().unwrap();
        changed.insert(first, json!(old + 1));
        proptest::prop_assert_ne!(a, params_digest(&serde_json::Value::Object(changed)));
    }
}
