//! Small handlers for tests.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use talon_hooks::{BeforeToolCallEvent, BeforeToolCallHandler, BeforeToolCallResult, HookContext};

pub(crate) fn params(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

pub(crate) fn event(tool: &str, p: Value) -> BeforeToolCallEvent {
    BeforeToolCallEvent::new(tool, params(p)).with_call_id("call-1")
}

pub(crate) fn ctx() -> HookContext {
    HookContext::new("main", "agent:main:main")
}

/// Returns a fixed result and logs the params it saw.
pub(crate) type Seen = Arc<Mutex<Vec<Map<String, Value>>>>;

pub(crate) struct Fixed {
    pub(crate) result: Option<BeforeToolCallResult>,
    pub(crate) seen: Arc<Mutex<Vec<Map<String, Value>>>>,
}

impl Fixed {
    pub(crate) fn new(result: Option<BeforeToolCallResult>) -> (Arc<Self>, Seen) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        (
            Arc::new(Fixed {
                result,
                seen: Arc::clone(&seen),
            }),
            seen,
        )
    }
}

#[async_trait::async_trait]
impl BeforeToolCallHandler for Fixed {
    async fn before_tool_call(
        &self,
        event: &BeforeToolCallEvent,
        _ctx: &HookContext,
    ) -> Result<Option<BeforeToolCallResult>, talon_hooks::HookError> {
        self.seen.lock().unwrap().push(event.params.clone());
        Ok(self.result.clone())
    }
}

/// Mutates its copy of the event through interior cloning, then returns
/// params derived from what it saw.
pub(crate) struct AppendMarker(pub(crate) &'static str);

#[async_trait::async_trait]
impl BeforeToolCallHandler for AppendMarker {
    async fn before_tool_call(
        &self,
        event: &BeforeToolCallEvent,
        _ctx: &HookContext,
    ) -> Result<Option<BeforeToolCallResult>, talon_hooks::HookError> {
        let mut p = event.params.clone();
        let before = p
            .get("marks")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        p.insert("marks".into(), json!(format!("{before}{}", self.0)));
        Ok(Some(BeforeToolCallResult::params(p)))
    }
}

pub(crate) struct Panics;

#[async_trait::async_trait]
impl BeforeToolCallHandler for Panics {
    async fn before_tool_call(
        &self,
        _event: &BeforeToolCallEvent,
        _ctx: &HookContext,
    ) -> Result<Option<BeforeToolCallResult>, talon_hooks::HookError> {
        panic!("handler bug");
    }
}

pub(crate) struct Errors;

#[async_trait::async_trait]
impl BeforeToolCallHandler for Errors {
    async fn before_tool_call(
        &self,
        _event: &BeforeToolCallEvent,
        _ctx: &HookContext,
    ) -> Result<Option<BeforeToolCallResult>, talon_hooks::HookError> {
        Err(talon_hooks::HookError::handler("database unreachable"))
    }
}

pub(crate) struct Sleeps(pub(crate) Duration);

#[async_trait::async_trait]
impl BeforeToolCallHandler for Sleeps {
    async fn before_tool_call(
        &self,
        _event: &BeforeToolCallEvent,
        _ctx: &HookContext,
    ) -> Result<Option<BeforeToolCallResult>, talon_hooks::HookError> {
        tokio::time::sleep(self.0).await;
        Ok(None)
    }
}
