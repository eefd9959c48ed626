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
        "$schema",
        "tools",
        "agents",
        "sandbox",
        "skills",
        "mcp",
        "cron",
        "plugins",
        "gateway",
        "acceptUnenforced",
        "channels",
        "commands",
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

#[test]
fn the_mcp_section_schema_is_typed_and_its_refs_resolve() {
    let schema = talon_config::config_schema();
    let mcp = deref(&schema, &schema["properties"]["mcp"]);
    assert_eq!(mcp["additionalProperties"], false, "{mcp}");
    let server_ref = mcp["properties"]["servers"]["additionalProperties"]["$ref"]
        .as_str()
        .or_else(|| mcp["properties"]["servers"]["$ref"].as_str())
        .unwrap_or_else(|| panic!("{mcp}"));
    let pointer = server_ref.trim_start_matches('#');
    let target = schema
        .pointer(pointer)
        .unwrap_or_else(|| panic!("{server_ref} does not resolve"));
    let resolved = if target["additionalProperties"]["$ref"].is_string() {
        schema
            .pointer(
                target["additionalProperties"]["$ref"]
                    .as_str()
                    .unwrap()
                    .trim_start_matches('#'),
            )
            .unwrap()
    } else {
        target
    };
    let props = resolved["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("{resolved}"));
    for key in [
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "headers",
        "enabled",
        "timeoutMs",
        "supportsParallelToolCalls",
        "maxOutputBytes",
        "allowPrivateNetwork",
    ] {
        assert!(props.contains_key(key), "{key} missing: {resolved}");
    }
}

#[test]
fn agents_mcp_sections_are_typed_in_the_schema() {
    let schema = talon_config::config_schema();
    for def in ["AgentEntry", "AgentBody"] {
        let mcp = deref(&schema, &schema["$defs"][def]["properties"]["mcp"]);
        assert!(mcp["properties"]["servers"].is_object(), "{def}: {mcp}");
    }
}

/// The schema an `Option<T>` property stands for: its `$ref` (directly or
/// in the non-null `anyOf` branch) resolved against the root.
fn deref<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    let reference = node["$ref"].as_str().or_else(|| {
        node["anyOf"]
            .as_array()
            .and_then(|b| b.iter().find_map(|b| b["$ref"].as_str()))
    });
    match reference {
        Some(r) => root
            .pointer(r.trim_start_matches('#'))
            .unwrap_or_else(|| panic!("{r} does not resolve")),
        None => node,
    }
}

#[test]
fn every_section_talon_reads_is_typed_in_the_schema() {
    // No section a consumer reads is free-form JSON any more: each has
    // properties (and, except `gateway`, which accepts OpenClaw's other
    // keys, refuses unknown ones).
    let schema = talon_config::config_schema();
    for key in ["skills", "mcp", "cron", "gateway", "session", "tools"] {
        let section = deref(&schema, &schema["properties"][key]);
        assert!(section["properties"].is_object(), "{key}: {section}");
    }
    let tools = deref(&schema, &schema["properties"]["tools"]);
    for key in ["fs", "exec", "web", "loopDetection", "hooks"] {
        let sub = deref(&schema, &tools["properties"][key]);
        assert!(sub["properties"].is_object(), "tools.{key}: {sub}");
        assert_eq!(sub["additionalProperties"], false, "tools.{key}");
    }
}
