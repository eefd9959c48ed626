use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::loop_detection::test_support::result;

fn hash(tool: &str, action: Option<&str>, result: &ToolResult) -> String {
    hash_outcome(tool, action, &LoopOutcome::Result(result))
        .unwrap()
        .result_hash
}

#[test]
fn errors_hash_the_message_and_name_missing_tools() {
    let a = hash_outcome("foo", None, &LoopOutcome::Error("unknown tool: foo")).unwrap();
    let b = hash_outcome("foo", None, &LoopOutcome::Error("unknown tool: foo")).unwrap();
    assert_eq!(a, b);
    assert!(a.result_hash.starts_with("error:"));
    assert_eq!(a.unknown_tool_name.as_deref(), Some("foo"));
    let other = hash_outcome("foo", None, &LoopOutcome::Error("timeout")).unwrap();
    assert_ne!(other.result_hash, a.result_hash);
    assert_eq!(other.unknown_tool_name, None);
}

#[test]
fn policy_blocks_hash_the_reason_and_loop_vetoes_have_no_hash() {
    let a = hash_outcome("exec", None, &LoopOutcome::Blocked("denied by policy")).unwrap();
    let b = hash_outcome("exec", None, &LoopOutcome::Blocked("denied by policy")).unwrap();
    let c = hash_outcome("exec", None, &LoopOutcome::Blocked("other reason")).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_eq!(hash_outcome("exec", None, &LoopOutcome::LoopVeto), None);

    // The detector's own blocked result, reported as a plain result, is a
    // veto too; another blocked result is hashed.
    let veto = result(
        "CRITICAL: …",
        json!({ "status": "blocked", "deniedReason": "tool-loop", "reason": "x" }),
    );
    assert_eq!(
        hash_outcome("exec", None, &LoopOutcome::Result(&veto)),
        None
    );
    let plugin_block = result(
        "no",
        json!({ "status": "blocked", "deniedReason": "plugin-before-tool-call" }),
    );
    assert!(hash_outcome("exec", None, &LoopOutcome::Result(&plugin_block)).is_some());
}

#[test]
fn generic_results_hash_details_and_trimmed_text() {
    let a = result("hello\n", json!({ "n": 1 }));
    let b = result("hello", json!({ "n": 1 }));
    let c = result("hello", json!({ "n": 2 }));
    let d = result("bye", json!({ "n": 1 }));
    assert_eq!(hash("read", None, &a), hash("read", None, &b));
    assert_ne!(hash("read", None, &b), hash("read", None, &c));
    assert_ne!(hash("read", None, &b), hash("read", None, &d));
    // Details that are not an object count as empty.
    let e = result("hello", json!("ignored"));
    let f = result("hello", json!(null));
    assert_eq!(hash("read", None, &e), hash("read", None, &f));
}

#[test]
fn exec_results_hash_status_specific_fields() {
    // A running command: status and tail only, not the volatile text.
    let running_a = result(
        "pid 1, 3s",
        json!({ "status": "running", "tail": "building", "pid": 1 }),
    );
    let running_b = result(
        "pid 2, 9s",
        json!({ "status": "running", "tail": "building", "pid": 2 }),
    );
    let running_c = result(
        "pid 2, 9s",
        json!({ "status": "running", "tail": "linking" }),
    );
    assert_eq!(
        hash("exec", None, &running_a),
        hash("exec", None, &running_b)
    );
    assert_ne!(
        hash("exec", None, &running_b),
        hash("exec", None, &running_c)
    );

    // A finished command: status, exit code, timeout and aggregated output
    // (falling back to the text), but not the duration.
    let done_a = result(
        "out",
        json!({ "status": "completed", "exitCode": 0, "aggregated": "ok", "durationMs": 5 }),
    );
    let done_b = result(
        "other",
        json!({ "status": "completed", "exitCode": 0, "aggregated": "ok", "durationMs": 9 }),
    );
    let done_c = result(
        "out",
        json!({ "status": "failed", "exitCode": 1, "aggregated": "ok" }),
    );
    assert_eq!(hash("exec", None, &done_a), hash("exec", None, &done_b));
    assert_ne!(hash("exec", None, &done_a), hash("exec", None, &done_c));
    let text_a = result(
        "same",
        json!({ "status": "completed", "exitCode": 0, "aggregated": "  " }),
    );
    let text_b = result(
        "same",
        json!({ "status": "completed", "exitCode": 0, "durationMs": 1 }),
    );
    let text_c = result("changed", json!({ "status": "completed", "exitCode": 0 }));
    assert_eq!(hash("exec", None, &text_a), hash("exec", None, &text_b));
    assert_ne!(hash("exec", None, &text_b), hash("exec", None, &text_c));

    // Approval states: reason, host, command, warning text.
    let pending_a = result(
        "a",
        json!({ "status": "approval-pending", "command": "rm x", "approvalId": "1" }),
    );
    let pending_b = result(
        "b",
        json!({ "status": "approval-pending", "command": "rm x", "approvalId": "2" }),
    );
    assert_eq!(
        hash("exec", None, &pending_a),
        hash("exec", None, &pending_b)
    );

    // An unknown status falls back to the generic digest.
    let odd_a = result("a", json!({ "status": "weird" }));
    let odd_b = result("b", json!({ "status": "weird" }));
    assert_ne!(hash("exec", None, &odd_a), hash("exec", None, &odd_b));
}

