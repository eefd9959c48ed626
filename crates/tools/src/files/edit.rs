//! The `edit` tool.

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use talon_fs_bridge::{FsBridge, FsError, FsErrorCode};
use talon_tool_catalog::params::{json_type, lookup};
use talon_tool_catalog::{
    CancelExt, CancellationToken, ContentBlock, Tool, ToolCall, ToolContext, ToolError, ToolResult,
    ToolSpec,
};

use super::common::{PATH_ALIAS, check_keys, fs_error, optional_text, require_path};
use super::diff::{DiffSummary, summarize};
use super::edit_match::{EditError, Replacement, apply_edits};
use super::spec_for;

/// Most replacements one call may carry.
const MAX_EDITS: usize = 100;

/// `edit`: exact text replacements in one file, all applied or none,
/// through a [`FsBridge`].
#[derive(Debug, Clone)]
pub struct EditTool {
    spec: ToolSpec,
    bridge: Arc<dyn FsBridge>,
}

/// The `EditTool`'s spec (schema and model-facing description), without
/// building the tool: what the runtime lists before constructing it.
pub fn edit_spec() -> ToolSpec {
    spec_for(
        "edit",
        "Edit",
        "Replace exact text in one file. Give path and edits: [{oldText, newText}, ...] (or a single oldText/newText pair). Each oldText must occur exactly once in the current file: copy it from a fresh read, with its exact indentation and whitespace, and include enough surrounding lines to make it unique. Edits are matched against the file as it is before any of them, must not overlap, and are applied together or not at all. To delete text, use an empty newText; to rewrite a whole file, use write.",
    )
}

impl EditTool {
    /// The tool on `bridge`.
    pub fn new(bridge: Arc<dyn FsBridge>) -> Self {
        EditTool {
            spec: edit_spec(),
            bridge,
        }
    }
}

/// The spellings of `oldText`/`newText` OpenClaw accepts for Claude
/// Code compatibility (`old_string`, `new_string`).
const TEXT_ALIASES: [(&str, &str); 2] = [("old_string", "oldText"), ("new_string", "newText")];

/// The first of `keys` present (and not null) as verbatim text.
fn optional_text_any(
    params: &Map<String, Value>,
    keys: &[&str],
) -> Result<Option<String>, ToolError> {
    for key in keys {
        if let Some(text) = optional_text(params, key)? {
            return Ok(Some(text));
        }
    }
    Ok(None)
}

/// The replacements of a call: `edits[]`, then the single
/// `oldText`/`newText` pair if given.
fn replacements(params: &Map<String, Value>) -> Result<Vec<Replacement>, ToolError> {
    let mut out = Vec::new();
    match lookup(params, "edits") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let param = format!("edits[{i}]");
                let Value::Object(entry) = item else {
                    return Err(ToolError::input(
                        param.clone(),
                        format!(
                            "{param} must be an object {{\"oldText\": ..., \"newText\": ...}}, got {}",
                            json_type(item)
                        ),
                    ));
                };
                check_keys("edit", entry, &["oldText", "newText"], &TEXT_ALIASES).map_err(|e| {
                    let key = e.param().unwrap_or_default().to_owned();
                    e.with_param(format!("{param}.{key}"))
                })?;
                let text = |key: &str, alias: &str| -> Result<String, ToolError> {
                    let name = format!("{param}.{key}");
                    match lookup(entry, key).or_else(|| lookup(entry, alias)) {
                        Some(Value::String(s)) => Ok(s.clone()),
                        None | Some(Value::Null) => {
                            Err(ToolError::input(name.clone(), format!("{name} required")))
                        }
                        Some(other) => Err(ToolError::input(
                            name.clone(),
                            format!("{name} must be a string, got {}", json_type(other)),
                        )),
                    }
                };
                out.push(Replacement {
                    old_text: text("oldText", "old_string")?,
                    new_text: text("newText", "new_string")?,
                    param: format!("{param}.oldText"),
                });
            }
        }
        Some(other) => {
            return Err(ToolError::input(
                "edits",
                format!(
                    "edits must be an array of {{\"oldText\", \"newText\"}} objects, got {}",
                    json_type(other)
                ),
            ));
        }
    }
    let old = optional_text_any(params, &["oldText", "old_string"])?;
    let new = optional_text_any(params, &["newText", "new_string"])?;
    match (old, new) {
        (Some(old_text), Some(new_text)) => out.push(Replacement {
            param: "oldText".to_owned(),
            old_text,
            new_text,
        }),
        (Some(_), None) => {
            return Err(ToolError::input(
                "newText",
                "newText required with oldText (use \"\" to delete the text)",
            ));
        }
        (None, Some(_)) => {
            return Err(ToolError::input(
                "oldText",
                "oldText required with newText: the exact text to replace",
            ));
        }
        (None, None) => {}
    }
    if out.is_empty() {
        return Err(ToolError::input(
            "edits",
            "edits required: give edits: [{\"oldText\": ..., \"newText\": ...}] (or oldText and newText)",
        ));
    }
    if out.len() > MAX_EDITS {
        return Err(ToolError::input(
            "edits",
            format!(
                "{} edits in one call; at most {MAX_EDITS} are allowed (split the work, or use write)",
                out.len()
            ),
        ));
    }
    Ok(out)
}

