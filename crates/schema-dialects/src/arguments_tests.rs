use pretty_assertions::assert_eq;

use super::*;

#[test]
fn truncate_keeps_short_text_and_cuts_long_text_to_80_chars() {
    assert_eq!(truncate("short".to_owned()), "short");
    let long = "é".repeat(200);
    let cut = truncate(long);
    assert_eq!(cut.chars().count(), PREVIEW_CHARS);
    assert!(cut.ends_with("..."));
    let exact = "x".repeat(PREVIEW_CHARS);
    assert_eq!(truncate(exact.clone()), exact);
}

#[test]
fn kinds_describe_values() {
    assert_eq!(kind(&Value::Bool(true)), "a boolean");
    assert_eq!(
        inside_string(&Value::Array(Vec::new())),
        "a string containing an array"
    );
}
