use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use talon_exec_env::{DropReason, DroppedKey};

/// What a test handler does when called.
enum Behaviour {
    Return(Vec<(&'static str, &'static str)>),
    Fail,
    Panic,
    Sleep(Duration, Vec<(&'static str, &'static str)>),
}

struct TestHandler {
    name: &'static str,
    behaviour: Behaviour,
    calls: Arc<Mutex<Vec<String>>>,
}

fn to_map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[async_trait]
impl ResolveExecEnvHandler for TestHandler {
    async fn resolve_exec_env(
        &self,
        event: &ExecEnvEvent,
        _ctx: &HookContext,
    ) -> Result<BTreeMap<String, String>, crate::HookError> {
        self.calls
            .lock()
            .expect("calls lock")
            .push(format!("{}:{}", self.name, event.session_key));
        match &self.behaviour {
            Behaviour::Return(pairs) => Ok(to_map(pairs)),
            Behaviour::Fail => Err(crate::HookError::handler("backend unavailable")),
            Behaviour::Panic => panic!("handler bug"),
            Behaviour::Sleep(d, pairs) => {
                tokio::time::sleep(*d).await;
                Ok(to_map(pairs))
            }
        }
    }
}

struct Fixture {
    hooks: ExecEnvHooks,
    calls: Arc<Mutex<Vec<String>>>,
}

impl Fixture {
    fn new() -> Self {
        Fixture {
            hooks: ExecEnvHooks::default(),
            calls: Arc::new(Mutex::new(Vec::new())),
        }
    }

    fn add(
        &mut self,
        name: &'static str,
        priority: i32,
        timeout: Option<Duration>,
        behaviour: Behaviour,
    ) {
        let handler = TestHandler {
            name,
            behaviour,
            calls: Arc::clone(&self.calls),
        };
        self.hooks
            .register(name, priority, timeout, Arc::new(handler));
    }

    async fn resolve(&self) -> ResolvedExecEnv {
        let event = ExecEnvEvent::new("agent:main:s1", ExecHost::Gateway);
        let ctx = HookContext::new("main", "agent:main:s1");
        self.hooks.resolve(&event, &ctx).await
    }

    fn calls(&self) -> Vec<String> {
        self.calls.lock().expect("calls lock").clone()
    }
}

#[test]
fn event_serialises_in_camel_case() {
    let event = ExecEnvEvent::new("agent:main:s1", ExecHost::Sandbox);
    assert_eq!(
        serde_json::to_value(&event).ok(),
        Some(json!({"sessionKey": "agent:main:s1", "toolName": "exec", "host": "sandbox"}))
    );
    assert_eq!(
        serde_json::to_value(ExecHost::Node).ok(),
        Some(json!("node"))
    );
    assert_eq!(
        serde_json::from_value::<ExecHost>(json!("gateway")).ok(),
        Some(ExecHost::Gateway)
    );
}

#[tokio::test]
async fn no_handlers_resolve_to_nothing() {
    let fx = Fixture::new();
    assert!(fx.hooks.is_empty());
    assert_eq!(fx.resolve().await, ResolvedExecEnv::default());
}

#[tokio::test]
async fn runs_by_priority_descending_and_the_later_handler_wins() {
    let mut fx = Fixture::new();
    fx.add(
        "low",
        -5,
        None,
        Behaviour::Return(vec![("SHARED", "low"), ("LOW", "1")]),
    );
    fx.add(
        "high",
        10,
        None,
        Behaviour::Return(vec![("SHARED", "high"), ("HIGH", "1")]),
    );
    fx.add(
        "mid-a",
        0,
        None,
        Behaviour::Return(vec![("SHARED", "mid-a"), ("TIE", "a")]),
    );
    fx.add("mid-b", 0, None, Behaviour::Return(vec![("TIE", "b")]));
    assert!(!fx.hooks.is_empty());
    let out = fx.resolve().await;
    assert_eq!(
        fx.calls(),
        [
            "high:agent:main:s1",
            "mid-a:agent:main:s1",
            "mid-b:agent:main:s1",
            "low:agent:main:s1"
        ]
    );
    assert_eq!(
        out,
        ResolvedExecEnv {
            env: to_map(&[("HIGH", "1"), ("LOW", "1"), ("SHARED", "low"), ("TIE", "b")]),
            dropped: vec![],
            failed: vec![],
        }
    );
}

