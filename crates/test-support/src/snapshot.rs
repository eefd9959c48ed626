//! Redaction for insta snapshots of JSON that Talon prints or answers:
//! volatile values (times, ids, pids, tokens, hashes over paths) and temp
//! dir paths are replaced by stable placeholders, so a snapshot records
//! the shape and the stable values and nothing that changes per run.

use std::path::Path;

use serde_json::Value;

/// Keys whose values change from run to run: replaced by `"[key]"`.
/// (`id` and `version` are not among them: a layer or rule id is stable;
/// add them with [`Redactions::key`] where they are not.)
pub const VOLATILE_KEYS: &[&str] = &[
    "callId",
    "toolCallId",
    "sessionId",
    "runId",
    "jobId",
    "taskId",
    "requestId",
    "pid",
    "token",
    "configHash",
    "createdAt",
    "createdAtMs",
    "updatedAt",
    "updatedAtMs",
    "startedAt",
    "startedAtMs",
    "endedAt",
    "endedAtMs",
    "finishedAt",
    "finishedAtMs",
    "lastUsedAtMs",
    "expiresAt",
    "expiresAtMs",
    "durationMs",
    "elapsedMs",
    "uptimeMs",
    "uptimeSeconds",
    "now",
    "nowMs",
    "ts",
];

/// What to replace: volatile keys and path prefixes.
#[derive(Debug, Clone, Default)]
pub struct Redactions {
    keys: Vec<String>,
    paths: Vec<(String, String)>,
}

impl Redactions {
    /// The [`VOLATILE_KEYS`].
    pub fn new() -> Redactions {
        Redactions {
            keys: VOLATILE_KEYS.iter().map(|k| (*k).to_owned()).collect(),
            paths: Vec::new(),
        }
    }

    /// Also replace the values of `key`.
    pub fn key(mut self, key: &str) -> Redactions {
        self.keys.push(key.to_owned());
        self
    }

    /// Replace `path` (as given and canonicalised) inside every string by
    /// `placeholder` (e.g. `"[tmp]"`).
    pub fn path(mut self, path: &Path, placeholder: &str) -> Redactions {
        let mut forms = vec![path.display().to_string()];
        if let Ok(real) = std::fs::canonicalize(path) {
            forms.push(real.display().to_string());
        }
        for form in forms {
            if !form.is_empty() && !self.paths.iter().any(|(p, _)| *p == form) {
                self.paths.push((form, placeholder.to_owned()));
            }
        }
        // Longest first, so a nested path wins over its parent.
        self.paths
            .sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
        self
    }

    /// `value` with every redaction applied. A volatile key's string value
    /// (6 characters or more) is also replaced where it appears inside
    /// other strings, such as a run id quoted in a tool's text output.
    pub fn apply(&self, value: &Value) -> Value {
        let mut replacements = self.paths.clone();
        self.collect(value, &mut replacements);
        replacements.sort_by_key(|(text, _)| std::cmp::Reverse(text.len()));
        let mut out = value.clone();
        self.redact(&mut out, &replacements);
        out
    }

    fn is_volatile(&self, key: &str) -> bool {
        self.keys.iter().any(|k| k == key)
    }

    fn collect(&self, value: &Value, out: &mut Vec<(String, String)>) {
        match value {
            Value::Object(map) => {
                for (key, v) in map {
                    match v {
                        Value::String(text) if self.is_volatile(key) && text.len() >= 6 => {
                            if !out.iter().any(|(t, _)| t == text) {
                                out.push((text.clone(), format!("[{key}]")));
                            }
                        }
                        _ => self.collect(v, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| self.collect(v, out)),
            Value::String(_) | Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    fn redact(&self, value: &mut Value, replacements: &[(String, String)]) {
        match value {
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    if self.is_volatile(key) && !v.is_null() {
                        *v = Value::String(format!("[{key}]"));
                    } else {
                        self.redact(v, replacements);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact(v, replacements)),
            Value::String(text) => {
                for (from, to) in replacements {
                    if text.contains(from.as_str()) {
                        *text = text.replace(from.as_str(), to);
                    }
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
}
