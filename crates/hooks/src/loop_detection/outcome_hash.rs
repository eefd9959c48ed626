//! Outcome hashing: what a call returned, reduced to a digest that stays
//! the same when nothing changed and differs when the call made progress.

use serde_json::{Map, Value, json};
use talon_tool_catalog::ToolResult;

use super::hashing::{extract_unknown_tool_name, is_known_poll_call};
use talon_canonical_json::hash_json;

/// How a recorded call ended, as reported to
/// [`LoopDetector::record_outcome`](super::LoopDetector::record_outcome).
#[derive(Debug, Clone, Copy)]
pub enum LoopOutcome<'a> {
    /// The tool ran and returned this result.
    Result(&'a ToolResult),
    /// The tool failed with this error message. Messages naming a missing
    /// tool ("unknown tool: X", "tool X not found", "tool X is not
    /// available") also feed the unknown-tool detector.
    Error(&'a str),
    /// A trusted policy, plugin hook or approval (not the loop detector)
    /// blocked the call, with this reason. Repeated identical denials hash
    /// the same, so they still count as no progress.
    Blocked(&'a str),
    /// The loop detector itself vetoed the call (a critical verdict). The
    /// veto counts as no progress: it repeats the previous outcome of the
    /// same call, so the streak keeps growing towards the circuit breaker.
    LoopVeto,
}

/// The digest of one outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OutcomeDigest {
    /// The result hash stored on the record.
    pub(crate) result_hash: String,
    /// The missing tool named by an error, if any.
    pub(crate) unknown_tool_name: Option<String>,
}

/// The `deniedReason` the gate stamps on the loop detector's own veto.
const LOOP_VETO_DENIED_REASON: &str = "tool-loop";

/// `message` actions that deliver something and return fresh ids.
const SEND_LIKE_MESSAGE_ACTIONS: &[&str] = &[
    "send",
    "broadcast",
    "reply",
    "thread-reply",
    "sendWithEffect",
    "sendAttachment",
    "upload-file",
    "sticker",
    "poll",
];

/// Per-delivery ids and timestamps stripped from send-like results before
/// hashing, at any depth.
const VOLATILE_SEND_RESULT_KEYS: &[&str] = &[
    "messageId",
    "message_id",
    "messageIds",
    "platformMessageId",
    "platformMessageIds",
    "fileId",
    "file_id",
    "fileKey",
    "pollId",
    "poll_id",
    "receipt",
    "runId",
    "idempotencyKey",
    "ts",
    "timestamp",
    "sentAt",
    "deliveredAt",
    "createdAt",
];

/// The digest of `outcome` for a call of `tool_name` whose `action`
/// parameter was `action`. `None` for the loop detector's own veto, whose
/// hash the caller derives from the call's previous outcome.
pub(crate) fn hash_outcome(
    tool_name: &str,
    action: Option<&str>,
    outcome: &LoopOutcome<'_>,
) -> Option<OutcomeDigest> {
    match outcome {
        LoopOutcome::LoopVeto => None,
        LoopOutcome::Error(message) => Some(OutcomeDigest {
            result_hash: format!("error:{}", hash_json(&Value::String((*message).to_owned()))),
            unknown_tool_name: extract_unknown_tool_name(message),
        }),
        LoopOutcome::Blocked(reason) => Some(OutcomeDigest {
            result_hash: format!(
                "blocked:{}",
                hash_json(&Value::String((*reason).to_owned()))
            ),
            unknown_tool_name: None,
        }),
        LoopOutcome::Result(result) => {
            hash_result(tool_name, action, result).map(|result_hash| OutcomeDigest {
                result_hash,
                unknown_tool_name: None,
            })
        }
    }
}

fn hash_result(tool_name: &str, action: Option<&str>, result: &ToolResult) -> Option<String> {
    let empty = Map::new();
    let details = result.details.as_object().unwrap_or(&empty);
    // A blocked result carrying the loop detector's own denial is a veto,
    // even when the host reports it as an ordinary result.
    if is_loop_veto(details) {
        return None;
    }
    let text = result.text();
    let text = text.trim();
    if tool_name == "exec"
        && let Some(hash) = hash_exec(details, text)
    {
        return Some(hash);
    }
    if tool_name == "process" && is_known_poll_call(tool_name, action) {
        return Some(hash_process_poll(action, details, text));
    }
    if is_send_like(tool_name, action) {
        return Some(hash_json(&strip_volatile_send_ids(&Value::Object(
            details.clone(),
        ))));
    }
    Some(hash_json(&json!({ "details": details, "text": text })))
}

fn is_loop_veto(details: &Map<String, Value>) -> bool {
    details.get("status").and_then(Value::as_str) == Some("blocked")
        && details.get("deniedReason").and_then(Value::as_str) == Some(LOOP_VETO_DENIED_REASON)
}

fn str_field<'a>(details: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    details.get(key).and_then(Value::as_str)
}

