//! `sandbox.browser` (in `agents.defaults.sandbox` and an agent's
//! `sandbox`): the sandboxed browser, which Talon runs as a bubblewrap'd
//! Chromium inside the session's local sandbox.
//!
//! Every OpenClaw key is classified: the ones Talon honours are parsed
//! here; the ones it cannot honour (they describe OpenClaw's browser
//! *container*: its image, ports, network, VNC observer) are refused at
//! load with the reason, never dropped. An unknown key is refused too.

use std::time::Duration;

use serde_json::{Map, Value};

/// The longest `autoStartTimeoutMs` taken (5 minutes).
pub const MAX_AUTO_START_TIMEOUT_MS: u64 = 300_000;

/// The resolved `sandbox.browser` settings of an agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxBrowserSettings {
    /// `enabled` (default false): a sandboxed session gets a browser only
    /// when this is true.
    pub enabled: bool,
    /// `autoStart` (default true): start on first use; false: only the
    /// `start` action starts it.
    pub auto_start: bool,
    /// `autoStartTimeoutMs`: launch to a usable DevTools connection.
    pub start_timeout: Option<Duration>,
}

impl Default for SandboxBrowserSettings {
    fn default() -> Self {
        SandboxBrowserSettings {
            enabled: false,
            auto_start: true,
            start_timeout: None,
        }
    }
}

/// One key Talon cannot honour, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxBrowserProblem {
    /// The key under `sandbox.browser`.
    pub key: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// The `sandbox.browser` keys of an agent that Talon cannot honour (load
/// refuses them first, each at its key).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.iter().map(|p| format!("sandbox.browser.{}: {}", p.key, p.message)).collect::<Vec<_>>().join("; "))]
pub struct SandboxBrowserError(pub Vec<SandboxBrowserProblem>);

/// Keys honoured as they are.
pub const HONOURED: &[&str] = &[
    "enabled",
    "autoStart",
    "autoStartTimeoutMs",
    "headless",
    "allowHostControl",
    "enableNoVnc",
    "cdpSourceRange",
    "binds",
];

/// Keys of OpenClaw's browser container, which Talon does not run.
pub const CONTAINER_ONLY: &[&str] = &[
    "image",
    "containerPrefix",
    "network",
    "cdpPort",
    "vncPort",
    "noVncPort",
];

const CONTAINER_ONLY_NOTE: &str = "describes OpenClaw's browser container, which Talon does not run: Talon's sandboxed browser is Chromium inside the session's own local (bubblewrap) sandbox, with DevTools over a pipe (no port) and the sandbox's network (its egress proxy); remove this key";

