#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn log_slices_by_lines() {
    let text = (0..300)
        .map(|i| format!("l{i}"))
        .collect::<Vec<_>>()
        .join("\n");
    let (out, start, end, total) = slice_lines(&text, None, None);
    assert_eq!((start, end, total), (100, 300, 300));
    assert!(out.starts_with("l100\n") && out.ends_with("l299"));
    let (out, start, end, _) = slice_lines(&text, Some(5), Some(2));
    assert_eq!((out.as_str(), start, end), ("l5\nl6", 5, 7));
    let (out, start, ..) = slice_lines(&text, Some(298), None);
    assert_eq!((out.as_str(), start), ("l298\nl299", 298));
    let (out, ..) = slice_lines(&text, None, Some(1));
    assert_eq!(out, "l299");
    let (out, start, end, _) = slice_lines(&text, Some(1000), Some(5));
    assert_eq!((out.as_str(), start, end), ("", 300, 300));
}

#[test]
fn the_schema_is_flat_with_the_seven_actions() {
    let spec = process_spec();
    assert_eq!(spec.name, "process");
    let params = &spec.parameters;
    assert_eq!(params["type"], "object");
    assert!(params.get("anyOf").is_none() && params.get("oneOf").is_none());
    assert_eq!(params["properties"]["action"]["enum"], json!(ACTIONS));
    assert_eq!(params["required"], json!(["action"]));
}