#[test]
fn process_poll_and_log_hash_selected_fields() {
    let poll_a = result(
        "out",
        json!({ "status": "running", "aggregated": "x", "elapsedMs": 1 }),
    );
    let poll_b = result(
        "out",
        json!({ "status": "running", "aggregated": "x", "elapsedMs": 2 }),
    );
    let poll_c = result(
        "out",
        json!({ "status": "exited", "aggregated": "x", "exitCode": 0 }),
    );
    assert_eq!(
        hash("process", Some("poll"), &poll_a),
        hash("process", Some("poll"), &poll_b)
    );
    assert_ne!(
        hash("process", Some("poll"), &poll_a),
        hash("process", Some("poll"), &poll_c)
    );
    // Other process actions use the generic digest, which sees `elapsedMs`.
    assert_ne!(
        hash("process", Some("list"), &poll_a),
        hash("process", Some("list"), &poll_b)
    );

    let log_a = result(
        "l",
        json!({ "status": "running", "totalLines": 10, "offset": 0 }),
    );
    let log_b = result(
        "l",
        json!({ "status": "running", "totalLines": 10, "offset": 5 }),
    );
    let log_c = result("l", json!({ "status": "running", "totalLines": 11 }));
    assert_eq!(
        hash("process", Some("log"), &log_a),
        hash("process", Some("log"), &log_b)
    );
    assert_ne!(
        hash("process", Some("log"), &log_a),
        hash("process", Some("log"), &log_c)
    );
}

#[test]
fn send_like_results_ignore_volatile_ids() {
    let sent = |message_id: &str, ts: u64, msg_id: &str| {
        result(
            &format!("sent {message_id}"),
            json!({
                "ok": true,
                "channel": "telegram",
                "messageId": message_id,
                "ts": ts,
                "receipt": { "deliveredAt": ts },
                "message": {
                    "id": msg_id,
                    "text": "hi",
                    "direction": "outbound",
                    "conversation": { "id": "chat-1" },
                    "createdAt": ts,
                },
                "route": { "id": "route-1" },
            }),
        )
    };
    let a = sent("m1", 1, "x1");
    let b = sent("m2", 2, "x2");
    assert_eq!(
        hash("message", Some("send"), &a),
        hash("message", Some("send"), &b)
    );
    assert_eq!(
        hash("sessions_send", None, &a),
        hash("sessions_send", None, &b)
    );
    assert_eq!(
        hash("message", Some("thread-reply"), &a),
        hash("message", Some("thread-reply"), &b)
    );
    // Non-send message actions and other tools keep full hashing.
    assert_ne!(
        hash("message", Some("read"), &a),
        hash("message", Some("read"), &b)
    );
    assert_ne!(hash("web_fetch", None, &a), hash("web_fetch", None, &b));

    // Stable ids (a route, a conversation) still count.
    let mut c = sent("m3", 3, "x3");
    c.details["route"]["id"] = json!("route-2");
    assert_ne!(
        hash("message", Some("send"), &a),
        hash("message", Some("send"), &c)
    );
}

#[test]
fn strips_message_object_ids_only_on_message_objects() {
    let value = json!({
        "id": "top",
        "items": [
            { "id": "m1", "text": "hi", "senderId": "u1", "messageIds": ["a"] },
            { "id": "keep", "text": "no sender fields" },
        ],
        "conversation": { "id": "c1" },
    });
    assert_eq!(
        strip_volatile_send_ids(&value),
        json!({
            "id": "top",
            "items": [
                { "text": "hi", "senderId": "u1" },
                { "id": "keep", "text": "no sender fields" },
            ],
            "conversation": { "id": "c1" },
        })
    );
}