/// The merged `sandbox.browser` object: the agent's keys over the
/// defaults' (field by field).
pub fn merge(defaults: Option<&Value>, agent: Option<&Value>) -> Value {
    let mut out = Map::new();
    for layer in [defaults, agent].into_iter().flatten() {
        if let Value::Object(m) = layer {
            for (k, v) in m {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

/// Parse one `sandbox.browser` object.
pub fn parse(value: &Value) -> Result<SandboxBrowserSettings, Vec<SandboxBrowserProblem>> {
    let mut problems = Vec::new();
    let mut out = SandboxBrowserSettings::default();
    let Value::Object(map) = value else {
        if value.is_null() {
            return Ok(out);
        }
        return Err(vec![SandboxBrowserProblem {
            key: String::new(),
            message: "must be an object (e.g. { \"enabled\": true })".to_owned(),
        }]);
    };
    let mut problem = |key: &str, message: String| {
        problems.push(SandboxBrowserProblem {
            key: key.to_owned(),
            message,
        })
    };
    for (key, v) in map {
        let flag = |v: &Value| v.as_bool();
        match key.as_str() {
            "enabled" => match flag(v) {
                Some(b) => out.enabled = b,
                None => problem(key, "must be true or false".to_owned()),
            },
            "autoStart" => match flag(v) {
                Some(b) => out.auto_start = b,
                None => problem(key, "must be true or false".to_owned()),
            },
            "autoStartTimeoutMs" => match v.as_u64() {
                Some(ms) if (1..=MAX_AUTO_START_TIMEOUT_MS).contains(&ms) => {
                    out.start_timeout = Some(Duration::from_millis(ms))
                }
                _ => problem(
                    key,
                    format!("must be a whole number of milliseconds from 1 to {MAX_AUTO_START_TIMEOUT_MS}"),
                ),
            },
            "headless" => match flag(v) {
                Some(true) => {}
                Some(false) => problem(key, "Talon's sandboxed browser runs headless only (the sandbox has no display); remove this key or set it to true".to_owned()),
                None => problem(key, "must be true or false".to_owned()),
            },
            "allowHostControl" => match flag(v) {
                Some(false) => {}
                Some(true) => problem(key, "a sandboxed session never drives the host browser in Talon; remove this key or set it to false".to_owned()),
                None => problem(key, "must be true or false".to_owned()),
            },
            "enableNoVnc" => match flag(v) {
                Some(false) => {}
                Some(true) => problem(key, "Talon's sandboxed browser has no VNC/noVNC observer (it is headless, with no display); remove this key or set it to false".to_owned()),
                None => problem(key, "must be true or false".to_owned()),
            },
            // No DevTools port exists (a pipe): no address can reach it,
            // which is at least as narrow as any range.
            "cdpSourceRange" => {
                if !v.is_string() {
                    problem(key, "must be a CIDR string (e.g. \"172.21.0.1/32\")".to_owned());
                }
            }
            "binds" => match v {
                Value::Array(a) if a.is_empty() => {}
                Value::Array(_) => problem(key, "the sandboxed browser sees exactly the session sandbox's mounts (the workspace, its binds); extra browser binds are not supported: remove them, or add the bind to `sandbox.docker.binds`".to_owned()),
                _ => problem(key, "must be an array".to_owned()),
            },
            k if CONTAINER_ONLY.contains(&k) => problem(key, CONTAINER_ONLY_NOTE.to_owned()),
            _ => problem(
                key,
                format!(
                    "unknown sandbox.browser key; the keys are {}",
                    HONOURED.join(", ")
                ),
            ),
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn honoured_keys_parse_and_the_others_are_refused_by_name() {
        assert_eq!(
            parse(
                &json!({"enabled": true, "autoStart": false, "autoStartTimeoutMs": 9000, "headless": true, "binds": [], "cdpSourceRange": "172.21.0.1/32"})
            ),
            Ok(SandboxBrowserSettings {
                enabled: true,
                auto_start: false,
                start_timeout: Some(Duration::from_millis(9000)),
            })
        );
        assert_eq!(parse(&Value::Null), Ok(SandboxBrowserSettings::default()));
        let err = parse(&json!({
            "enabled": "yes", "headless": false, "allowHostControl": true,
            "enableNoVnc": true, "image": "x", "cdpPort": 9222, "binds": ["/a:/b"],
            "autoStartTimeoutMs": 0, "colour": 1,
        }))
        .expect_err("refused");
        let mut keys: Vec<&str> = err.iter().map(|p| p.key.as_str()).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "allowHostControl",
                "autoStartTimeoutMs",
                "binds",
                "cdpPort",
                "colour",
                "enableNoVnc",
                "enabled",
                "headless",
                "image"
            ]
        );
        assert!(parse(&json!({"autoStartTimeoutMs": 300_001})).is_err());
        assert!(parse(&json!([1])).is_err());
    }

    #[test]
    fn the_agent_overrides_the_defaults_field_by_field() {
        let merged = merge(
            Some(&json!({"enabled": true, "autoStart": false})),
            Some(&json!({"autoStart": true})),
        );
        assert_eq!(merged, json!({"enabled": true, "autoStart": true}));
    }
}
