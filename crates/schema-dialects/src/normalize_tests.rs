use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

#[test]
fn blank_unsupported_keywords_are_ignored() {
    let opts = NormalizeOptions {
        unsupported_keywords: vec![" ".to_owned(), " title ".to_owned()],
        ..Default::default()
    };
    let out = normalize_schema(
        &json!({"title": "t", "properties": {}}),
        Dialect::Permissive,
        &opts,
    );
    assert_eq!(out.schema, json!({"properties": {}, "type": "object"}));
}

#[test]
fn stripping_type_and_properties_keeps_the_root_an_object() {
    let opts = NormalizeOptions {
        unsupported_keywords: vec!["type".to_owned(), "properties".to_owned()],
        ..Default::default()
    };
    let out = normalize_schema(
        &json!({"type": "object", "properties": {"a": {"type": "string"}}}),
        Dialect::OpenAi,
        &opts,
    );
    assert_eq!(out.schema, json!({"type": "object", "properties": {}}));
}

#[test]
fn empty_object_args_follows_required() {
    let opts = NormalizeOptions::default();
    assert!(normalize_schema(&json!({}), Dialect::OpenAi, &opts).empty_object_args);
    assert!(
        normalize_schema(
            &json!({"properties": {}, "required": []}),
            Dialect::OpenAi,
            &opts
        )
        .empty_object_args
    );
    assert!(
        !normalize_schema(
            &json!({"properties": {"a": {}}, "required": ["a"]}),
            Dialect::OpenAi,
            &opts
        )
        .empty_object_args
    );
}
