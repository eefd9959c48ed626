//! The `/mcp` guard's direct path: what a POST body asks (`classify`) and
//! the header checks that decide whether the guard answers a call itself
//! (`sends_json`, `accepts_json`, `headers_fit`, `transport_checks_pass`).
//! The input is a body, then after a NUL byte header lines (`name: value`).
//! Nothing panics, and a body the direct path takes is a JSON-RPC 2.0
//! `tools/call` with a string name and object-or-null arguments.
#![no_main]

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use talon_mcp_serve::fuzzing::{
    Posted, accepts_json, classify, headers_fit, sends_json, transport_checks_pass,
};

fuzz_target!(|data: &[u8]| {
    let (body, head) = match data.iter().position(|b| *b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let posted = classify(body);
    if let Posted::Call { id, name: _, arguments } = &posted {
        let msg: Value = serde_json::from_slice(body).expect("a taken call is JSON");
        assert_eq!(msg["jsonrpc"], "2.0");
        assert_eq!(msg["method"], "tools/call");
        assert!(id.is_number() || id.is_string());
        assert!(arguments.is_object() || arguments.is_null());
    }
    let mut headers = HeaderMap::new();
    for line in head.split(|b| *b == b'\n').take(16) {
        let Some(colon) = line.iter().position(|b| *b == b':') else {
            continue;
        };
        let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(&line[..colon]),
            HeaderValue::from_bytes(line[colon + 1..].trim_ascii()),
        ) else {
            continue;
        };
        headers.append(name, value);
    }
    let _ = sends_json(&headers);
    let _ = accepts_json(&headers);
    let name = match &posted {
        Posted::Call { name, .. } => name.as_str(),
        _ => "tool",
    };
    let _ = headers_fit(&headers, name);
    let _ = transport_checks_pass(&headers, &[]);
    let allowed = vec!["localhost".to_owned(), "127.0.0.1:8080".to_owned()];
    if transport_checks_pass(&headers, &allowed) {
        assert!(!headers.contains_key("origin"));
    }
});
