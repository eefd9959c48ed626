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