/// What the edit callback leaves behind for the tool.
enum Outcome {
    Applied(DiffSummary),
    Refused(EditError),
    NotText,
}

#[async_trait::async_trait]
impl Tool for EditTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(
        &self,
        call: &ToolCall,
        _ctx: &ToolContext,
        abort: &CancellationToken,
    ) -> Result<ToolResult, ToolError> {
        abort.check()?;
        let aliases = [PATH_ALIAS, TEXT_ALIASES[0], TEXT_ALIASES[1]];
        check_keys(
            "edit",
            &call.params,
            &["path", "edits", "oldText", "newText"],
            &aliases,
        )?;
        let path = require_path(&call.params)?;
        let edits = replacements(&call.params)?;
        let outcome: Mutex<Option<Outcome>> = Mutex::new(None);
        let keep = |o: Outcome| {
            if let Ok(mut slot) = outcome.lock() {
                *slot = Some(o);
            }
        };
        let callback = |current: &[u8]| -> Result<Vec<u8>, FsError> {
            let Ok(text) = std::str::from_utf8(current) else {
                keep(Outcome::NotText);
                return Err(FsError::rejected(
                    path.as_str(),
                    format!("{path} is not UTF-8 text; edit changes text files only"),
                ));
            };
            match apply_edits(text, &edits) {
                Ok(new) => {
                    keep(Outcome::Applied(summarize(&path, text, &new)));
                    Ok(new.into_bytes())
                }
                Err(e) => {
                    let message = e.message(&path);
                    keep(Outcome::Refused(e));
                    Err(FsError::rejected(path.as_str(), message))
                }
            }
        };
        let result = self.bridge.edit(&path, &callback).await;
        let outcome = outcome.lock().ok().and_then(|mut o| o.take());
        let (report, summary) = match (result, outcome) {
            (Ok(report), Some(Outcome::Applied(summary))) => (report, Some(summary)),
            (Ok(report), _) => (report, None),
            (Err(e), Some(Outcome::Refused(refusal))) if e.code == FsErrorCode::Rejected => {
                return Err(ToolError::input(refusal.param(), refusal.message(&path)));
            }
            (Err(e), Some(Outcome::NotText)) if e.code == FsErrorCode::Rejected => {
                return Err(ToolError::input("path", e.message));
            }
            (Err(e), _) => return Err(fs_error("path", e)),
        };
        let count = edits.len();
        let plural = if count == 1 { "" } else { "s" };
        let mut text = format!("Edited {path}: {count} replacement{plural}");
        if let Some(s) = &summary {
            text.push_str(&format!(" (+{} -{} lines", s.added, s.removed));
            if let Some(line) = s.first_changed_line {
                text.push_str(&format!(", first change at line {line}"));
            }
            text.push(')');
        }
        text.push('.');
        Ok(ToolResult {
            content: vec![ContentBlock::Text { text }],
            details: json!({
                "path": path,
                "containerPath": report.container_path,
                "replacements": count,
                "bytes": report.bytes,
                "added": summary.as_ref().map(|s| s.added),
                "removed": summary.as_ref().map(|s| s.removed),
                "firstChangedLine": summary.as_ref().and_then(|s| s.first_changed_line),
                "diff": summary.map(|s| s.diff),
            }),
            status: talon_tool_catalog::ResultStatus::Ok,
        })
    }
}
