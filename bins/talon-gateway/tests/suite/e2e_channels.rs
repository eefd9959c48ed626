//! End-to-end: an imported OpenClaw `channels` section's tool policies
//! hold for the sessions whose channel, group and sender match, through the
//! gateway's one call path.

use super::support;

use serde_json::{Value, json};
use support::{Gw, GwExt as _};

fn tools(v: &Value) -> Vec<String> {
    serde_json::from_value(v["tools"].clone()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_groups_deny_holds_for_that_groups_sessions_only() {
    let config = json!({
        "channels": {"telegram": {
            "botToken": "123:abc",
            "groups": {"-100": {
                "requireMention": true,
                "tools": {"deny": ["exec"]},
                "toolsBySender": {"id:owner": {}}
            }}
        }}
    })
    .to_string();
    let gw = Gw::start(&config);
    let mut ws = gw.ws().await;

    // The group's session: exec is not in its table and a call is blocked,
    // naming the channel key.
    let s = ws
        .ok(
            "sessions.create",
            json!({"sessionKey": "g100", "channel": "telegram", "group": "-100", "sender": "alice"}),
        )
        .await;
    assert!(!tools(&s).contains(&"exec".to_owned()), "{s}");
    let blocked = ws
        .ok(
            "tools.invoke",
            json!({"sessionKey": "g100", "toolName": "exec", "params": {"command": "echo never"}}),
        )
        .await;
    assert_eq!(blocked["status"], json!("blocked"), "{blocked}");
    assert_eq!(blocked["deniedReason"], json!("tool-policy"));
    assert_eq!(
        blocked["configKey"],
        json!("channels.telegram.groups.-100.tools.deny")
    );
    assert_eq!(blocked["layer"], json!("group"));
    let listed = ws
        .ok("tools.list", json!({"sessionKey": "g100", "audit": true}))
        .await;
    let group = listed["audit"]["layers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["id"] == "group")
        .unwrap()
        .clone();
    assert_eq!(
        group["label"],
        json!("group tools.allow (channels.telegram.groups.-100.tools)")
    );

    // Another group of the same channel, and the same group id on another
    // channel, run exec.
    for (key, channel, group) in [("g200", "telegram", "-200"), ("d100", "discord", "-100")] {
        let s = ws
            .ok(
                "sessions.create",
                json!({"sessionKey": key, "channel": channel, "group": group}),
            )
            .await;
        assert!(tools(&s).contains(&"exec".to_owned()), "{s}");
        let ran = ws
            .ok(
                "tools.invoke",
                json!({"sessionKey": key, "toolName": "exec", "params": {"command": "echo ran"}}),
            )
            .await;
        assert_eq!(ran["status"], json!("ok"), "{ran}");
    }

    // The group's exempted sender keeps exec there.
    let s = ws
        .ok(
            "sessions.create",
            json!({"sessionKey": "g100-owner", "channel": "telegram", "group": "-100", "sender": "Owner"}),
        )
        .await;
    assert!(tools(&s).contains(&"exec".to_owned()), "{s}");

    // A session key naming the group conversation carries its policy
    // without params, and cannot be opened as another group.
    let key = "agent:main:telegram:group:-100";
    let s = ws.ok("sessions.create", json!({"sessionKey": key})).await;
    assert_eq!(s["session"]["params"]["group"], json!("-100"), "{s}");
    assert!(!tools(&s).contains(&"exec".to_owned()), "{s}");
    let refused = ws
        .call(
            "sessions.create",
            json!({"sessionKey": "agent:main:telegram:group:-100:topic:1", "group": "-200"}),
        )
        .await;
    assert_eq!(
        refused["error"]["data"]["errorCode"],
        json!("session.group_mismatch"),
        "{refused}"
    );
}
