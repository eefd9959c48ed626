//! The file tools: `read`, `write`, `edit` and `apply_patch`.
//!
//! Each takes an `Arc<dyn FsBridge>`, so the same tool runs on the host
//! (a bridge over the workspace) and in a sandbox (a bridge over the
//! sandbox's mount table); every path a model gives, including the paths
//! inside a patch, is resolved by the bridge, which refuses `..`, absolute
//! paths outside the mounts, symlinks that leave a mount root and writes
//! to read-only mounts.
//!
//! Bridge refusals become tool errors whose
//! [code](talon_tool_catalog::ToolErrorCode) is the bridge's code
//! (`fs.escape`, `fs.outside_mounts`, `fs.read_only`, `fs.not_found`, ...)
//! and whose details carry the path; refusals caused by the model's input
//! are input errors naming the parameter, an unreachable backend is
//! unavailable and an I/O failure is an execution failure.
//!
//! Decisions taken here:
//! - `read` returns text as stored, without line numbers, so that text
//!   copied from it matches `edit`'s exact `oldText`.
//! - `edit` matches each `oldText` against the file as it was before the
//!   call (OpenClaw's rule); an LF `oldText` also matches a CRLF file.
//! - `apply_patch` anchors (`@@ text`) move the search forward to the first
//!   matching line; a hunk without anchors must match exactly once after
//!   the previous hunk. A `*** Move to:` onto an existing file is refused
//!   (codex overwrites) so that undo never needs to restore a third file.
//! - Once `apply_patch` starts writing it does not stop on abort: it
//!   finishes or undoes, never leaves half a patch.

mod apply_patch;
mod common;
mod diff;
mod edit;
mod edit_match;
mod patch_apply;
mod read;
mod read_format;
mod write;

pub use self::apply_patch::{ApplyPatchTool, apply_patch_spec};
pub use self::edit::{EditTool, edit_spec};
pub use self::read::{ReadTool, read_spec};
pub use self::read_format::ReadLimits;
pub use self::write::{WriteTool, write_spec};

use talon_tool_catalog::{Section, ToolFamily, ToolSpec};

/// The catalog spec of a file tool (schema, flags, serial mode), with a
/// description written for the model.
fn spec_for(id: &str, label: &str, description: impl Into<String>) -> ToolSpec {
    ToolSpec::core(id)
        .unwrap_or_else(|| {
            ToolSpec::new(
                id,
                ToolFamily::Core {
                    section: Section::Fs,
                },
            )
            .with_label(label)
        })
        .with_description(description)
}
