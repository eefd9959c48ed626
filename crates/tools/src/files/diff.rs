//! A small unified diff of one file's change, for `details`.

use std::time::Duration;

use similar::{ChangeTag, TextDiff};

/// Most bytes of diff text kept in details.
const MAX_DIFF_BYTES: usize = 16 * 1024;

/// What changed in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DiffSummary {
    /// A unified diff (3 lines of context), cut at 16 KiB.
    pub(crate) diff: String,
    /// Lines added.
    pub(crate) added: usize,
    /// Lines removed.
    pub(crate) removed: usize,
    /// The first changed line of the new text (1-based), if any changed.
    pub(crate) first_changed_line: Option<usize>,
}

/// The diff from `old` to `new` of the file `path`.
pub(crate) fn summarize(path: &str, old: &str, new: &str) -> DiffSummary {
    // Bounded: a huge file with scattered changes gets a coarser diff, not
    // a slow call.
    let diff = TextDiff::configure()
        .timeout(Duration::from_millis(300))
        .diff_lines(old, new);
    let mut added = 0;
    let mut removed = 0;
    let mut first_changed_line = None;
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => {
                added += 1;
                if first_changed_line.is_none() {
                    first_changed_line = change.new_index().map(|i| i + 1);
                }
            }
            ChangeTag::Delete => {
                removed += 1;
                if first_changed_line.is_none() {
                    first_changed_line = change.old_index().map(|i| i + 1);
                }
            }
            ChangeTag::Equal => {}
        }
    }
    let mut text = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string();
    if text.len() > MAX_DIFF_BYTES {
        let cut = super::common::cut_at_char_boundary(&text, MAX_DIFF_BYTES).len();
        text.truncate(cut);
        text.push_str("\n… (diff cut at 16 KiB)\n");
    }
    DiffSummary {
        diff: text,
        added,
        removed,
        first_changed_line,
    }
}
