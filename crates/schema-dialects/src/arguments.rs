//! Tolerant decoding of the arguments a model sends with a tool call.

use serde_json::Map;
use serde_json::Value;

/// Longest preview of the received arguments quoted in an error.
const PREVIEW_CHARS: usize = 80;

/// Arguments a model sent that cannot be turned into named parameters.
///
/// The message is written for the model: it says what arrived (its JSON
/// type and a preview of at most 80 characters) and what was expected, so
/// the model can retry with a corrected call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ArgumentError {
    /// No arguments (`null`, absent or an empty string) for a tool whose
    /// schema has required parameters.
    #[error(
        "tool arguments are required but {received} was received; send a JSON object with the tool's parameters, such as {{\"name\": \"value\"}}"
    )]
    Missing {
        /// What arrived: `null` or `an empty string`.
        received: &'static str,
    },
    /// A string that is not valid JSON.
    #[error(
        "tool arguments must be a JSON object, but a string that is not valid JSON was received ({reason}): {preview}; send a JSON object such as {{\"name\": \"value\"}}"
    )]
    InvalidJson {
        /// At most 80 characters of the string, JSON-quoted.
        preview: String,
        /// The parser's complaint.
        reason: String,
    },
    /// Valid JSON that is not an object.
    #[error(
        "tool arguments must be a JSON object of named parameters, but {received} was received: {preview}; wrap the values in an object such as {{\"name\": ...}}"
    )]
    NotAnObject {
        /// What arrived, such as `an array` or `a string containing a number`.
        received: &'static str,
        /// At most 80 characters of what arrived, as compact JSON.
        preview: String,
    },
}

/// Decodes tool-call arguments given as a JSON value.
///
/// - an object is returned as is;
/// - a string is trimmed and parsed, and an object inside is returned;
/// - `null` (pass this for absent arguments) or an empty string becomes
///   `{}` when `empty_object_args` is set (see
///   [`Normalized::empty_object_args`](crate::Normalized::empty_object_args)),
///   and is [`ArgumentError::Missing`] otherwise;
/// - anything else is an error.
pub fn decode_arguments(
    raw: &Value,
    empty_object_args: bool,
) -> Result<Map<String, Value>, ArgumentError> {
    match raw {
        Value::Object(map) => Ok(map.clone()),
        Value::Null => missing(empty_object_args, "null"),
        Value::String(text) => {
            let trimmed = text.trim();
            if trimmed.is_empty() {
                return missing(empty_object_args, "an empty string");
            }
            match serde_json::from_str::<Value>(trimmed) {
                Ok(Value::Object(map)) => Ok(map),
                Ok(other) => Err(ArgumentError::NotAnObject {
                    received: inside_string(&other),
                    preview: preview_value(raw),
                }),
                Err(err) => Err(invalid_json(trimmed, &err)),
            }
        }
        Value::Bool(_) | Value::Number(_) | Value::Array(_) => Err(ArgumentError::NotAnObject {
            received: kind(raw),
            preview: preview_value(raw),
        }),
    }
}

/// Decodes tool-call arguments given as JSON text, as most providers
/// deliver them (OpenAI's `function.arguments`, for example).
///
/// The text is trimmed; empty text or `null` counts as absent. Otherwise
/// the text is parsed and handed to [`decode_arguments`], so a
/// double-encoded object (a JSON string holding an object) is accepted.
pub fn decode_arguments_str(
    raw: &str,
    empty_object_args: bool,
) -> Result<Map<String, Value>, ArgumentError> {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return missing(empty_object_args, "an empty string");
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(value) => decode_arguments(&value, empty_object_args),
        Err(err) => Err(invalid_json(trimmed, &err)),
    }
}

fn missing(
    empty_object_args: bool,
    received: &'static str,
) -> Result<Map<String, Value>, ArgumentError> {
    if empty_object_args {
        Ok(Map::new())
    } else {
        Err(ArgumentError::Missing { received })
    }
}

fn invalid_json(text: &str, err: &serde_json::Error) -> ArgumentError {
    // Only the head is quoted, so a huge payload costs nothing extra.
    let head: String = text.chars().take(PREVIEW_CHARS + 1).collect();
    ArgumentError::InvalidJson {
        preview: truncate(Value::String(head).to_string()),
        reason: err.to_string(),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn inside_string(value: &Value) -> &'static str {
    match value {
        Value::Null => "a string containing null",
        Value::Bool(_) => "a string containing a boolean",
        Value::Number(_) => "a string containing a number",
        Value::String(_) => "a string containing another string",
        Value::Array(_) => "a string containing an array",
        Value::Object(_) => "a string containing an object",
    }
}

fn preview_value(value: &Value) -> String {
    let text = match value {
        // Long strings are cut before quoting to keep the work bounded.
        Value::String(s) => Value::String(s.chars().take(PREVIEW_CHARS + 1).collect()).to_string(),
        other => other.to_string(),
    };
    truncate(text)
}

/// Cuts `text` to at most [`PREVIEW_CHARS`] characters, ending in `...`
/// when something was cut.
fn truncate(text: String) -> String {
    if text.chars().count() <= PREVIEW_CHARS {
        return text;
    }
    let mut out: String = text.chars().take(PREVIEW_CHARS - 3).collect();
    out.push_str("...");
    out
}

#[cfg(test)]
#[path = "arguments_tests.rs"]
mod tests;
