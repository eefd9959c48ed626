//! What the four file tools share: reading the `path` and text parameters,
//! and turning a bridge refusal into a tool error that keeps its code.

use serde_json::{Map, Value};
use talon_fs_bridge::FsError;

pub(crate) use crate::errors::fs_error;
use talon_tool_catalog::ToolError;
use talon_tool_catalog::params::{json_type, lookup, refuse_unknown_keys};

/// The keys a path may come under: OpenClaw's `path`, and the `file_path`
/// spelling some models were trained on.
const PATH_KEYS: [&str; 2] = ["path", "filePath"];

/// The spelling of `path` some models were trained on (`filePath`, and
/// `file_path` through the snake_case lookup), accepted as `path`.
pub(crate) const PATH_ALIAS: (&str, &str) = ("filePath", "path");

/// Refuse keys the file tool `tool` does not take (`known` are its schema
/// names, `aliases` the other spellings it reads), and two spellings of one
/// parameter that disagree: a path under a key the tool would ignore is an
/// error naming that key, never silently dropped.
pub(crate) fn check_keys(
    tool: &str,
    params: &Map<String, Value>,
    known: &[&str],
    aliases: &[(&str, &str)],
) -> Result<(), ToolError> {
    refuse_unknown_keys(tool, params, known, aliases)
}

/// The required `path` parameter: a non-blank string, trimmed.
pub(crate) fn require_path(params: &Map<String, Value>) -> Result<String, ToolError> {
    for key in PATH_KEYS {
        match lookup(params, key) {
            None | Some(Value::Null) => continue,
            Some(Value::String(s)) if s.trim().is_empty() => {
                return Err(ToolError::input(
                    "path",
                    "path is empty; give the file's path, relative to the workspace or absolute",
                ));
            }
            Some(Value::String(s)) => return Ok(s.trim().to_owned()),
            Some(other) => {
                return Err(ToolError::input(
                    "path",
                    format!("path must be a string, got {}", json_type(other)),
                ));
            }
        }
    }
    Err(ToolError::input(
        "path",
        "path required: give the file's path, relative to the workspace or absolute",
    ))
}

/// A required text parameter taken verbatim (not trimmed; empty allowed).
pub(crate) fn require_text(params: &Map<String, Value>, key: &str) -> Result<String, ToolError> {
    match lookup(params, key) {
        Some(Value::String(s)) => Ok(s.clone()),
        None | Some(Value::Null) => Err(ToolError::input(key, format!("{key} required"))),
        Some(other) => Err(ToolError::input(
            key,
            format!("{key} must be a string, got {}", json_type(other)),
        )),
    }
}

/// An optional text parameter taken verbatim; present but not a string is
/// an error.
pub(crate) fn optional_text(
    params: &Map<String, Value>,
    key: &str,
) -> Result<Option<String>, ToolError> {
    match lookup(params, key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(ToolError::input(
            key,
            format!("{key} must be a string, got {}", json_type(other)),
        )),
    }
}

/// The structured form of a bridge error, for `details` of results that
/// report one (apply_patch's rollback report).
pub(crate) fn fs_error_details(err: &FsError) -> Value {
    serde_json::json!({
        "code": err.code.as_str(),
        "path": err.path,
        "message": err.message,
    })
}

/// `s` cut to at most `max` bytes on a character boundary.
pub(crate) fn cut_at_char_boundary(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

pub(crate) use talon_patch::preview;

/// 1-based line numbers as `a, b, c` (at most `max`, then `, …`).
pub(crate) fn line_list(lines: &[usize], max: usize) -> String {
    let mut out: Vec<String> = lines.iter().take(max).map(usize::to_string).collect();
    if lines.len() > max {
        out.push("…".to_owned());
    }
    out.join(", ")
}
