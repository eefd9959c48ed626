//! Talon's own JSON5 reader (the one behind `talon.json`, which records
//! positions) against the `json5` crate: where both accept a text, they
//! read the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

/// Equal as JSON5 values: numbers by their `f64` value (one reader may
/// keep `1` as an integer where the other has `1.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x == y || (x.is_nan() && y.is_nan()),
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fuzz_target!(|text: &str| {
    let Ok(ours) = talon_config::parse_json5(text) else {
        return;
    };
    if ours.problems > 0 {
        // Duplicate keys and non-finite numbers: Talon refuses the file.
        return;
    }
    if let Ok(theirs) = json5::from_str::<Value>(text) {
        assert!(
            same(&ours.value, &theirs),
            "{text:?}: talon read {} but json5 read {}",
            ours.value,
            theirs
        );
    }
});
