//! Lenient readers for model-supplied parameters.
//!
//! Models send `"42"` for `42`, pad strings with spaces and write
//! `max_chars` for `maxChars`. These readers accept those slips and reject
//! everything else with an input [`ToolError`] that names the parameter.
//!
//! Semantics follow OpenClaw's `src/agents/tools/common.ts`:
//! - a key is looked up as written, then in its snake_case form;
//! - [`read_string`] never coerces numbers or booleans (use
//!   [`read_string_or_number`] for that); missing or blank → absent, or
//!   `"<label> required"` when required;
//! - [`read_number`] takes finite numbers and numeric strings (a leading
//!   numeric prefix, like `parseFloat`, unless `strict`).
//!
//! One deliberate difference: where OpenClaw's `readNumberParam` silently
//! treats a non-numeric string as absent, Talon reports an input error,
//! because a silently dropped limit turns one call into a different call.

use serde_json::{Map, Value};

use crate::error::{ToolError, ToolErrorCode};

/// Look up `key`, then its snake_case form.
pub fn lookup<'a>(params: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if let Some(v) = params.get(key) {
        return Some(v);
    }
    let snake = to_snake_case(key);
    if snake != key {
        params.get(&snake)
    } else {
        None
    }
}

/// `maxChars` → `max_chars`.
pub fn to_snake_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for (i, ch) in key.chars().enumerate() {
        if ch.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(ch.to_ascii_lowercase());
        } else {
            out.push(ch);
        }
    }
    out
}

/// Options of [`read_string`].
#[derive(Debug, Clone, Copy)]
pub struct StringOpts<'a> {
    /// Fail with `"<label> required"` when absent.
    pub required: bool,
    /// Trim whitespace (default true).
    pub trim: bool,
    /// Name used in messages (default: the key).
    pub label: Option<&'a str>,
    /// Keep empty strings instead of treating them as absent.
    pub allow_empty: bool,
}

impl Default for StringOpts<'_> {
    fn default() -> Self {
        StringOpts {
            required: false,
            trim: true,
            label: None,
            allow_empty: false,
        }
    }
}

impl<'a> StringOpts<'a> {
    /// Required, trimmed.
    pub fn required() -> Self {
        StringOpts {
            required: true,
            ..Self::default()
        }
    }

    /// Builder: the label used in messages.
    pub fn label(mut self, label: &'a str) -> Self {
        self.label = Some(label);
        self
    }

    /// Builder: do not trim.
    pub fn untrimmed(mut self) -> Self {
        self.trim = false;
        self
    }

    /// Builder: keep empty strings.
    pub fn allow_empty(mut self) -> Self {
        self.allow_empty = true;
        self
    }
}

fn required_error(key: &str, label: Option<&str>) -> ToolError {
    let label = label.unwrap_or(key);
    ToolError::input(key, format!("{label} required"))
}

/// Read a string parameter. Non-strings count as absent.
pub fn read_string(
    params: &Map<String, Value>,
    key: &str,
    opts: StringOpts<'_>,
) -> Result<Option<String>, ToolError> {
    let raw = match lookup(params, key) {
        Some(Value::String(s)) => s,
        _ => {
            return if opts.required {
                Err(required_error(key, opts.label))
            } else {
                Ok(None)
            };
        }
    };
    let value = if opts.trim { raw.trim() } else { raw.as_str() };
    if value.is_empty() && !opts.allow_empty {
        return if opts.required {
            Err(required_error(key, opts.label))
        } else {
            Ok(None)
        };
    }
    Ok(Some(value.to_owned()))
}

/// Read a required string parameter (trimmed, non-empty).
pub fn require_string(params: &Map<String, Value>, key: &str) -> Result<String, ToolError> {
    read_string(params, key, StringOpts::required())?.ok_or_else(|| required_error(key, None))
}

/// Read a string, also accepting finite numbers (stringified).
pub fn read_string_or_number(
    params: &Map<String, Value>,
    key: &str,
    opts: StringOpts<'_>,
) -> Result<Option<String>, ToolError> {
    if let Some(Value::Number(n)) = lookup(params, key)
        && let Some(f) = n.as_f64()
        && f.is_finite()
    {
        return Ok(Some(n.to_string()));
    }
    read_string(params, key, opts)
}

