//! The read-only `gateway` tool: redaction, path selection, schema lookup,
//! refusal of writes.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use talon_tool_catalog::Tool;
use talon_tools::{GatewayTool, REDACTED, WebToolsConfig, is_secret_key};

use super::call;

fn running_config() -> Value {
    json!({
        "gateway": { "port": 18789, "auth": { "mode": "token", "token": "gw-secret" } },
        "models": { "providers": { "openai": {
            "apiKey": "sk-live", "baseUrl": "https://api.openai.com/v1", "maxTokens": 4096
        } } },
        "channels": { "telegram": { "botToken": "123:abc", "allowFrom": ["alice"] } },
        "env": { "OPENAI_API_KEY": "sk-env", "PATH_EXTRA": "/opt/bin" },
        "tools": { "web": { "search": { "apiKey": "brave-secret", "provider": "brave" } } },
        "hooks": [{ "url": "https://hooks.example", "headers": {
            "Authorization": "Bearer h", "Cookie": "c=1", "X-Trace": "on" } }],
        "browser": { "password": { "nested": "whole object goes" }, "keyboardLayout": "us" },
        "mcp": { "servers": { "db": { "url": "postgres://admin:hunter2@db.internal:5432/app",
                                      "plain": "https://example.com/a@b" } } },
        "api_key": "snake", "client_secret": "s", "SecretRef": "x", "session_cookie": "y"
    })
}

fn schema() -> Value {
    json!({
        "type": "object",
        "$defs": {
            "Agent": { "type": "object", "properties": {
                "id": { "type": "string", "description": "Agent id." },
                "tools": { "$ref": "#/$defs/Tools" }
            }},
            "Tools": { "type": "object", "properties": {
                "profile": { "type": "string", "enum": ["minimal", "coding", "full"] }
            }},
            "Provider": { "type": "object", "properties": {
                "baseUrl": { "type": "string", "format": "uri" }
            }},
            "Node": { "type": "object", "properties": { "child": { "$ref": "#/$defs/Node" } } }
        },
        "properties": {
            "agents": { "type": "object", "properties": {
                "list": { "type": "array", "items": { "$ref": "#/$defs/Agent" } }
            }},
            "models": { "type": "object", "properties": {
                "providers": { "type": "object", "additionalProperties": { "$ref": "#/$defs/Provider" } }
            }},
            "maybe": { "anyOf": [ { "$ref": "#/$defs/Tools" }, { "type": "null" } ] },
            "tree": { "$ref": "#/$defs/Node" }
        }
    })
}

fn tool() -> GatewayTool {
    GatewayTool::new(running_config, schema())
}

#[tokio::test]
async fn config_get_redacts_every_secret_and_keeps_the_rest() {
    let out = call(&tool(), json!({ "action": "config.get" }))
        .await
        .unwrap();
    let c = &out.details["config"];
    assert_eq!(out.details["ok"], true);
    for pointer in [
        "/gateway/auth/token",
        "/models/providers/openai/apiKey",
        "/channels/telegram/botToken",
        "/env/OPENAI_API_KEY",
        "/tools/web/search/apiKey",
        "/hooks/0/headers/Authorization",
        "/hooks/0/headers/Cookie",
        "/browser/password",
        "/api_key",
        "/client_secret",
        "/SecretRef",
        "/session_cookie",
    ] {
        assert_eq!(c.pointer(pointer), Some(&json!(REDACTED)), "{pointer}");
    }
    for (pointer, kept) in [
        ("/gateway/port", json!(18789)),
        ("/gateway/auth/mode", json!("token")),
        ("/models/providers/openai/maxTokens", json!(4096)),
        (
            "/models/providers/openai/baseUrl",
            json!("https://api.openai.com/v1"),
        ),
        ("/env/PATH_EXTRA", json!("/opt/bin")),
        ("/hooks/0/headers/X-Trace", json!("on")),
        ("/browser/keyboardLayout", json!("us")),
        (
            "/mcp/servers/db/url",
            json!("postgres://admin:__REDACTED__@db.internal:5432/app"),
        ),
        ("/mcp/servers/db/plain", json!("https://example.com/a@b")),
        ("/channels/telegram/allowFrom", json!(["alice"])),
    ] {
        assert_eq!(c.pointer(pointer), Some(&kept), "{pointer}");
    }
    let text = out.text();
    for secret in [
        "gw-secret",
        "sk-live",
        "123:abc",
        "sk-env",
        "brave-secret",
        "Bearer h",
        "whole object",
    ] {
        assert!(!text.contains(secret), "{secret} leaked");
    }
}

#[test]
fn secret_key_matching_is_case_insensitive_and_word_aware() {
    for k in [
        "token",
        "TOKEN",
        "apiKey",
        "APIKEY",
        "api_key",
        "x-api-key",
        "key",
        "Keys",
        "password",
        "dbPassword",
        "authorization",
        "Set-Cookie",
        "clientSecret",
        "GITHUB_TOKEN",
    ] {
        assert!(is_secret_key(k), "{k}");
    }
    for k in [
        "maxTokens",
        "keyboard",
        "monkey",
        "port",
        "baseUrl",
        "tokenizerModel",
    ] {
        assert!(!is_secret_key(k), "{k}");
    }
}