fn field_or_null(details: &Map<String, Value>, key: &str) -> Value {
    details.get(key).cloned().unwrap_or(Value::Null)
}

/// Status-specific digest of an `exec` result; `None` for an unknown or
/// missing status (the generic digest applies then).
fn hash_exec(details: &Map<String, Value>, text: &str) -> Option<String> {
    let status = str_field(details, "status")?;
    let digest = match status {
        "running" => json!({
            "status": status,
            "tail": str_field(details, "tail").unwrap_or(""),
        }),
        "completed" | "failed" => {
            let aggregated = str_field(details, "aggregated")
                .map(str::trim)
                .filter(|s| !s.is_empty());
            json!({
                "status": status,
                "exitCode": details.get("exitCode").filter(|v| v.is_number()).cloned(),
                "timedOut": details.get("timedOut") == Some(&Value::Bool(true)),
                "output": aggregated.unwrap_or(text),
            })
        }
        "approval-pending" | "approval-unavailable" => json!({
            "status": status,
            "reason": str_field(details, "reason"),
            "host": str_field(details, "host"),
            "command": str_field(details, "command").unwrap_or(""),
            "warningText": str_field(details, "warningText").unwrap_or(""),
        }),
        _ => return None,
    };
    Some(hash_json(&digest))
}

/// Digest of the fields of a `process` poll or log result that show
/// progress.
fn hash_process_poll(action: Option<&str>, details: &Map<String, Value>, text: &str) -> String {
    let digest = if action == Some("log") {
        json!({
            "action": "log",
            "status": field_or_null(details, "status"),
            "totalLines": field_or_null(details, "totalLines"),
            "totalChars": field_or_null(details, "totalChars"),
            "truncated": field_or_null(details, "truncated"),
            "exitCode": field_or_null(details, "exitCode"),
            "exitSignal": field_or_null(details, "exitSignal"),
            "text": text,
        })
    } else {
        json!({
            "action": "poll",
            "status": field_or_null(details, "status"),
            "exitCode": field_or_null(details, "exitCode"),
            "exitSignal": field_or_null(details, "exitSignal"),
            "aggregated": field_or_null(details, "aggregated"),
            "text": text,
        })
    };
    hash_json(&digest)
}

/// Whether the call delivers a message, so its result carries fresh
/// per-delivery ids: `sessions_send`, or `message` with a send-like
/// action. (OpenClaw also treats channel-plugin send tools this way;
/// Talon has no channel plugins here.)
fn is_send_like(tool_name: &str, action: Option<&str>) -> bool {
    match tool_name {
        "sessions_send" => true,
        "message" => action.is_some_and(|a| SEND_LIKE_MESSAGE_ACTIONS.contains(&a)),
        _ => false,
    }
}

/// Whether `object` is a delivered message: a string `id` and `text` plus
/// a direction, sender, account or conversation. Only such an object's own
/// `id` is volatile; an `id` elsewhere (a route, a conversation) is stable.
fn is_message_object(object: &Map<String, Value>) -> bool {
    let is_str = |key: &str| object.get(key).is_some_and(Value::is_string);
    is_str("id")
        && is_str("text")
        && (is_str("direction")
            || is_str("senderId")
            || is_str("accountId")
            || object.get("conversation").is_some_and(Value::is_object))
}

/// `value` without the volatile delivery ids, at any depth.
pub(crate) fn strip_volatile_send_ids(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(strip_volatile_send_ids).collect()),
        Value::Object(object) => {
            let drop_id = is_message_object(object);
            let stripped = object
                .iter()
                .filter(|(key, _)| {
                    let volatile = VOLATILE_SEND_RESULT_KEYS.contains(&key.as_str())
                        || (drop_id && key.as_str() == "id");
                    !volatile
                })
                .map(|(key, nested)| (key.clone(), strip_volatile_send_ids(nested)))
                .collect();
            Value::Object(stripped)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
#[path = "outcome_hash_tests.rs"]
mod tests;
