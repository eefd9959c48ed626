//! End-to-end: who the caller is, decided by the gateway. Token
//! identities and scopes, `senderIsOwner` resolved server-side (a claim the
//! token lacks is refused; an owner-listed sender relayed by a runner is
//! the owner), the caller's identity in the hook context, hashed tokens,
//! rotation without restart.

use super::support;

use serde_json::{Value, json};
use support::{Gw, GwExt as _, Ws, http};

const RUNNER: &str = "runner-token-0123456789";
const OWNER: &str = "owner-token-0123456789";

fn sha256_hex(token: &str) -> String {
    talon_gateway_core::token_hash(token)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn tool_names(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect()
}

/// A runner token (`bot`), an owner token given only by its hash (`boss`),
/// owner lists in both places, and a command hook that keeps what it saw
/// of every `cron` call.
fn config(dir: &std::path::Path) -> String {
    let seen = dir.join("hook-seen.json");
    json!({
        "commands": {"ownerAllowFrom": ["discord:43"], "native": "auto"},
        "tools": {"hooks": {"beforeToolCall": [{
            "id": "seen",
            "matcher": ["cron"],
            "command": ["/bin/sh", "-c", format!("cat > {}", seen.display())]
        }]}},
        "gateway": {"auth": {
            "ownerAllowFrom": ["telegram:42"],
            "tokens": [
                {"id": "bot", "token": RUNNER, "scope": "runner"},
                {"id": "boss", "tokenSha256": sha256_hex(OWNER), "scope": "owner"}
            ]
        }}
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runner_cannot_claim_owner_but_a_listed_sender_it_relays_is_the_owner() {
    let dir = tempfile::tempdir().unwrap();
    let text = config(dir.path());
    let gw = Gw::start_in(dir, &text);
    let mut runner = Ws::connect(gw.addr, Some(RUNNER)).await.unwrap();

    // The claim is refused, naming the token and what would make it true.
    let refused = runner
        .call(
            "sessions.create",
            json!({"sessionKey": "claim", "sender": "telegram:7", "senderIsOwner": true}),
        )
        .await;
    assert_eq!(refused["error"]["code"], json!(-32001), "{refused}");
    assert_eq!(
        refused["error"]["data"]["errorCode"],
        json!("session.owner_claim_refused")
    );
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("token `bot`"), "{message}");
    assert!(message.contains("ownerAllowFrom"), "{message}");
    let open = runner.ok("sessions.list", json!({})).await;
    assert!(
        !open["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["sessionKey"] == "claim"),
        "{open}"
    );

    // Without the claim: a non-owner session, no owner-only tools.
    let plain = runner
        .ok(
            "sessions.create",
            json!({"sessionKey": "stranger", "sender": "telegram:7"}),
        )
        .await;
    assert_eq!(plain["session"]["params"]["senderIsOwner"], json!(false));
    let tools = tool_names(&plain["tools"]);
    assert!(!tools.contains(&"cron".to_owned()), "{tools:?}");
    assert!(tools.contains(&"session_status".to_owned()), "{tools:?}");
    let r = runner
        .ok(
            "tools.invoke",
            json!({"sessionKey": "stranger", "toolName": "cron", "params": {"action": "list"}}),
        )
        .await;
    assert_ne!(r["status"], json!("ok"), "{r}");

    // A listed sender relayed by the runner is the owner (both lists count,
    // case-insensitively), and its hooks see who asked.
    for (key, sender) in [("friend", "Telegram:42"), ("friend2", "discord:43")] {
        let owner = runner
            .ok(
                "sessions.create",
                json!({"sessionKey": key, "sender": sender, "channel": "telegram", "group": "g-1"}),
            )
            .await;
        assert_eq!(owner["session"]["params"]["senderIsOwner"], json!(true));
        assert!(tool_names(&owner["tools"]).contains(&"cron".to_owned()));
    }
    let r = runner
        .ok(
            "tools.invoke",
            json!({"sessionKey": "friend", "toolName": "cron", "params": {"action": "list"}}),
        )
        .await;
    assert_eq!(r["status"], json!("ok"), "{r}");
    let seen: Value = serde_json::from_str(
        &std::fs::read_to_string(gw.dir.path().join("hook-seen.json")).unwrap(),
    )
    .unwrap();
    let ctx = &seen["context"];
    assert_eq!(ctx["agentId"], json!("main"), "{seen}");
    assert_eq!(ctx["sessionKey"], json!("friend"));
    assert_eq!(ctx["messageProvider"], json!("telegram"));
    assert_eq!(ctx["channelId"], json!("g-1"));
    assert_eq!(ctx["requester"]["accountId"], json!("bot"));
    assert_eq!(ctx["requester"]["scope"], json!("runner"));
    assert_eq!(ctx["requester"]["senderId"], json!("Telegram:42"));
    assert_eq!(ctx["requester"]["senderIsOwner"], json!(true));
    assert_eq!(ctx["requester"]["channel"], json!("telegram"));

    // A session several callers share (an agent's main session, or one the
    // owner opened) still holds the owner-only tools; the runner is refused
    // them per call, the owner is not.
    let mut boss = Ws::connect(gw.addr, Some(OWNER)).await.unwrap();
    boss.ok("sessions.create", json!({"sessionKey": "boss-s"}))
        .await;
    for key in ["main", "boss-s"] {
        let denied = runner
            .call(
                "tools.invoke",
                json!({"sessionKey": key, "toolName": "cron", "params": {"action": "list"}}),
            )
            .await;
        assert_eq!(denied["error"]["code"], json!(-32001), "{key}: {denied}");
        assert_eq!(
            denied["error"]["data"]["errorCode"],
            json!("tool.owner_only")
        );
        let ok = boss
            .ok(
                "tools.invoke",
                json!({"sessionKey": key, "toolName": "cron", "params": {"action": "list"}}),
            )
            .await;
        assert_eq!(ok["status"], json!("ok"), "{key}: {ok}");
    }
    // Non-owner-only tools stay usable by the runner in shared sessions.
    let status = runner
        .ok(
            "tools.invoke",
            json!({"sessionKey": "boss-s", "toolName": "session_status", "params": {}}),
        )
        .await;
    assert_eq!(status["status"], json!("ok"), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hashed_token_authenticates_and_other_texts_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let text = config(dir.path());
    let gw = Gw::start_in(dir, &text);
    // The owner's token is only in the config as its hash: the plain text
    // authenticates, as the owner.
    let mut boss = Ws::connect(gw.addr, Some(OWNER)).await.unwrap();
    let s = boss.ok("sessions.create", json!({})).await;
    assert_eq!(s["session"]["params"]["senderIsOwner"], json!(true));
    assert!(tool_names(&s["tools"]).contains(&"cron".to_owned()));
    // Owner is not operator: administration is refused, naming the token.
    let v = boss.call("gateway.reload", json!({})).await;
    assert_eq!(v["error"]["code"], json!(-32001), "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("token `boss` has owner"),
        "{v}"
    );
    // Neither the hash itself nor another token's text (a near miss) is a
    // token.
    for wrong in [
        sha256_hex(OWNER),
        "owner-token-0123456788".to_owned(),
        format!("{OWNER}x"),
    ] {
        assert!(
            Ws::connect(gw.addr, Some(&wrong)).await.is_err(),
            "{wrong} was accepted"
        );
        let (status, _) = http(gw.addr, "GET", "/metrics", Some(&wrong), None).unwrap();
        assert_eq!(status, 401, "{wrong}");
    }
    // The plain-text runner token still works, as a runner.
    let mut runner = Ws::connect(gw.addr, Some(RUNNER)).await.unwrap();
    let s = runner.ok("sessions.create", json!({})).await;
    assert_eq!(s["session"]["params"]["senderIsOwner"], json!(false));
    // Nothing of either token is logged.
    let log = gw.log_text();
    assert!(!log.contains(OWNER) && !log.contains(RUNNER), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotating_a_hashed_token_refuses_the_old_one_without_a_restart() {
    let first = "first-token-0123456789";
    let second = "second-token-0123456789";
    let with = |token: &str, scope: &str| {
        json!({"gateway": {"auth": {"tokens": [
            {"id": "ci", "tokenSha256": sha256_hex(token), "scope": scope}
        ]}}})
        .to_string()
    };
    let gw = Gw::start(&with(first, "runner"));
    let mut op = gw.ws().await;
    let mut old = Ws::connect(gw.addr, Some(first)).await.unwrap();
    let s = old.ok("sessions.create", json!({})).await;
    assert_eq!(s["session"]["params"]["senderIsOwner"], json!(false));

    // Same token, wider scope: the open connection is re-identified on its
    // next request (a reload is not a reconnect).
    std::fs::write(&gw.config, with(first, "owner")).unwrap();
    let ev = op.notification("config.reloaded").await;
    assert_eq!(ev["params"]["ok"], json!(true), "{ev}");
    let s = old.ok("sessions.create", json!({})).await;
    assert_eq!(s["session"]["params"]["senderIsOwner"], json!(true));

    // Rotation: the new hash replaces the old one.
    std::fs::write(&gw.config, with(second, "runner")).unwrap();
    let ev = op.notification("config.reloaded").await;
    assert_eq!(ev["params"]["ok"], json!(true), "{ev}");
    let v = old.call("health", json!({})).await;
    assert_eq!(v["error"]["code"], json!(-32004), "{v}");
    assert!(old.next_frame().await.is_none(), "the connection is closed");
    assert!(Ws::connect(gw.addr, Some(first)).await.is_err());
    let mut new = Ws::connect(gw.addr, Some(second)).await.unwrap();
    let h = new.ok("health", json!({})).await;
    assert_eq!(h["ok"], json!(true));
}

/// In a session shared between tokens, each call's hooks see the token
/// that made the call, not the one that opened the session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_see_the_caller_of_each_call_in_a_shared_session() {
    let dir = tempfile::tempdir().unwrap();
    let text = config(dir.path());
    let gw = Gw::start_in(dir, &text);
    let seen_path = gw.dir.path().join("hook-seen.json");
    let mut runner = Ws::connect(gw.addr, Some(RUNNER)).await.unwrap();
    let mut boss = Ws::connect(gw.addr, Some(OWNER)).await.unwrap();
    runner
        .ok(
            "sessions.create",
            json!({"sessionKey": "shared", "sender": "telegram:42", "channel": "telegram", "roleIds": ["mods", "1234"]}),
        )
        .await;
    // Role ids are checked like every relayed field: a bad one is refused
    // and opens nothing.
    for bad in [json!(["ok", ""]), json!(["a\u{7}b"]), json!(vec!["r"; 65])] {
        let err = runner
            .call(
                "sessions.create",
                json!({"sessionKey": "bad-roles", "roleIds": bad}),
            )
            .await;
        assert_eq!(err["error"]["data"]["param"], json!("roleIds"), "{err}");
    }
    let cron = json!({"sessionKey": "shared", "toolName": "cron", "params": {"action": "list"}});
    for (by_owner, account, scope) in [
        (true, "boss", "owner"),
        (false, "bot", "runner"),
        (true, "boss", "owner"),
    ] {
        let ws = if by_owner { &mut boss } else { &mut runner };
        let r = ws.ok("tools.invoke", cron.clone()).await;
        assert_eq!(r["status"], json!("ok"), "{r}");
        let seen: Value =
            serde_json::from_str(&std::fs::read_to_string(&seen_path).unwrap()).unwrap();
        let requester = &seen["context"]["requester"];
        assert_eq!(requester["accountId"], json!(account), "{seen}");
        assert_eq!(requester["scope"], json!(scope), "{seen}");
        assert_eq!(requester["senderId"], json!("telegram:42"), "{seen}");
        assert_eq!(requester["senderIsOwner"], json!(true), "{seen}");
        assert_eq!(requester["roleIds"], json!(["mods", "1234"]), "{seen}");
    }
}
