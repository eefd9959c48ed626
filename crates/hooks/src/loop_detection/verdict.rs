//! What a loop check decides.

use serde::Serialize;

/// The detectors, in OpenClaw's evaluation order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LoopDetectorKind {
    /// The same missing tool called again and again (critical only).
    UnknownToolRepeat,
    /// A no-progress streak long enough to stop the whole run (critical
    /// only, any tool).
    GlobalCircuitBreaker,
    /// A polling tool that keeps returning the same thing.
    KnownPollNoProgress,
    /// Two call signatures alternating back and forth.
    PingPong,
    /// The same call repeated (warning) with the same outcome (critical).
    GenericRepeat,
}

impl LoopDetectorKind {
    /// OpenClaw's id for the detector, e.g. `global_circuit_breaker`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::UnknownToolRepeat => "unknown_tool_repeat",
            Self::GlobalCircuitBreaker => "global_circuit_breaker",
            Self::KnownPollNoProgress => "known_poll_no_progress",
            Self::PingPong => "ping_pong",
            Self::GenericRepeat => "generic_repeat",
        }
    }
}

impl std::fmt::Display for LoopDetectorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The outcome of [`LoopDetector::check`](super::LoopDetector::check).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "level",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum LoopVerdict {
    /// No loop: let the call through.
    Ok,
    /// A suspected loop: let the call through, and log `message` when
    /// `emit` is set.
    Warning {
        /// The detector that fired.
        detector: LoopDetectorKind,
        /// The repeat count the detector saw.
        count: usize,
        /// The "WARNING: …" text.
        message: String,
        /// The run-scoped warning key (`<runId>:<key>`, or the bare key
        /// outside a run) used for dedupe.
        key: String,
        /// Whether this warning should be logged: true once per bucket of
        /// ten counts for the key (at 10, 20, …).
        emit: bool,
    },
    /// A loop: veto the call with `message` (denied reason `tool-loop`).
    Critical {
        /// The detector that fired.
        detector: LoopDetectorKind,
        /// The repeat count the detector saw.
        count: usize,
        /// The "CRITICAL: …" text, shown to the model as the block reason.
        message: String,
        /// Whether the host should abort the whole run (set by the global
        /// circuit breaker).
        stop_run: bool,
    },
}

impl LoopVerdict {
    /// Whether the verdict is [`LoopVerdict::Ok`].
    pub fn is_ok(&self) -> bool {
        matches!(self, Self::Ok)
    }

    /// Whether the verdict vetoes the call.
    pub fn is_critical(&self) -> bool {
        matches!(self, Self::Critical { .. })
    }

    /// The detector that fired, if any.
    pub fn detector(&self) -> Option<LoopDetectorKind> {
        match self {
            Self::Ok => None,
            Self::Warning { detector, .. } | Self::Critical { detector, .. } => Some(*detector),
        }
    }
}
