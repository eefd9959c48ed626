use pretty_assertions::assert_eq;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;
use talon_schema_dialects::ArgumentError;
use talon_schema_dialects::Error;
use talon_schema_dialects::decode_arguments;
use talon_schema_dialects::decode_arguments_str;

fn obj(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

#[test]
fn objects_pass_through() {
    let args = json!({"path": "a.txt", "n": 2});
    assert_eq!(decode_arguments(&args, false), Ok(obj(args.clone())));
    assert_eq!(
        decode_arguments_str(r#"{"path":"a.txt","n":2}"#, false),
        Ok(obj(args))
    );
}

#[test]
fn json_strings_holding_objects_are_parsed() {
    let expected = obj(json!({"q": "rust"}));
    assert_eq!(
        decode_arguments(&json!("  {\"q\": \"rust\"}\n"), false),
        Ok(expected.clone())
    );
    // Double-encoded text, as some models send.
    assert_eq!(
        decode_arguments_str(r#""{\"q\": \"rust\"}""#, false),
        Ok(expected)
    );
}

#[test]
fn absent_arguments_are_empty_only_when_allowed() {
    for raw in [json!(null), json!(""), json!("   ")] {
        assert_eq!(decode_arguments(&raw, true), Ok(Map::new()), "{raw}");
    }
    for raw in ["", "  ", "null", " null "] {
        assert_eq!(decode_arguments_str(raw, true), Ok(Map::new()), "{raw:?}");
    }
    assert_eq!(
        decode_arguments(&json!(null), false),
        Err(ArgumentError::Missing { received: "null" })
    );
    assert_eq!(
        decode_arguments(&json!(" "), false),
        Err(ArgumentError::Missing {
            received: "an empty string"
        })
    );
    assert_eq!(
        decode_arguments_str("null", false),
        Err(ArgumentError::Missing { received: "null" })
    );
    let message = decode_arguments_str("", false).unwrap_err().to_string();
    assert_eq!(
        message,
        "tool arguments are required but an empty string was received; send a JSON object with the tool's parameters, such as {\"name\": \"value\"}"
    );
}

#[test]
fn non_objects_are_errors_even_when_empty_args_are_allowed() {
    let cases = [
        (json!([1, 2]), "an array", "[1,2]"),
        (json!(42), "a number", "42"),
        (json!(true), "a boolean", "true"),
        (
            json!("[\"a\"]"),
            "a string containing an array",
            "\"[\\\"a\\\"]\"",
        ),
        (json!("7"), "a string containing a number", "\"7\""),
        (json!("null"), "a string containing null", "\"null\""),
        (
            json!("\"x\""),
            "a string containing another string",
            "\"\\\"x\\\"\"",
        ),
    ];
    for (raw, received, preview) in cases {
        assert_eq!(
            decode_arguments(&raw, true),
            Err(ArgumentError::NotAnObject {
                received,
                preview: preview.to_owned()
            }),
            "{raw}"
        );
    }
    assert_eq!(
        decode_arguments(&json!([1, 2]), true)
            .unwrap_err()
            .to_string(),
        "tool arguments must be a JSON object of named parameters, but an array was received: [1,2]; wrap the values in an object such as {\"name\": ...}"
    );
}

#[test]
fn invalid_json_is_reported_with_a_preview() {
    let err = decode_arguments(&json!("path=a.txt"), true).unwrap_err();
    let ArgumentError::InvalidJson { preview, reason } = &err else {
        panic!("unexpected {err:?}");
    };
    assert_eq!(preview, "\"path=a.txt\"");
    assert!(!reason.is_empty());
    let message = err.to_string();
    assert!(message.starts_with(
        "tool arguments must be a JSON object, but a string that is not valid JSON was received"
    ));
    assert!(message.contains("\"path=a.txt\""));
    assert!(matches!(
        decode_arguments_str("{\"a\": ", true),
        Err(ArgumentError::InvalidJson { .. })
    ));
}

#[test]
fn previews_are_at_most_80_chars() {
    let long = format!("[{}]", vec!["\"abcdefgh\""; 100].join(","));
    let Err(ArgumentError::NotAnObject { preview, .. }) = decode_arguments_str(&long, false) else {
        panic!("expected NotAnObject");
    };
    assert_eq!(preview.chars().count(), 80);
    assert!(preview.ends_with("..."));

    let garbage = "ü".repeat(10_000);
    let Err(ArgumentError::InvalidJson { preview, .. }) = decode_arguments_str(&garbage, false)
    else {
        panic!("expected InvalidJson");
    };
    assert_eq!(preview.chars().count(), 80);
}

#[test]
fn argument_errors_convert_into_the_crate_error() {
    let err: Error = ArgumentError::Missing { received: "null" }.into();
    assert!(matches!(
        err,
        Error::Arguments(ArgumentError::Missing { .. })
    ));
    assert!(err.to_string().starts_with("tool arguments are required"));
}
