//! What a backend tells its embedder about its sandboxes outside any one
//! call: [`SandboxEvent`]s, delivered to the [`SandboxEventSink`] the
//! embedder installs (the gateway writes each one into its call journal).

use std::sync::Arc;

use serde::Serialize;

/// Why a backend threw a sandbox away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
#[non_exhaustive]
pub enum RecycleReason {
    /// A command in it was killed by the kernel's OOM killer (the engine
    /// reported an OOM for the container): whatever filled its memory
    /// (a full tmpfs, a leaked daemon) would get every later command killed
    /// too.
    OomKilled,
    /// Commands in it were killed (`SIGKILL`, exit 137) by something other
    /// than Talon this many times in a row.
    RepeatedKills {
        /// Consecutive kills seen.
        count: u32,
    },
}

impl RecycleReason {
    /// A stable snake-case code (`oom_killed`, `repeated_kills`).
    pub fn code(self) -> &'static str {
        match self {
            RecycleReason::OomKilled => "oom_killed",
            RecycleReason::RepeatedKills { .. } => "repeated_kills",
        }
    }
}

impl std::fmt::Display for RecycleReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecycleReason::OomKilled => f.write_str("a command was OOM-killed"),
            RecycleReason::RepeatedKills { count } => {
                write!(f, "{count} commands in a row were killed by the engine")
            }
        }
    }
}

/// A sandbox was removed by its backend because it could no longer be
/// trusted to run commands; the next `ensure` of its scope creates a fresh
/// one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxRecycled {
    /// The backend id (`docker`).
    pub backend_id: String,
    /// The sandbox (container) name.
    pub name: String,
    /// The engine's id of the removed container.
    pub container_id: String,
    /// The scope key it served (`agent:main`, a session key, `shared`).
    pub scope_key: String,
    /// Why it was removed.
    pub reason: RecycleReason,
    /// The exit code of the command that triggered it.
    pub exit_code: i64,
    /// When, Unix milliseconds.
    pub at_ms: u64,
    /// Whether the removal succeeded (when not, the next `ensure` still
    /// finds the container; the event says so rather than nothing).
    pub removed: bool,
}

/// Something a backend reports about a sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "event")]
#[non_exhaustive]
pub enum SandboxEvent {
    /// A sandbox was removed so the next use gets a fresh one.
    Recycled(SandboxRecycled),
}

/// Where a backend's [`SandboxEvent`]s go. Called on the backend's task:
/// an implementation must not block (queue the work instead).
pub trait SandboxEventSink: Send + Sync + std::fmt::Debug {
    /// One event.
    fn event(&self, event: &SandboxEvent);
}

/// A shared sink.
pub type SharedEventSink = Arc<dyn SandboxEventSink>;
