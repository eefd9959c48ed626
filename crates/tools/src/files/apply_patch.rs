//! The `apply_patch` tool: check every file section first, then write them
//! all, undoing what was written if a write fails.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};
use talon_fs_bridge::{Access, FsBridge, FsError, WriteOptions};
use talon_tool_catalog::{
    CancelExt, CancellationToken, ContentBlock, Tool, ToolCall, ToolContext, ToolError,
    ToolErrorCode, ToolResult, ToolSpec,
};
use tracing::warn;

use super::common::{check_keys, cut_at_char_boundary, fs_error, fs_error_details, require_text};
use super::diff::{DiffSummary, summarize};
use super::patch_apply::apply_hunks;
use super::spec_for;
use talon_patch::{FileOp, parse_patch};

/// `apply_patch`: a multi-file patch in the `*** Begin Patch` format,
/// applied all or nothing, through a [`FsBridge`].
#[derive(Debug, Clone)]
pub struct ApplyPatchTool {
    spec: ToolSpec,
    bridge: Arc<dyn FsBridge>,
}

/// The `ApplyPatchTool`'s spec (schema and model-facing description), without
/// building the tool: what the runtime lists before constructing it.
pub fn apply_patch_spec() -> ToolSpec {
    spec_for(
        "apply_patch",
        "Apply Patch",
        "Add, change, move or delete files with one patch, passed as input. Format: a line `*** Begin Patch`, then one section per file, then `*** End Patch`. Sections: `*** Add File: <path>` followed by the new file's lines, each prefixed with +; `*** Delete File: <path>`; `*** Update File: <path>`, optionally followed by `*** Move to: <new path>`, then hunks. A hunk starts with `@@`, optionally followed by a line of the file to search from (such as a function signature), and lists lines prefixed with a space (unchanged context: about 3 lines before and after each change), - (removed) or + (added); `*** End of File` after a hunk anchors it at the file's end. Context and removed lines must match the file exactly (trailing whitespace aside) and each hunk must match one place. Every section is checked before anything is written, and all files change or none do.",
    )
}

impl ApplyPatchTool {
    /// The tool on `bridge`.
    pub fn new(bridge: Arc<dyn FsBridge>) -> Self {
        ApplyPatchTool {
            spec: apply_patch_spec(),
            bridge,
        }
    }
}

/// One file change, computed before anything is written.
enum Planned {
    Add {
        path: String,
        content: String,
    },
    Delete {
        path: String,
        old: Vec<u8>,
    },
    Update {
        path: String,
        move_to: Option<String>,
        old: Vec<u8>,
        new: String,
        diff: DiffSummary,
    },
}

/// A step to undo, newest last.
enum Undo {
    /// Remove a file the patch created.
    Remove(String),
    /// Put back a file's old bytes (it exists, or was deleted).
    Restore { path: String, old: Vec<u8> },
}

fn input_error(message: String) -> ToolError {
    ToolError::input("input", message)
}

impl ApplyPatchTool {
    /// Resolve `path` for writing and register it, refusing a file named
    /// by two sections.
    async fn claim(
        &self,
        path: &str,
        section: &str,
        seen: &mut HashMap<String, String>,
    ) -> Result<bool, ToolError> {
        let resolved = self
            .bridge
            .resolve(path, Access::Write)
            .await
            .map_err(|e| patch_fs_error(section, e))?;
        if resolved.exists && resolved.container_path == resolved.mount {
            return Err(ToolError::new(
                ToolErrorCode::FsMountRoot,
                format!(
                    "{section}: `{}` is a mount root; a patch never deletes, replaces or moves onto one; name a file inside it",
                    shown(path)
                ),
            )
            .with_param("input"));
        }
        if let Some(earlier) = seen.insert(resolved.container_path.clone(), section.to_owned()) {
            return Err(input_error(format!(
                "{section} names the same file as {earlier}; put all changes to one file in one section"
            )));
        }
        Ok(resolved.exists)
    }

