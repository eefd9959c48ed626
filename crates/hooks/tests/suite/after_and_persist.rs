//! after_tool_call (observe only), tool_result_persist and
//! before_message_write.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use talon_hooks::{
    AfterToolCallEvent, AfterToolCallHandler, BeforeMessageWriteHandler, HookContext, Hooks,
    MAX_PERSISTED_DETAILS_BYTES, MessageWrite, Registration, ToolResultMessage,
    ToolResultPersistHandler, WriteDecision,
};
use talon_tool_catalog::{ContentBlock, text_result};

use super::support::{ctx, params};

struct Observer {
    delay: Duration,
    fail: bool,
    log: Arc<Mutex<Vec<AfterToolCallEvent>>>,
}

#[async_trait::async_trait]
impl AfterToolCallHandler for Observer {
    async fn after_tool_call(
        &self,
        event: &AfterToolCallEvent,
        _ctx: &HookContext,
    ) -> Result<(), talon_hooks::HookError> {
        tokio::time::sleep(self.delay).await;
        if self.fail {
            panic!("observer bug");
        }
        self.log.lock().unwrap().push(event.clone());
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn observers_run_in_parallel_see_redacted_data_and_failures_are_ignored() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut hooks = Hooks::new();
    for (id, fail) in [("a", false), ("b", true), ("c", false)] {
        hooks.on_after_tool_call(
            Registration::new(id),
            Arc::new(Observer {
                delay: Duration::from_millis(500),
                fail,
                log: Arc::clone(&log),
            }),
        );
    }
    let p = params(
        json!({"command": "curl -H 'Authorization: Bearer sk-secret' x", "env": {"TOKEN": "abc"}}),
    );
    let result = text_result("x".repeat(10_000));
    let event =
        AfterToolCallEvent::new("exec", "c1", &p, Duration::from_millis(42)).with_result(&result);
    let started = tokio::time::Instant::now();
    let tasks = hooks.fire_after_tool_call(event, &ctx());
    assert_eq!(tasks.len(), 3);
    tasks.join().await;
    assert!(
        started.elapsed() < Duration::from_millis(1_000),
        "observers ran one after another"
    );
    let seen = log.lock().unwrap().clone();
    assert_eq!(
        seen.len(),
        2,
        "the panicking observer must not stop the others"
    );
    let text = serde_json::to_string(&seen[0]).unwrap();
    assert!(
        !text.contains("sk-secret") && !text.contains("abc"),
        "{text}"
    );
    assert_eq!(seen[0].duration_ms, 42);
    assert_eq!(
        seen[0].result.as_ref().unwrap()["content"][0]["truncatedChars"],
        6_000
    );
}

struct Redact;
impl ToolResultPersistHandler for Redact {
    fn tool_result_persist(&self, message: &ToolResultMessage) -> Option<ToolResultMessage> {
        let mut m = message.clone();
        m.content = vec![ContentBlock::Text {
            text: message_text(message).replace("hunter2", "[redacted]"),
        }];
        Some(m)
    }
}

struct Suffix;
impl ToolResultPersistHandler for Suffix {
    fn tool_result_persist(&self, message: &ToolResultMessage) -> Option<ToolResultMessage> {
        let mut m = message.clone();
        m.content = vec![ContentBlock::Text {
            text: format!("{} (seen)", message_text(message)),
        }];
        Some(m)
    }
}

struct PersistPanics;
impl ToolResultPersistHandler for PersistPanics {
    fn tool_result_persist(&self, _message: &ToolResultMessage) -> Option<ToolResultMessage> {
        panic!("bug")
    }
}

fn message_text(m: &ToolResultMessage) -> String {
    m.content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.clone()),
            ContentBlock::Image { .. } => None,
        })
        .collect()
}

fn message(details: Value) -> ToolResultMessage {
    ToolResultMessage {
        tool_call_id: "c1".into(),
        tool_name: "exec".into(),
        content: vec![ContentBlock::Text {
            text: "password hunter2".into(),
        }],
        details,
        is_error: false,
    }
}

#[test]
fn persist_handlers_chain_and_details_are_bounded() {
    let mut hooks = Hooks::new();
    hooks.on_tool_result_persist(Registration::new("redact").priority(10), Arc::new(Redact));
    hooks.on_tool_result_persist(Registration::new("suffix").priority(1), Arc::new(Suffix));
    let big = json!({"stdout": "y".repeat(MAX_PERSISTED_DETAILS_BYTES + 1), "exitCode": 0});
    let out = hooks.tool_result_persist(message(big));
    assert_eq!(message_text(&out), "password [redacted] (seen)");
    assert_eq!(out.details["persistedDetailsTruncated"], true);
    assert_eq!(out.details["keys"], json!(["stdout", "exitCode"]));
    let small = hooks.tool_result_persist(message(json!({"exitCode": 0})));
    assert_eq!(small.details, json!({"exitCode": 0}));
    assert_eq!(small.for_replay().details, Value::Null);
}

#[test]
fn a_panicking_persist_handler_withholds_the_result() {
    let mut hooks = Hooks::new();
    hooks.on_tool_result_persist(Registration::new("bad"), Arc::new(PersistPanics));
    let out = hooks.tool_result_persist(message(json!({"secret": 1})));
    assert!(
        message_text(&out).contains("withheld"),
        "{}",
        message_text(&out)
    );
    assert!(!message_text(&out).contains("hunter2"));
    assert_eq!(out.details, Value::Null);
}

struct Writer(MessageWrite);
impl BeforeMessageWriteHandler for Writer {
    fn before_message_write(&self, _message: &Value) -> MessageWrite {
        self.0.clone()
    }
}

struct SeesPrevious(Arc<Mutex<Vec<Value>>>);
impl BeforeMessageWriteHandler for SeesPrevious {
    fn before_message_write(&self, message: &Value) -> MessageWrite {
        self.0.lock().unwrap().push(message.clone());
        MessageWrite::Keep
    }
}

#[test]
fn before_message_write_chains_and_can_block_the_write() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut hooks = Hooks::new();
    hooks.on_before_message_write(
        Registration::new("replace").priority(2),
        Arc::new(Writer(MessageWrite::Replace(
            json!({"role": "tool", "text": "clean"}),
        ))),
    );
    hooks.on_before_message_write(
        Registration::new("spy").priority(1),
        Arc::new(SeesPrevious(Arc::clone(&seen))),
    );
    assert_eq!(
        hooks.before_message_write(json!({"role": "tool", "text": "dirty"})),
        WriteDecision::Write(json!({"role": "tool", "text": "clean"}))
    );
    assert_eq!(
        seen.lock().unwrap().clone(),
        vec![json!({"role": "tool", "text": "clean"})]
    );
    hooks.on_before_message_write(
        Registration::new("block").priority(0),
        Arc::new(Writer(MessageWrite::Block)),
    );
    assert_eq!(
        hooks.before_message_write(json!({})),
        WriteDecision::Blocked { by: "block".into() }
    );
}
