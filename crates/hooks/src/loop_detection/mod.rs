//! Tool-call loop detection, the first step of the `before_tool_call`
//! gate (modelled on OpenClaw's `src/agents/tool-loop-detection.ts`).
//!
//! The detector keeps a sliding window of recent calls per session and,
//! before each call, runs five detectors in a fixed order against the
//! records of the same run:
//!
//! 1. `unknown_tool_repeat`: the same missing tool called again and again
//!    (critical).
//! 2. `global_circuit_breaker`: the same call with identical outcomes
//!    ≥ `globalCircuitBreakerThreshold` times (critical; the host stops the
//!    whole run).
//! 3. `known_poll_no_progress`: a polling call without progress (warning,
//!    then critical).
//! 4. `ping_pong`: two signatures alternating (warning; critical only when
//!    both sides keep returning the same outcome).
//! 5. `generic_repeat`: the same call repeated (warning), with identical
//!    outcomes (critical).
//!
//! Loop detection is disabled by default. Unlike OpenClaw (its bug
//! #127701), a call the detector vetoes is recorded too, with an outcome
//! that repeats the call's previous one, so a run that keeps retrying after
//! a critical veto reaches the global circuit breaker.

pub use self::config::{
    LoopDetectionConfig, LoopDetectorsConfig, MAX_HISTORY_SIZE, ResolvedLoopDetection,
    ResolvedLoopDetectors,
};
pub use self::loop_detector::LoopDetector;
pub use self::outcome_hash::LoopOutcome;
pub use self::verdict::{LoopDetectorKind, LoopVerdict};

mod config;
mod detectors;
mod hashing;
mod history;
mod loop_detector;
mod outcome_hash;
mod verdict;

#[cfg(test)]
mod test_support;
