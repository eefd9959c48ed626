use serde_json::Value;
use talon_config::config_schema;

#[test]
fn config_schema_is_a_strict_object_schema() {
    let schema = config_schema();
    assert!(schema.is_object());
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["additionalProperties"], Value::Bool(false));
    let props = schema["properties"].as_object().unwrap();
    for key in [
        "$schema", "tools", "agents", "sandbox", "skills", "mcp", "cron", "plugins", "gateway",
    ] {
        assert!(props.contains_key(key), "missing {key}");
    }
    let defs = schema["$defs"].as_object().unwrap();
    for def in [
        "ToolsConfig",
        "AgentsConfig",
        "AgentDefaults",
        "AgentEntry",
        "AgentBody",
        "AgentToolsConfig",
        "SandboxConfig",
        "ToolPolicyConfig",
        "ProfiledPolicyConfig",
    ] {
        assert_eq!(
            defs[def]["additionalProperties"],
            Value::Bool(false),
            "{def} is not strict"
        );
    }
    assert_eq!(defs["AgentEntry"]["required"], serde_json::json!(["id"]));
    assert_eq!(
        schema["properties"]["tools"]["anyOf"][0]["$ref"],
        "#/$defs/ToolsConfig"
    );
    // Round-trips through text (what `talon config schema` prints).
    let text = serde_json::to_string_pretty(&schema).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), schema);
}
