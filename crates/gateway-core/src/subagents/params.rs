//! Reading the sub-agent tools' parameters, and the ids they hand out.

use serde_json::{Map, Value};
use talon_config::sections::subagents::MAX_RUN_TIMEOUT_SECONDS;
use talon_tool_catalog::{ToolError, ToolErrorCode};

pub(super) fn string<'a>(params: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    params
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// A non-negative whole number of seconds, under either spelling.
pub(super) fn seconds(
    params: &Map<String, Value>,
    keys: &[&str],
) -> Result<Option<u64>, ToolError> {
    for key in keys {
        match params.get(*key) {
            None | Some(Value::Null) => {}
            Some(v) => {
                let n = v.as_u64().ok_or_else(|| {
                    ToolError::input(*key, format!("{key} must be a non-negative integer"))
                })?;
                if n > MAX_RUN_TIMEOUT_SECONDS {
                    return Err(ToolError::input(
                        *key,
                        format!(
                            "{key} may be at most {MAX_RUN_TIMEOUT_SECONDS} (one day), not {n}"
                        ),
                    ));
                }
                return Ok(Some(n));
            }
        }
    }
    Ok(None)
}

pub(super) fn check_label(label: Option<&str>) -> Result<(), ToolError> {
    if let Some(l) = label
        && (l.chars().count() > talon_sessions::MAX_LABEL_CHARS || l.chars().any(char::is_control))
    {
        return Err(ToolError::input(
            "label",
            format!(
                "label must be 1–{} printable characters",
                talon_sessions::MAX_LABEL_CHARS
            ),
        ));
    }
    Ok(())
}

pub(super) fn random_hex(n: usize) -> Result<String, ToolError> {
    crate::auth::random_hex(n).map_err(|e| ToolError::execution(e.to_string()))
}

/// A random UUID-shaped id (8-4-4-4-12 hex).
pub(super) fn uuid() -> Result<String, ToolError> {
    let h = random_hex(16)?;
    let part = |a: usize, b: usize| h.get(a..b).unwrap_or_default().to_owned();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        part(0, 8),
        part(8, 12),
        part(12, 16),
        part(16, 20),
        part(20, 32)
    ))
}

/// Refuse any key of `params` not in `known` (the schema's
/// `additionalProperties: false`), naming it.
pub(super) fn only_keys(params: &Map<String, Value>, known: &[&str]) -> Result<(), ToolError> {
    match params.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(ToolError::new(
            ToolErrorCode::InputUnknownParam,
            format!(
                "unknown parameter `{k}` (this tool takes {})",
                known.join(", ")
            ),
        )
        .with_param(k.clone())),
        None => Ok(()),
    }
}
