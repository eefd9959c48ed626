//! `cron`: the model's handle on scheduled jobs (status, list, get, add,
//! update, remove, run, runs, wake), enforcing the creator cap and, in runs
//! a cron job started, the self-scope.

mod context;
mod scope;
mod tool;

pub use self::context::{
    CONTEXT_MARKER, ChatHistory, HistoryMessage, MAX_CONTEXT_LINE_CHARS, MAX_CONTEXT_MESSAGES,
    MAX_CONTEXT_TOTAL_CHARS, build_reminder_context,
};
pub use self::scope::CronToolScope;
pub use self::tool::CronTool;

#[cfg(test)]
#[path = "tool_tests.rs"]
mod tests;
