//! A message from Chromium's DevTools socket (the browser tool's CDP
//! client): a response or an event, or refused; never a panic, and a
//! response's id and an event's method survive as sent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use talon_browser::cdp::{Incoming, parse_message};

fuzz_target!(|text: &str| {
    match parse_message(text) {
        Ok(Incoming::Response { id, outcome }) => {
            let v: serde_json::Value = serde_json::from_str(text).expect("parsed once");
            assert_eq!(v.get("id").and_then(serde_json::Value::as_u64), Some(id));
            if let Ok(result) = outcome {
                assert!(result.is_object(), "a result is an object");
            }
        }
        Ok(Incoming::Event { method, params, .. }) => {
            assert!(!method.is_empty() && method.chars().count() <= 256);
            assert!(params.is_object(), "params are an object");
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