    /// Check every section and compute every new content.
    async fn plan(&self, ops: Vec<FileOp>) -> Result<Vec<Planned>, ToolError> {
        let mut seen = HashMap::new();
        let mut planned = Vec::with_capacity(ops.len());
        for op in ops {
            match op {
                FileOp::Add { path, content } => {
                    let section = format!("`Add File: {}`", shown(&path));
                    if self.claim(&path, &section, &mut seen).await? {
                        return Err(input_error(format!(
                            "{section}: the file already exists; use `*** Update File:` to change it, or delete it first"
                        )));
                    }
                    planned.push(Planned::Add { path, content });
                }
                FileOp::Delete { path } => {
                    let section = format!("`Delete File: {}`", shown(&path));
                    if !self.claim(&path, &section, &mut seen).await? {
                        return Err(input_error(format!(
                            "{section}: the file is missing; nothing to delete"
                        )));
                    }
                    let old = self.read_all(&path, &section).await?;
                    planned.push(Planned::Delete { path, old });
                }
                FileOp::Update {
                    path,
                    move_to,
                    hunks,
                } => {
                    let section = format!("`Update File: {}`", shown(&path));
                    if !self.claim(&path, &section, &mut seen).await? {
                        return Err(input_error(format!(
                            "{section}: the file is missing; use `*** Add File:` to create it"
                        )));
                    }
                    let old = self.read_all(&path, &section).await?;
                    let text = std::str::from_utf8(&old).map_err(|_| {
                        input_error(format!(
                            "{section}: the file is not UTF-8 text; apply_patch changes text files only"
                        ))
                    })?;
                    let new =
                        apply_hunks(text, &hunks).map_err(|e| input_error(e.message(&path)))?;
                    if let Some(dest) = &move_to {
                        let dest_section = format!("`Move to: {}` (of {section})", shown(dest));
                        if self.claim(dest, &dest_section, &mut seen).await? {
                            return Err(input_error(format!(
                                "{dest_section}: the destination already exists; delete it in the patch first or choose another path"
                            )));
                        }
                    }
                    let diff = summarize(move_to.as_deref().unwrap_or(&path), text, &new);
                    planned.push(Planned::Update {
                        path,
                        move_to,
                        old,
                        new,
                        diff,
                    });
                }
            }
        }
        Ok(planned)
    }

    async fn read_all(&self, path: &str, section: &str) -> Result<Vec<u8>, ToolError> {
        let contents = self
            .bridge
            .read(path, None)
            .await
            .map_err(|e| patch_fs_error(section, e))?;
        Ok(contents.bytes)
    }

    /// Write one planned change, recording how to undo it.
    async fn commit(&self, change: &Planned, undo: &mut Vec<Undo>) -> Result<(), FsError> {
        let create = WriteOptions {
            create_parents: true,
            create_new: true,
        };
        match change {
            Planned::Add { path, content } => {
                self.bridge.write(path, content.as_bytes(), create).await?;
                undo.push(Undo::Remove(path.clone()));
            }
            Planned::Delete { path, old } => {
                self.bridge.remove(path, false).await?;
                undo.push(Undo::Restore {
                    path: path.clone(),
                    old: old.clone(),
                });
            }
            Planned::Update {
                path,
                move_to: None,
                old,
                new,
                ..
            } => {
                let expected = old.as_slice();
                let replacement = new.as_bytes();
                let check = |current: &[u8]| -> Result<Vec<u8>, FsError> {
                    if current == expected {
                        Ok(replacement.to_vec())
                    } else {
                        Err(FsError::rejected(
                            path.as_str(),
                            format!("{path} changed while the patch was being applied"),
                        ))
                    }
                };
                self.bridge.edit(path, &check).await?;
                undo.push(Undo::Restore {
                    path: path.clone(),
                    old: old.clone(),
                });
            }
            Planned::Update {
                path,
                move_to: Some(dest),
                old,
                new,
                ..
            } => {
                self.bridge.write(dest, new.as_bytes(), create).await?;
                undo.push(Undo::Remove(dest.clone()));
                self.bridge.remove(path, false).await?;
                undo.push(Undo::Restore {
                    path: path.clone(),
                    old: old.clone(),
                });
            }
        }
        Ok(())
    }

    /// Undo written changes, newest first; returns the ones that failed.
    async fn roll_back(&self, undo: Vec<Undo>) -> Vec<(String, FsError)> {
        let mut failed = Vec::new();
        for step in undo.into_iter().rev() {
            let (path, result) = match step {
                Undo::Remove(path) => {
                    let r = self.bridge.remove(&path, false).await;
                    (path, r)
                }
                Undo::Restore { path, old } => {
                    let r = self
                        .bridge
                        .write(&path, &old, WriteOptions::default())
                        .await
                        .map(|_| ());
                    (path, r)
                }
            };
            if let Err(e) = result {
                warn!(path = %path, code = e.code.as_str(), "apply_patch: rollback step failed");
                failed.push((path, e));
            }
        }
        failed
    }
}

fn patch_fs_error(section: &str, e: FsError) -> ToolError {
    fs_error("input", e).context(section)
}

