//! Reminder context: recent chat lines appended to a new job's text.

use std::fmt::Debug;

/// Most messages read.
pub const MAX_CONTEXT_MESSAGES: usize = 10;
/// Longest line per message (characters).
pub const MAX_CONTEXT_LINE_CHARS: usize = 220;
/// Longest context in total (characters).
pub const MAX_CONTEXT_TOTAL_CHARS: usize = 700;
/// Put between the reminder text and the context lines.
pub const CONTEXT_MARKER: &str = "\n\nRecent context:\n";

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryMessage {
    /// `user`, `assistant`…
    pub role: String,
    /// The text.
    pub text: String,
}

/// Where recent chat history comes from (the gateway's `chat.history`).
#[async_trait::async_trait]
pub trait ChatHistory: Send + Sync + Debug {
    /// Up to `limit` most recent messages of `session_key`, oldest first.
    async fn recent(
        &self,
        session_key: &str,
        limit: usize,
    ) -> Result<Vec<HistoryMessage>, talon_tool_catalog::ToolError>;
}

fn truncate(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let mut out: String = flat.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The context block for up to `count` (≤ 10) messages: `- role: text`
/// lines, each ≤ 220 characters, ≤ 700 in total (lines that would pass the
/// total are left out). Empty when there is nothing to add.
pub fn build_reminder_context(messages: &[HistoryMessage], count: usize) -> String {
    let count = count.min(MAX_CONTEXT_MESSAGES);
    let start = messages.len().saturating_sub(count);
    let mut lines = Vec::new();
    let mut total = 0;
    for m in &messages[start..] {
        if m.text.trim().is_empty() {
            continue;
        }
        let label = if m.role.trim().is_empty() {
            "message"
        } else {
            m.role.trim()
        };
        let line = truncate(&format!("- {label}: {}", m.text), MAX_CONTEXT_LINE_CHARS);
        let len = line.chars().count() + usize::from(!lines.is_empty());
        if total + len > MAX_CONTEXT_TOTAL_CHARS {
            break;
        }
        total += len;
        lines.push(line);
    }
    if lines.is_empty() {
        String::new()
    } else {
        format!("{CONTEXT_MARKER}{}", lines.join("\n"))
    }
}