#[tokio::test]
async fn config_get_with_a_path_returns_that_subtree_redacted() {
    let out = call(
        &tool(),
        json!({ "action": "config.get", "path": "models.providers.openai" }),
    )
    .await
    .unwrap();
    assert_eq!(out.details["path"], "models.providers.openai");
    assert_eq!(
        out.details["config"],
        json!({ "apiKey": REDACTED, "baseUrl": "https://api.openai.com/v1", "maxTokens": 4096 })
    );
    let out = call(
        &tool(),
        json!({ "action": "config.get", "path": "tools.web.search.apiKey" }),
    )
    .await
    .unwrap();
    assert_eq!(out.details["config"], json!(REDACTED));
    let out = call(
        &tool(),
        json!({ "action": "config.get", "path": "hooks[0].url" }),
    )
    .await
    .unwrap();
    assert_eq!(out.details["config"], json!("https://hooks.example"));

    let err = call(
        &tool(),
        json!({ "action": "config.get", "path": "gateway.bind" }),
    )
    .await
    .unwrap_err();
    assert_eq!(err.param(), Some("path"));
    assert_eq!(
        err.to_string(),
        "config path `gateway.bind` is not set: no `bind` in `gateway` (keys set there: port, auth)"
    );
}

#[tokio::test]
async fn the_snapshot_is_read_on_every_call() {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&calls);
    let tool = GatewayTool::new(
        move || json!({ "generation": seen.fetch_add(1, Ordering::SeqCst) }),
        json!({}),
    );
    for expected in 0..3 {
        let out = call(&tool, json!({ "action": "config.get" }))
            .await
            .unwrap();
        assert_eq!(out.details["config"]["generation"], expected);
    }
}

#[tokio::test]
async fn schema_lookup_follows_refs_items_and_additional_properties() {
    let t = tool();
    let out = call(
        &t,
        json!({ "action": "config.schema.lookup", "path": "agents.list[0].tools.profile" }),
    )
    .await
    .unwrap();
    assert_eq!(
        out.details["schema"],
        json!({ "type": "string", "enum": ["minimal", "coding", "full"] })
    );
    let out = call(
        &t,
        json!({ "action": "config.schema.lookup", "path": "agents.list.*" }),
    )
    .await
    .unwrap();
    assert_eq!(out.details["keys"], json!(["id", "tools"]));
    assert_eq!(
        out.details["schema"]["properties"]["tools"]["properties"]["profile"]["type"], "string",
        "nested $ref inlined"
    );
    let out = call(
        &t,
        json!({ "action": "config.schema.lookup", "path": "models.providers.anything.baseUrl" }),
    )
    .await
    .unwrap();
    assert_eq!(
        out.details["schema"],
        json!({ "type": "string", "format": "uri" })
    );
    let out = call(
        &t,
        json!({ "action": "config.schema.lookup", "path": "maybe.profile" }),
    )
    .await
    .unwrap();
    assert_eq!(out.details["schema"]["type"], "string");
    // A recursive type is inlined a bounded number of levels, then left as a $ref.
    let out = call(
        &t,
        json!({ "action": "config.schema.lookup", "path": "tree" }),
    )
    .await
    .unwrap();
    assert!(out.text().contains("#/$defs/Node"));

    let err = call(
        &t,
        json!({ "action": "config.schema.lookup", "path": "agents.lisst" }),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "config path `agents.lisst` not found: `lisst` is not a key of `agents` (known keys: list)"
    );
    let err = call(&t, json!({ "action": "config.schema.lookup" }))
        .await
        .unwrap_err();
    assert_eq!(err.param(), Some("path"));
}

#[tokio::test]
async fn schema_lookup_works_on_a_schemars_schema() {
    let root = serde_json::to_value(schemars::schema_for!(WebToolsConfig)).unwrap();
    let t = GatewayTool::new(|| json!({}), root);
    let out = call(
        &t,
        json!({ "action": "config.schema.lookup", "path": "fetch.ssrfAllowlist.cidrs" }),
    )
    .await
    .unwrap();
    assert_eq!(out.details["schema"]["type"], "array");
    assert_eq!(out.details["schema"]["items"]["type"], "string");
    let out = call(
        &t,
        json!({ "action": "config.schema.lookup", "path": "search.kimi" }),
    )
    .await
    .unwrap();
    assert_eq!(out.details["keys"], json!(["apiKey", "baseUrl", "model"]));
}

#[tokio::test]
async fn writes_restarts_and_gateway_overrides_are_refused() {
    let t = tool();
    for action in ["config.apply", "config.patch", "restart", "update.run"] {
        let err = call(&t, json!({ "action": action })).await.unwrap_err();
        assert!(err.is_unauthorized(), "{action}: {err:?}");
        assert!(err.to_string().contains("read-only"), "{err}");
    }
    let err = call(&t, json!({ "action": "config.delete" }))
        .await
        .unwrap_err();
    assert_eq!(err.param(), Some("action"));
    let err = call(
        &t,
        json!({ "action": "config.get", "gatewayUrl": "ws://evil:1" }),
    )
    .await
    .unwrap_err();
    assert_eq!(err.param(), Some("gatewayUrl"));
    let err = call(&t, json!({})).await.unwrap_err();
    assert_eq!(err.to_string(), "action required");
    let spec = t.spec();
    assert!(spec.owner_only);
    assert!(spec.description.contains("not available"));
    assert_eq!(
        spec.parameters["properties"]["action"]["enum"],
        json!(["config.get", "config.schema.lookup"])
    );
}