#[async_trait::async_trait]
impl Tool for ApplyPatchTool {
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
        check_keys("apply_patch", &call.params, &["input"], &[])?;
        let input = require_text(&call.params, "input")?;
        let patch = parse_patch(&input).map_err(|e| input_error(e.to_string()))?;
        let planned = self.plan(patch.ops).await?;
        // Past this point the patch is written to the end (or undone): an
        // abort between files would leave half a patch.
        abort.check()?;
        let mut undo = Vec::new();
        for (index, change) in planned.iter().enumerate() {
            if let Err(e) = self.commit(change, &mut undo).await {
                let section = describe(change);
                let written = undo.len();
                let failed = self.roll_back(undo).await;
                let cause = &e.message;
                let mut message = format!(
                    "apply_patch failed at section {} of {} ({section}): {cause}.",
                    index + 1,
                    planned.len()
                );
                if failed.is_empty() {
                    message.push_str(&format!(
                        " The {written} change{} already written {} undone; no file was changed.",
                        if written == 1 { "" } else { "s" },
                        if written == 1 { "was" } else { "were" }
                    ));
                } else {
                    let list: Vec<String> = failed
                        .iter()
                        .map(|(p, err)| format!("{p} ({}: {})", err.code.as_str(), err.message))
                        .collect();
                    message.push_str(&format!(
                        " Undoing the changes already written failed for: {}; those files may hold the patched content. Check them before retrying.",
                        list.join("; ")
                    ));
                }
                // The failing section's code is the error's code; the
                // rollback failures go into details with theirs.
                let rollback: Vec<Value> =
                    failed.iter().map(|(_, e)| fs_error_details(e)).collect();
                if !rollback.is_empty() {
                    let failures = Value::Array(rollback.clone());
                    warn!(failures = %failures, "apply_patch: incomplete rollback");
                }
                let mut err = fs_error("input", e);
                let mut details = err.details().cloned().unwrap_or_default();
                details.insert("section".into(), json!(index + 1));
                if !rollback.is_empty() {
                    details.insert("rollbackFailed".into(), Value::Array(rollback));
                }
                err = ToolError::new(err.code(), message).with_details(details);
                if err.is_input() {
                    err = err.with_param("input");
                }
                return Err(err);
            }
        }
        let mut lines = vec!["Success. Updated the following files:".to_owned()];
        let mut files = Vec::with_capacity(planned.len());
        for change in &planned {
            match change {
                Planned::Add { path, content } => {
                    lines.push(format!("A {path}"));
                    files.push(json!({
                        "path": path, "action": "add",
                        "added": content.lines().count(), "removed": 0,
                    }));
                }
                Planned::Delete { path, old } => {
                    lines.push(format!("D {path}"));
                    files.push(json!({
                        "path": path, "action": "delete",
                        "added": 0, "removed": String::from_utf8_lossy(old).lines().count(),
                    }));
                }
                Planned::Update {
                    path,
                    move_to,
                    diff,
                    ..
                } => {
                    match move_to {
                        Some(dest) => lines.push(format!("M {path} -> {dest}")),
                        None => lines.push(format!("M {path}")),
                    }
                    files.push(json!({
                        "path": path,
                        "action": if move_to.is_some() { "move" } else { "update" },
                        "movedTo": move_to,
                        "added": diff.added,
                        "removed": diff.removed,
                        "firstChangedLine": diff.first_changed_line,
                        "diff": diff.diff,
                    }));
                }
            }
        }
        Ok(ToolResult {
            content: vec![ContentBlock::Text {
                text: lines.join("\n"),
            }],
            details: json!({ "files": files }),
            status: talon_tool_catalog::ResultStatus::Ok,
        })
    }
}

fn describe(change: &Planned) -> String {
    match change {
        Planned::Add { path, .. } => format!("`Add File: {}`", shown(path)),
        Planned::Delete { path, .. } => format!("`Delete File: {}`", shown(path)),
        Planned::Update {
            path,
            move_to: Some(dest),
            ..
        } => format!("`Update File: {}` moved to {}", shown(path), shown(dest)),
        Planned::Update { path, .. } => format!("`Update File: {}`", shown(path)),
    }
}

/// A patch path as quoted in messages: at most 120 bytes (a refused path
/// can be many kilobytes long).
fn shown(path: &str) -> String {
    if path.len() <= 120 {
        return path.to_owned();
    }
    format!(
        "{}… ({} bytes)",
        cut_at_char_boundary(path, 120),
        path.len()
    )
}
