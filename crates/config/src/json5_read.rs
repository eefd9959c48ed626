//! The JSON5 reader behind `talon.json`, for callers that need only the
//! value (and for the differential fuzz target that holds it against the
//! `json5` crate).

use serde_json::Value;

use crate::json5_spanned;

/// A JSON5 document read the way `talon.json` is.
#[derive(Debug, Clone, PartialEq)]
pub struct Json5Document {
    /// The value. A duplicate key keeps its first occurrence; a non-finite
    /// number is `null`.
    pub value: Value,
    /// Duplicate keys and non-finite numbers found (each is an error when
    /// the text is a config file).
    pub problems: usize,
}

/// Text that is not JSON5 (or nests deeper than 128 levels).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct Json5Error {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    /// What is wrong.
    pub message: String,
}

/// Read one JSON5 document.
pub fn parse_json5(text: &str) -> Result<Json5Document, Json5Error> {
    json5_spanned::parse(text)
        .map(|p| Json5Document {
            value: p.value,
            problems: p.problems.len(),
        })
        .map_err(|e| Json5Error {
            line: e.pos.line,
            column: e.pos.column,
            message: e.message,
        })
}
