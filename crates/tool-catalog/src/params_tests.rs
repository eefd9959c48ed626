use pretty_assertions::assert_eq;
use serde_json::{Map, Value, json};

use super::*;

fn p(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

#[test]
fn string_reader_trims_and_does_not_coerce() {
    let params = p(json!({"path": "  a.txt ", "n": 42, "blank": "   "}));
    assert_eq!(
        read_string(&params, "path", StringOpts::default()).unwrap(),
        Some("a.txt".into())
    );
    assert_eq!(
        read_string(&params, "n", StringOpts::default()).unwrap(),
        None
    );
    assert_eq!(
        read_string(&params, "blank", StringOpts::default()).unwrap(),
        None
    );
    let err = read_string(&params, "n", StringOpts::required().label("Count")).unwrap_err();
    assert_eq!(err.to_string(), "Count required");
    assert_eq!(err.param(), Some("n"));
    assert_eq!(
        read_string(&params, "blank", StringOpts::default().allow_empty()).unwrap(),
        Some(String::new())
    );
}

#[test]
fn snake_case_keys_are_accepted() {
    let params = p(json!({"max_chars": "12", "old_text": "x"}));
    assert_eq!(
        read_number(&params, "maxChars", NumberOpts::default()).unwrap(),
        Some(12.0)
    );
    assert_eq!(require_string(&params, "oldText").unwrap(), "x");
    assert_eq!(to_snake_case("sessionKeyId"), "session_key_id");
}

#[test]
fn string_or_number() {
    let params = p(json!({"id": 7, "s": "x"}));
    assert_eq!(
        read_string_or_number(&params, "id", StringOpts::default()).unwrap(),
        Some("7".into())
    );
    assert_eq!(
        read_string_or_number(&params, "s", StringOpts::default()).unwrap(),
        Some("x".into())
    );
}

#[test]
fn number_reader_is_lenient_like_parse_float() {
    let params = p(json!({"a": "42", "b": " 3.5px", "c": "abc", "d": true, "e": "", "f": 7.9}));
    assert_eq!(
        read_number(&params, "a", NumberOpts::default()).unwrap(),
        Some(42.0)
    );
    assert_eq!(
        read_number(&params, "b", NumberOpts::default()).unwrap(),
        Some(3.5)
    );
    assert!(read_number(&params, "c", NumberOpts::default()).is_err());
    assert!(read_number(&params, "d", NumberOpts::default()).is_err());
    assert_eq!(
        read_number(&params, "e", NumberOpts::default()).unwrap(),
        None
    );
    let int = NumberOpts {
        integer: true,
        ..NumberOpts::default()
    };
    assert_eq!(read_number(&params, "f", int).unwrap(), Some(7.0));
    let strict = NumberOpts {
        strict: true,
        ..NumberOpts::default()
    };
    assert!(read_number(&params, "b", strict).is_err());
    let req = NumberOpts {
        required: true,
        ..NumberOpts::default()
    };
    assert_eq!(
        read_number(&params, "zz", req).unwrap_err().to_string(),
        "zz required"
    );
}

#[test]
fn strict_integer_readers() {
    let params = p(json!({"a": "5", "b": 0, "c": 1.5, "d": " ", "e": "0x10", "f": -1}));
    assert_eq!(
        read_positive_integer(&params, "a", Bounds::default()).unwrap(),
        Some(5)
    );
    assert_eq!(
        read_positive_integer(&params, "b", Bounds::default())
            .unwrap_err()
            .to_string(),
        "b must be a positive integer"
    );
    assert_eq!(
        read_non_negative_integer(&params, "b", Bounds::default()).unwrap(),
        Some(0)
    );
    assert!(read_non_negative_integer(&params, "c", Bounds::default()).is_err());
    assert_eq!(
        read_positive_integer(&params, "d", Bounds::default()).unwrap(),
        None
    );
    assert!(read_positive_integer(&params, "e", Bounds::default()).is_err());
    assert!(read_non_negative_integer(&params, "f", Bounds::default()).is_err());
    assert_eq!(
        read_positive_integer(&params, "a", Bounds::inclusive(1.0, 3.0))
            .unwrap_err()
            .to_string(),
        "a must be <= 3"
    );
    assert_eq!(
        read_finite_number(&params, "c", Bounds::default()).unwrap(),
        Some(1.5)
    );
}

#[test]
fn string_array_reader() {
    let params = p(json!({"a": [" x ", "", 3, "y"], "b": " z ", "c": []}));
    assert_eq!(
        read_string_array(&params, "a", false, None).unwrap(),
        Some(vec!["x".into(), "y".into()])
    );
    assert_eq!(
        read_string_array(&params, "b", false, None).unwrap(),
        Some(vec!["z".into()])
    );
    assert_eq!(
        read_string_array(&params, "c", true, Some("Targets"))
            .unwrap_err()
            .to_string(),
        "Targets required"
    );
}

#[test]
fn bool_reader_and_action_gate() {
    let params = p(json!({"a": "TRUE", "b": false, "c": "maybe"}));
    assert_eq!(read_bool(&params, "a").unwrap(), Some(true));
    assert_eq!(read_bool(&params, "b").unwrap(), Some(false));
    assert!(read_bool(&params, "c").is_err());
    let actions = p(json!({"send": false, "react": true}));
    assert!(!action_enabled(Some(&actions), "send", true));
    assert!(action_enabled(Some(&actions), "react", false));
    assert!(action_enabled(Some(&actions), "other", true));
    assert!(!action_enabled(None, "other", false));
}

proptest::proptest! {
    #[test]
    fn readers_never_panic(s in ".{0,40}", f in proptest::num::f64::ANY) {
        let params = p(json!({"s": s, "f": f}));
        let _ = read_string(&params, "s", StringOpts::default());
        let _ = read_number(&params, "s", NumberOpts::default());
        let _ = read_number(&params, "f", NumberOpts::default());
        let _ = read_positive_integer(&params, "s", Bounds::default());
        let _ = read_bool(&params, "s");
    }
}

#[test]
fn unknown_keys_are_refused_naming_the_key() {
    let known = ["path", "offset", "limit"];
    let aliases = [("filePath", "path")];
    for ok in [
        json!({"path": "a"}),
        json!({"file_path": "a", "offset": 2}),
        json!({"filePath": "a", "path": "a"}),
        json!({"path": "a", "file_path": null}),
    ] {
        refuse_unknown_keys("read", &p(ok.clone()), &known, &aliases)
            .unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    let err = refuse_unknown_keys(
        "read",
        &p(json!({"path": "a", "filename": "../x"})),
        &known,
        &aliases,
    )
    .unwrap_err();
    assert_eq!(err.code(), crate::ToolErrorCode::InputUnknownParam);
    assert_eq!(err.param(), Some("filename"));
    assert!(err.message().contains("`filename`"), "{err}");
    assert!(err.message().contains("path, offset, limit"), "{err}");
    assert!(err.message().contains("goes in `path`"), "{err}");
    // Two spellings that disagree: neither is silently preferred.
    let err = refuse_unknown_keys(
        "read",
        &p(json!({"path": "a", "file_path": "../.bashrc"})),
        &known,
        &aliases,
    )
    .unwrap_err();
    assert_eq!(err.code(), crate::ToolErrorCode::InputUnknownParam);
    assert!(
        err.message().contains("`path`") && err.message().contains("`file_path`"),
        "{err}"
    );
    let err = refuse_unknown_keys(
        "exec",
        &p(json!({"command": "ls", "cwd": "/etc"})),
        &["command", "workdir"],
        &[],
    )
    .unwrap_err();
    assert_eq!(err.param(), Some("cwd"));
    assert!(err.message().contains("`workdir`"), "{err}");
}