/// Options of [`read_number`].
#[derive(Debug, Clone, Copy, Default)]
pub struct NumberOpts<'a> {
    /// Fail with `"<label> required"` when absent.
    pub required: bool,
    /// Name used in messages (default: the key).
    pub label: Option<&'a str>,
    /// Truncate to an integer.
    pub integer: bool,
    /// Require the whole string to be a number (no `parseFloat` prefix).
    pub strict: bool,
}

/// Parse the longest numeric prefix of `s`, like JavaScript's `parseFloat`.
fn parse_float_prefix(s: &str) -> Option<f64> {
    let s = s.trim_start();
    if let Some(rest) = s
        .strip_prefix("Infinity")
        .or_else(|| s.strip_prefix("+Infinity"))
    {
        let _ = rest;
        return Some(f64::INFINITY);
    }
    if s.starts_with("-Infinity") {
        return Some(f64::NEG_INFINITY);
    }
    let bytes = s.as_bytes();
    let mut end = 0;
    if end < bytes.len() && (bytes[end] == b'+' || bytes[end] == b'-') {
        end += 1;
    }
    let digits_start = end;
    while end < bytes.len() && bytes[end].is_ascii_digit() {
        end += 1;
    }
    let mut mantissa_digits = end - digits_start;
    if end < bytes.len() && bytes[end] == b'.' {
        let dot = end;
        end += 1;
        let frac_start = end;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
        mantissa_digits += end - frac_start;
        if mantissa_digits == 0 {
            end = dot;
        }
    }
    if mantissa_digits == 0 {
        return None;
    }
    if end < bytes.len() && (bytes[end] == b'e' || bytes[end] == b'E') {
        let mut exp_end = end + 1;
        if exp_end < bytes.len() && (bytes[exp_end] == b'+' || bytes[exp_end] == b'-') {
            exp_end += 1;
        }
        let exp_digits = exp_end;
        while exp_end < bytes.len() && bytes[exp_end].is_ascii_digit() {
            exp_end += 1;
        }
        if exp_end > exp_digits {
            end = exp_end;
        }
    }
    s[..end].parse::<f64>().ok()
}

fn parse_strict(s: &str) -> Option<f64> {
    let t = s.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("nan") || t.contains(['x', 'X', '_']) {
        return None;
    }
    t.parse::<f64>().ok()
}

/// Read a number parameter: a finite number, or a numeric string.
pub fn read_number(
    params: &Map<String, Value>,
    key: &str,
    opts: NumberOpts<'_>,
) -> Result<Option<f64>, ToolError> {
    let label = opts.label.unwrap_or(key);
    let parsed = match lookup(params, key) {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => match n.as_f64() {
            Some(f) if f.is_finite() => Some(f),
            _ => {
                return Err(ToolError::input(
                    key,
                    format!("{label} must be a finite number"),
                ));
            }
        },
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => {
            let value = if opts.strict {
                parse_strict(s)
            } else {
                parse_float_prefix(s)
            };
            match value {
                Some(f) if f.is_finite() => Some(f),
                _ => {
                    return Err(ToolError::input(
                        key,
                        format!("{label} must be a number, got {}", preview(s)),
                    ));
                }
            }
        }
        Some(other) => {
            return Err(ToolError::input(
                key,
                format!("{label} must be a number, got {}", json_type(other)),
            ));
        }
    };
    match parsed {
        Some(f) => Ok(Some(if opts.integer { f.trunc() } else { f })),
        None if opts.required => Err(required_error(key, opts.label)),
        None => Ok(None),
    }
}

/// Bounds of the strict integer and number readers.
#[derive(Debug, Clone, Copy, Default)]
pub struct Bounds {
    /// Lower bound.
    pub min: Option<f64>,
    /// Upper bound.
    pub max: Option<f64>,
    /// The lower bound itself is not allowed.
    pub min_exclusive: bool,
    /// The upper bound itself is not allowed.
    pub max_exclusive: bool,
}

impl Bounds {
    /// Inclusive `min..=max`.
    pub fn inclusive(min: f64, max: f64) -> Self {
        Bounds {
            min: Some(min),
            max: Some(max),
            ..Bounds::default()
        }
    }

