#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn defaults_are_openclaw_defaults_and_valid() {
    let config: ExecConfig = serde_json::from_str("{}").unwrap();
    assert_eq!(config, ExecConfig::default());
    assert_eq!(config.background_ms, 10_000);
    assert_eq!(config.timeout_sec, 1_800);
    assert_eq!(config.cleanup_ms, 1_800_000);
    config.validate().unwrap();
}

#[test]
fn camel_case_keys_are_read() {
    let config: ExecConfig = serde_json::from_str(
        r#"{"backgroundMs": 500, "timeoutSec": 60, "cleanupMs": 120000, "maxOutputBytes": 4096, "maxTimeoutSec": 600}"#,
    )
    .unwrap();
    assert_eq!(config.background_ms, 500);
    assert_eq!(config.timeout_sec, 60);
    assert_eq!(config.cleanup_ms, 120_000);
    assert_eq!(config.max_output_bytes, 4096);
    assert_eq!(config.max_timeout_sec, 600);
    config.validate().unwrap();
}

#[test]
fn unknown_and_unimplemented_keys_are_errors() {
    let err = serde_json::from_str::<ExecConfig>(r#"{"notifyOnExit": true}"#).unwrap_err();
    assert!(err.to_string().contains("notifyOnExit"), "{err}");
    let err = serde_json::from_str::<ExecConfig>(r#"{"timeout_sec": 5}"#).unwrap_err();
    assert!(err.to_string().contains("timeout_sec"), "{err}");
}

#[test]
fn out_of_range_values_name_the_key() {
    let cases = [
        (r#"{"backgroundMs": 5}"#, "backgroundMs"),
        (r#"{"cleanupMs": 1000}"#, "cleanupMs"),
        (r#"{"timeoutSec": 0}"#, "timeoutSec"),
        (r#"{"timeoutSec": 700, "maxTimeoutSec": 600}"#, "timeoutSec"),
        (r#"{"maxOutputBytes": 10}"#, "maxOutputBytes"),
    ];
    for (json, key) in cases {
        let config: ExecConfig = serde_json::from_str(json).unwrap();
        let err = config.validate().unwrap_err();
        assert_eq!(err.key, key, "{json}");
        assert!(
            err.to_string()
                .starts_with(&format!("tools.exec.{key} is ")),
            "{err}"
        );
    }
}

#[test]
fn schema_lists_the_keys_and_forbids_others() {
    let schema = serde_json::to_value(schemars::schema_for!(ExecConfig)).unwrap();
    let props = schema["properties"].as_object().unwrap();
    for key in [
        "backgroundMs",
        "timeoutSec",
        "maxTimeoutSec",
        "cleanupMs",
        "maxOutputBytes",
    ] {
        assert!(props.contains_key(key), "{key} missing from {schema}");
    }
    assert_eq!(schema["additionalProperties"], serde_json::json!(false));
}