#[tokio::test]
async fn trimmed_keys_clash_and_the_later_handler_wins() {
    let mut fx = Fixture::new();
    fx.add("first", 1, None, Behaviour::Return(vec![("MODE", "first")]));
    fx.add(
        "second",
        0,
        None,
        Behaviour::Return(vec![(" MODE ", "second")]),
    );
    assert_eq!(fx.resolve().await.env, to_map(&[("MODE", "second")]));
}

#[tokio::test]
async fn merged_output_is_filtered() {
    let mut fx = Fixture::new();
    fx.add(
        "p",
        0,
        None,
        Behaviour::Return(vec![
            ("API_REGION", "eu"),
            ("PATH", "/evil"),
            ("LD_PRELOAD", "x"),
            ("HTTPS_PROXY", "p"),
        ]),
    );
    let out = fx.resolve().await;
    assert_eq!(out.env, to_map(&[("API_REGION", "eu")]));
    assert_eq!(
        out.dropped,
        vec![
            DroppedKey {
                key: "HTTPS_PROXY".into(),
                reason: DropReason::BlockedOverrideOnly
            },
            DroppedKey {
                key: "LD_PRELOAD".into(),
                reason: DropReason::BlockedEverywhere
            },
            DroppedKey {
                key: "PATH".into(),
                reason: DropReason::Path
            },
        ]
    );
}

#[tokio::test]
async fn failing_and_panicking_handlers_are_skipped() {
    let mut fx = Fixture::new();
    fx.add("ok-1", 3, None, Behaviour::Return(vec![("A", "1")]));
    fx.add("fails", 2, None, Behaviour::Fail);
    fx.add("panics", 1, None, Behaviour::Panic);
    fx.add("ok-2", 0, None, Behaviour::Return(vec![("B", "2")]));
    let out = fx.resolve().await;
    assert_eq!(
        out,
        ResolvedExecEnv {
            env: to_map(&[("A", "1"), ("B", "2")]),
            dropped: vec![],
            failed: vec!["fails".to_owned(), "panics".to_owned()],
        }
    );
    assert_eq!(fx.calls().len(), 4);
}

#[tokio::test(start_paused = true)]
async fn a_handler_past_the_default_timeout_is_skipped() {
    let mut fx = Fixture::new();
    fx.add(
        "slow",
        1,
        None,
        Behaviour::Sleep(Duration::from_millis(15_001), vec![("SLOW", "1")]),
    );
    fx.add(
        "in-time",
        0,
        None,
        Behaviour::Sleep(Duration::from_millis(14_999), vec![("FAST", "1")]),
    );
    let started = tokio::time::Instant::now();
    let out = fx.resolve().await;
    assert_eq!(
        out,
        ResolvedExecEnv {
            env: to_map(&[("FAST", "1")]),
            dropped: vec![],
            failed: vec!["slow".to_owned()],
        }
    );
    // The slow handler was cut off at exactly the default timeout.
    assert_eq!(started.elapsed(), Duration::from_millis(15_000 + 14_999));
}

#[tokio::test(start_paused = true)]
async fn a_registration_timeout_overrides_the_default() {
    let mut fx = Fixture::new();
    fx.add(
        "tight",
        0,
        Some(Duration::from_millis(50)),
        Behaviour::Sleep(Duration::from_millis(100), vec![("X", "1")]),
    );
    fx.add(
        "roomy",
        -1,
        Some(Duration::from_secs(60)),
        Behaviour::Sleep(Duration::from_secs(30), vec![("Y", "1")]),
    );
    let out = fx.resolve().await;
    assert_eq!(out.env, to_map(&[("Y", "1")]));
    assert_eq!(out.failed, vec!["tight".to_owned()]);
}

#[test]
fn debug_lists_registrations_without_handlers() {
    let mut fx = Fixture::new();
    fx.add("p", 2, None, Behaviour::Fail);
    assert_eq!(format!("{:?}", fx.hooks), "[(\"p\", 2, 15s)]");
}