    fn check(&self, key: &str, value: f64) -> Result<(), ToolError> {
        if let Some(min) = self.min {
            let bad = if self.min_exclusive {
                value <= min
            } else {
                value < min
            };
            if bad {
                let op = if self.min_exclusive { ">" } else { ">=" };
                return Err(ToolError::input(key, format!("{key} must be {op} {min}")));
            }
        }
        if let Some(max) = self.max {
            let bad = if self.max_exclusive {
                value >= max
            } else {
                value > max
            };
            if bad {
                let op = if self.max_exclusive { "<" } else { "<=" };
                return Err(ToolError::input(key, format!("{key} must be {op} {max}")));
            }
        }
        Ok(())
    }
}

const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

fn read_strict(
    params: &Map<String, Value>,
    key: &str,
    what: &str,
    accept: impl Fn(f64) -> bool,
    bounds: Bounds,
) -> Result<Option<f64>, ToolError> {
    let value = match lookup(params, key) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(None),
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => parse_strict(s),
        Some(_) => None,
    };
    match value {
        Some(f) if f.is_finite() && accept(f) => {
            bounds.check(key, f)?;
            Ok(Some(f))
        }
        _ => Err(ToolError::input(key, format!("{key} must be a {what}"))),
    }
}

fn is_safe_integer(f: f64) -> bool {
    f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER
}

/// A strict positive integer (`> 0`); blank strings count as absent.
pub fn read_positive_integer(
    params: &Map<String, Value>,
    key: &str,
    bounds: Bounds,
) -> Result<Option<u64>, ToolError> {
    let v = read_strict(
        params,
        key,
        "positive integer",
        |f| is_safe_integer(f) && f > 0.0,
        bounds,
    )?;
    Ok(v.map(|f| f as u64))
}

/// A strict non-negative integer (`>= 0`); blank strings count as absent.
pub fn read_non_negative_integer(
    params: &Map<String, Value>,
    key: &str,
    bounds: Bounds,
) -> Result<Option<u64>, ToolError> {
    let v = read_strict(
        params,
        key,
        "non-negative integer",
        |f| is_safe_integer(f) && f >= 0.0,
        bounds,
    )?;
    Ok(v.map(|f| f as u64))
}

/// A strict finite number; blank strings count as absent.
pub fn read_finite_number(
    params: &Map<String, Value>,
    key: &str,
    bounds: Bounds,
) -> Result<Option<f64>, ToolError> {
    read_strict(params, key, "finite number", |_| true, bounds)
}

/// A list of strings: an array's string entries (trimmed, empties dropped),
/// or a single string as a one-element list.
pub fn read_string_array(
    params: &Map<String, Value>,
    key: &str,
    required: bool,
    label: Option<&str>,
) -> Result<Option<Vec<String>>, ToolError> {
    let list: Option<Vec<String>> = match lookup(params, key) {
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
        ),
        Some(Value::String(s)) if !s.trim().is_empty() => Some(vec![s.trim().to_owned()]),
        _ => None,
    };
    match list {
        Some(l) if !l.is_empty() => Ok(Some(l)),
        _ if required => Err(required_error(key, label)),
        Some(l) => Ok(Some(l)),
        None => Ok(None),
    }
}

/// A boolean: `true`/`false`, or the strings `"true"`/`"false"` (any case,
/// trimmed). Anything else present is an input error.
pub fn read_bool(params: &Map<String, Value>, key: &str) -> Result<Option<bool>, ToolError> {
    match lookup(params, key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "true" => Ok(Some(true)),
            "false" => Ok(Some(false)),
            "" => Ok(None),
            _ => Err(ToolError::input(
                key,
                format!("{key} must be true or false, got {}", preview(s)),
            )),
        },
        Some(other) => Err(ToolError::input(
            key,
            format!("{key} must be true or false, got {}", json_type(other)),
        )),
    }
}

/// OpenClaw's action gate: an action is enabled unless its entry is
/// literally `false`; missing entries take `default`.
pub fn action_enabled(actions: Option<&Map<String, Value>>, key: &str, default: bool) -> bool {
    match actions.and_then(|a| a.get(key)) {
        Some(Value::Bool(false)) => false,
        Some(_) => true,
        None => default,
    }
}

