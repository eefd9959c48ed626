//! Collecting issues and notices while walking a parsed file.

use crate::error::{Issue, Notice};
use crate::spans::{Pos, Seg, render_path};

/// More issues than this are summarised in one final issue, so a hostile
/// file cannot make the error report unbounded.
pub(crate) const MAX_ISSUES: usize = 500;

/// Issues and notices found so far.
#[derive(Debug, Default)]
pub(crate) struct Findings {
    pub(crate) issues: Vec<Issue>,
    pub(crate) notices: Vec<Notice>,
    dropped: usize,
    /// `acceptUnenforced` as written, and whether each entry was used.
    accepted: Vec<(String, bool)>,
    /// The restrictions dropped because `acceptUnenforced` lists them.
    pub(crate) dropped_knowingly: Vec<String>,
}

impl Findings {
    /// Take the operator's `acceptUnenforced` list (key paths).
    pub(crate) fn accept(&mut self, paths: Vec<String>) {
        self.accepted = paths.into_iter().map(|p| (p, false)).collect();
    }

    /// A restriction Talon cannot enforce at `path`: an issue, unless
    /// `acceptUnenforced` names exactly this key (as the error prints it;
    /// a parent never covers the restrictions below it), then a notice and
    /// a record in [`Self::dropped_knowingly`].
    pub(crate) fn refuse_unless_accepted(&mut self, path: &[Seg], pos: Pos, message: &str) {
        let rendered = render_path(path);
        let hit = self.accepted.iter_mut().find(|(a, _)| rendered == *a);
        match hit {
            Some((_, used)) => {
                *used = true;
                self.notice(
                    path,
                    pos,
                    "restriction Talon does not enforce, dropped knowingly (listed in acceptUnenforced)",
                );
                self.dropped_knowingly.push(rendered);
            }
            None => self.issue(path, pos, message),
        }
    }

    /// The `acceptUnenforced` entries that matched no refused restriction.
    pub(crate) fn unused_acceptances(&self) -> Vec<(usize, String)> {
        self.accepted
            .iter()
            .enumerate()
            .filter(|(_, (_, used))| !used)
            .map(|(i, (p, _))| (i, p.clone()))
            .collect()
    }

    /// Record a problem at `path`.
    pub(crate) fn issue(&mut self, path: &[Seg], pos: Pos, message: impl Into<String>) {
        if self.issues.len() >= MAX_ISSUES {
            self.dropped += 1;
            return;
        }
        self.issues.push(Issue {
            key_path: render_path(path),
            line: pos.line,
            column: pos.column,
            message: message.into(),
        });
    }

    /// Whether an issue was recorded at `path` or below it.
    pub(crate) fn has_issue_within(&self, path: &[Seg]) -> bool {
        let at = render_path(path);
        self.issues.iter().any(|i| {
            i.key_path == at
                || i.key_path
                    .strip_prefix(at.as_str())
                    .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
        })
    }

    /// Record a notice at `path`.
    pub(crate) fn notice(&mut self, path: &[Seg], pos: Pos, message: impl Into<String>) {
        if self.notices.len() >= MAX_ISSUES {
            return;
        }
        self.notices.push(Notice {
            key_path: render_path(path),
            line: pos.line,
            message: message.into(),
        });
    }

    /// The issues in file order (by line, column, then path), with a final
    /// summary if some were dropped.
    pub(crate) fn sorted_issues(&mut self) -> Vec<Issue> {
        let mut issues = std::mem::take(&mut self.issues);
        issues.sort_by(|a, b| {
            (a.line, a.column, &a.key_path, &a.message).cmp(&(
                b.line,
                b.column,
                &b.key_path,
                &b.message,
            ))
        });
        issues.dedup();
        if self.dropped > 0 {
            let last = issues.last().map_or(0, |i| i.line);
            issues.push(Issue {
                key_path: String::new(),
                line: last,
                column: 1,
                message: format!(
                    "{} more problems not listed (only the first {MAX_ISSUES} are shown)",
                    self.dropped
                ),
            });
        }
        issues
    }

    /// The notices in file order.
    pub(crate) fn sorted_notices(&mut self) -> Vec<Notice> {
        let mut notices = std::mem::take(&mut self.notices);
        notices.sort_by(|a, b| (a.line, &a.key_path).cmp(&(b.line, &b.key_path)));
        notices
    }
}
