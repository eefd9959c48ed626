//! Reading the `exec` call's parameters.

use std::collections::BTreeMap;
use std::sync::LazyLock;
use std::time::Duration;

use serde_json::{Map, Value};
use talon_hooks::exec_env::ExecHost;
use talon_tool_catalog::ToolError;
use talon_tool_catalog::params::{
    NumberOpts, StringOpts, json_type, lookup, read_bool, read_number, read_string,
    refuse_unknown_keys,
};

use crate::exec::config::{ExecConfig, YIELD_MS_RANGE};

/// One `exec` call, validated.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ExecParams {
    pub(crate) command: String,
    pub(crate) workdir: Option<String>,
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) timeout: Duration,
    pub(crate) yield_window: Duration,
    pub(crate) background: bool,
    pub(crate) pty: bool,
}

pub(crate) fn host_name(host: ExecHost) -> &'static str {
    match host {
        ExecHost::Gateway => "gateway",
        ExecHost::Sandbox => "sandbox",
        ExecHost::Node => "node",
    }
}

/// The keys `exec` takes: its catalog schema's properties (read once),
/// plus the two a skill's command dispatch adds (`commandName`,
/// `skillName`). Anything else (`cwd` for `workdir`, ...) is refused
/// instead of ignored.
static EXEC_KEYS: LazyLock<Vec<String>> = LazyLock::new(|| {
    let mut keys: Vec<String> = talon_tool_catalog::ToolSpec::core("exec")
        .and_then(|spec| spec.parameters.get("properties")?.as_object().cloned())
        .map(|props| props.keys().cloned().collect())
        .unwrap_or_default();
    keys.extend(["commandName".to_owned(), "skillName".to_owned()]);
    keys
});

/// Reads and checks the parameters against the config.
pub(crate) fn parse(
    params: &Map<String, Value>,
    config: &ExecConfig,
    host: ExecHost,
) -> Result<ExecParams, ToolError> {
    refuse_unknown_keys("exec", params, &EXEC_KEYS, &[])?;
    let command = read_string(params, "command", StringOpts::required().untrimmed())?
        .filter(|c| !c.trim().is_empty())
        .ok_or_else(|| ToolError::input("command", "command required"))?;
    if command.contains('\0') {
        return Err(ToolError::input(
            "command",
            "command must not contain NUL bytes",
        ));
    }
    let workdir = read_string(params, "workdir", StringOpts::default())?;
    let env = read_env(params)?;
    let timeout = match read_number(params, "timeout", NumberOpts::default())? {
        None => config.timeout(),
        Some(secs) if secs > 0.0 && secs <= config.max_timeout_sec as f64 => {
            Duration::from_secs_f64(secs)
        }
        Some(secs) => {
            return Err(ToolError::input(
                "timeout",
                format!(
                    "timeout must be more than 0 and at most {} seconds (tools.exec.maxTimeoutSec), got {secs}",
                    config.max_timeout_sec
                ),
            ));
        }
    };
    let yield_window = match read_number(
        params,
        "yieldMs",
        NumberOpts {
            integer: true,
            ..NumberOpts::default()
        },
    )? {
        None => config.background(),
        Some(ms) if ms >= YIELD_MS_RANGE.0 as f64 && ms <= YIELD_MS_RANGE.1 as f64 => {
            Duration::from_millis(ms as u64)
        }
        Some(ms) => {
            return Err(ToolError::input(
                "yieldMs",
                format!(
                    "yieldMs must be between {} and {} milliseconds, got {ms}; use background: true to start in the background at once",
                    YIELD_MS_RANGE.0, YIELD_MS_RANGE.1
                ),
            ));
        }
    };
    let background = read_bool(params, "background")?.unwrap_or(false);
    let pty = read_bool(params, "pty")?.unwrap_or(false);
    if read_bool(params, "elevated")? == Some(true) {
        return Err(ToolError::input(
            "elevated",
            "elevated exec is not available on this host; omit elevated",
        ));
    }
    if let Some(requested) = read_string(params, "host", StringOpts::default())? {
        let requested = requested.to_ascii_lowercase();
        if requested != "auto" && requested != host_name(host) {
            return Err(ToolError::input(
                "host",
                format!(
                    "host {requested:?} is not available: this session runs commands on {:?}; omit host",
                    host_name(host)
                ),
            ));
        }
    }
    Ok(ExecParams {
        command,
        workdir,
        env,
        timeout,
        yield_window,
        background,
        pty,
    })
}

/// `env`: an object whose values are strings.
fn read_env(params: &Map<String, Value>) -> Result<BTreeMap<String, String>, ToolError> {
    match lookup(params, "env") {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => {
            let mut env = BTreeMap::new();
            for (key, value) in map {
                match value {
                    Value::String(s) => {
                        env.insert(key.clone(), s.clone());
                    }
                    other => {
                        return Err(ToolError::input(
                            "env",
                            format!(
                                "env.{key} must be a string, got {}; quote the value",
                                json_type(other)
                            ),
                        ));
                    }
                }
            }
            Ok(env)
        }
        Some(other) => Err(ToolError::input(
            "env",
            format!(
                "env must be an object of string values, got {}",
                json_type(other)
            ),
        )),
    }
}

#[cfg(test)]
#[path = "params_tests.rs"]
mod tests;