/// Refuse any key of `params` that is not one of `known` (each also
/// accepted in its snake_case spelling, as [`lookup`] reads it), and two
/// spellings of one parameter with different values (`path` and
/// `file_path`, `oldText` and `old_text`). `aliases` lists the extra
/// spellings of a parameter as `(alias, canonical)`; an alias counts as
/// that parameter.
///
/// A key the tool would ignore turns one call into a different call (a
/// `cwd` that is not `workdir` runs the command elsewhere than the model
/// meant; a second path key escapes a check that read the first), so it
/// is an input error ([`ToolErrorCode::InputUnknownParam`]) naming the key,
/// with the accepted keys in the message and `details.accepted`.
pub fn refuse_unknown_keys<S: AsRef<str>>(
    tool: &str,
    params: &Map<String, Value>,
    known: &[S],
    aliases: &[(&str, &str)],
) -> Result<(), ToolError> {
    let known: Vec<&str> = known.iter().map(AsRef::as_ref).collect();
    let known = known.as_slice();
    let canonical_of = |key: &str| -> Option<&str> {
        known
            .iter()
            .copied()
            .find(|k| *k == key || to_snake_case(k) == key)
            .or_else(|| {
                aliases
                    .iter()
                    .find(|(alias, _)| *alias == key || to_snake_case(alias) == key)
                    .map(|(_, canonical)| *canonical)
            })
    };
    let unknown: Vec<&str> = params
        .keys()
        .map(String::as_str)
        .filter(|k| canonical_of(k).is_none())
        .collect();
    if let Some(first) = unknown.first() {
        let listed = unknown
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let hint = match aliases
            .iter()
            .find(|(alias, _)| alias.eq_ignore_ascii_case(first))
        {
            Some((_, canonical)) => format!(" (did you mean `{canonical}`?)"),
            None => path_hint(first, known),
        };
        let what = if unknown.len() == 1 {
            "an unknown parameter"
        } else {
            "unknown parameters"
        };
        return Err(ToolError::new(
            ToolErrorCode::InputUnknownParam,
            format!(
                "{tool} got {what} {listed}{hint}; it takes {}. Remove the unknown keys instead of relying on them being ignored",
                known.join(", ")
            ),
        )
        .with_param(*first)
        .with_detail(
            "unknown",
            Value::Array(unknown.iter().map(|k| Value::from(*k)).collect()),
        )
        .with_detail(
            "accepted",
            Value::Array(known.iter().map(|k| Value::from(*k)).collect()),
        ));
    }
    // Two spellings of one parameter must agree.
    let mut seen: Vec<(&str, &str, &Value)> = Vec::new();
    for (key, value) in params {
        if value.is_null() {
            continue;
        }
        let Some(canonical) = canonical_of(key) else {
            continue;
        };
        if let Some((other, _, _)) = seen.iter().find(|(_, c, v)| *c == canonical && *v != value) {
            return Err(ToolError::new(
                ToolErrorCode::InputUnknownParam,
                format!(
                    "{tool} got both `{other}` and `{key}`, two spellings of `{canonical}`, with different values; give `{canonical}` once"
                ),
            )
            .with_param(key.as_str()));
        }
        seen.push((key.as_str(), canonical, value));
    }
    Ok(())
}

/// A hint for an unknown key that looks like a path or a directory.
fn path_hint(key: &str, known: &[&str]) -> String {
    let lower = key.to_ascii_lowercase();
    let dir_like = [
        "cwd",
        "dir",
        "directory",
        "working_dir",
        "workingdir",
        "workdirectory",
    ];
    if dir_like.contains(&lower.as_str()) && known.contains(&"workdir") {
        return " (the working directory goes in `workdir`)".to_owned();
    }
    if (lower.contains("path") || lower.contains("file") || lower.contains("dir"))
        && known.contains(&"path")
    {
        return " (the file goes in `path`)".to_owned();
    }
    String::new()
}

/// The JSON type name of a value, for messages.
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A quoted preview of at most 40 characters.
fn preview(s: &str) -> String {
    let mut p: String = s.chars().take(40).collect();
    if s.chars().count() > 40 {
        p.push('…');
    }
    format!("{p:?}")
}

#[cfg(test)]
#[path = "params_tests.rs"]
mod tests;
