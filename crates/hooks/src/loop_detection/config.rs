//! The `tools.loopDetection` config block, its per-agent overlay and its
//! resolution into concrete thresholds (OpenClaw's defaults and fallbacks).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Default number of tool calls kept in each session's sliding window.
pub(crate) const DEFAULT_HISTORY_SIZE: usize = 30;
/// Default count at which the warning-level detectors fire.
pub(crate) const DEFAULT_WARNING_THRESHOLD: usize = 10;
/// Default count at which the critical-level detectors veto a call.
pub(crate) const DEFAULT_CRITICAL_THRESHOLD: usize = 20;
/// Default no-progress streak at which the global circuit breaker trips.
pub(crate) const DEFAULT_GLOBAL_CIRCUIT_BREAKER_THRESHOLD: usize = 30;
/// Default number of consecutive calls to one missing tool before a veto.
pub(crate) const DEFAULT_UNKNOWN_TOOL_THRESHOLD: usize = 10;

/// The `tools.loopDetection` config block, also used as the per-agent
/// overlay `agents.list[].tools.loopDetection`. Every field is optional;
/// [`LoopDetectionConfig::resolve`] fills in OpenClaw's defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoopDetectionConfig {
    /// Turns loop detection on. Off unless set to `true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Number of recent tool calls kept per session (default 30). Any JSON
    /// number is accepted; non-positive or non-integer values fall back to
    /// the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_size: Option<f64>,
    /// Count at which the warning-level detectors fire (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning_threshold: Option<f64>,
    /// Count at which the critical-level detectors veto a call (default 20;
    /// raised to `warningThreshold + 1` when not above the warning one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub critical_threshold: Option<f64>,
    /// No-progress streak at which the global circuit breaker stops the
    /// whole run (default 30; raised to `criticalThreshold + 1` when not
    /// above the critical one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_circuit_breaker_threshold: Option<f64>,
    /// Number of consecutive calls to the same unavailable tool before the
    /// call is vetoed (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_tool_threshold: Option<f64>,
    /// Switches for the detectors that can be turned off one by one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detectors: Option<LoopDetectorsConfig>,
    /// OpenClaw's post-compaction guard settings (`{ windowSize }`). The
    /// block is accepted so that OpenClaw configs load, and it is merged by
    /// [`LoopDetectionConfig::overlay`], but Talon's loop detector ignores it:
    /// in OpenClaw the guard belongs to the compaction-retry logic, not to
    /// the tool-call loop detector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_compaction_guard: Option<Value>,
}

/// Switches for the detectors that obey configuration. The unknown-tool
/// and global-circuit-breaker detectors have no switch: only
/// `enabled: false` turns them off.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoopDetectorsConfig {
    /// Repeated identical calls (warning) with identical outcomes
    /// (critical). Default `true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generic_repeat: Option<bool>,
    /// Polling tools (`command_status`, `process` poll/log) that make no
    /// progress. Default `true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_poll_no_progress: Option<bool>,
    /// Two call signatures alternating back and forth. Default `true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ping_pong: Option<bool>,
}

/// Loop detection settings with every default and fallback applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResolvedLoopDetection {
    /// Whether loop detection runs at all.
    pub enabled: bool,
    /// Number of recent tool calls kept per session.
    pub history_size: usize,
    /// Count at which the warning-level detectors fire.
    pub warning_threshold: usize,
    /// Count at which the critical-level detectors veto a call; always
    /// above `warning_threshold`.
    pub critical_threshold: usize,
    /// No-progress streak that trips the global circuit breaker; always
    /// above `critical_threshold`.
    pub global_circuit_breaker_threshold: usize,
    /// Consecutive calls to one missing tool before the call is vetoed.
    pub unknown_tool_threshold: usize,
    /// Which switchable detectors run.
    pub detectors: ResolvedLoopDetectors,
}

/// The resolved detector switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResolvedLoopDetectors {
    /// Whether the generic-repeat detector runs.
    pub generic_repeat: bool,
    /// Whether the known-poll no-progress detector runs.
    pub known_poll_no_progress: bool,
    /// Whether the ping-pong detector runs.
    pub ping_pong: bool,
}

impl Default for ResolvedLoopDetectors {
    fn default() -> Self {
        Self {
            generic_repeat: true,
            known_poll_no_progress: true,
            ping_pong: true,
        }
    }
}

impl Default for ResolvedLoopDetection {
    /// OpenClaw's defaults, with loop detection disabled.
    fn default() -> Self {
        Self {
            enabled: false,
            history_size: DEFAULT_HISTORY_SIZE,
            warning_threshold: DEFAULT_WARNING_THRESHOLD,
            critical_threshold: DEFAULT_CRITICAL_THRESHOLD,
            global_circuit_breaker_threshold: DEFAULT_GLOBAL_CIRCUIT_BREAKER_THRESHOLD,
            unknown_tool_threshold: DEFAULT_UNKNOWN_TOOL_THRESHOLD,
            detectors: ResolvedLoopDetectors::default(),
        }
    }
}

impl LoopDetectionConfig {
    /// This (global) block with the per-agent block `agent` laid over it:
    /// every value the agent sets wins, `detectors` is merged switch by
    /// switch, and `postCompactionGuard` objects are merged key by key.
    pub fn overlay(&self, agent: &LoopDetectionConfig) -> LoopDetectionConfig {
        LoopDetectionConfig {
            enabled: agent.enabled.or(self.enabled),
            history_size: agent.history_size.or(self.history_size),
            warning_threshold: agent.warning_threshold.or(self.warning_threshold),
            critical_threshold: agent.critical_threshold.or(self.critical_threshold),
            global_circuit_breaker_threshold: agent
                .global_circuit_breaker_threshold
                .or(self.global_circuit_breaker_threshold),
            unknown_tool_threshold: agent.unknown_tool_threshold.or(self.unknown_tool_threshold),
            detectors: overlay_detectors(self.detectors.as_ref(), agent.detectors.as_ref()),
            post_compaction_guard: overlay_value(
                self.post_compaction_guard.as_ref(),
                agent.post_compaction_guard.as_ref(),
            ),
        }
    }

    /// The concrete settings: defaults for missing values, defaults again
    /// for non-positive or non-integer numbers, then the ordering rules
    /// (critical above warning, breaker above critical).
    pub fn resolve(&self) -> ResolvedLoopDetection {
        let defaults = ResolvedLoopDetection::default();
        let warning_threshold = positive_int_or(self.warning_threshold, defaults.warning_threshold);
        let mut critical_threshold =
            positive_int_or(self.critical_threshold, defaults.critical_threshold);
        let mut global_circuit_breaker_threshold = positive_int_or(
            self.global_circuit_breaker_threshold,
            defaults.global_circuit_breaker_threshold,
        );
        if critical_threshold <= warning_threshold {
            critical_threshold = warning_threshold.saturating_add(1);
        }
        if global_circuit_breaker_threshold <= critical_threshold {
            global_circuit_breaker_threshold = critical_threshold.saturating_add(1);
        }
        let detectors = self.detectors.clone().unwrap_or_default();
        ResolvedLoopDetection {
            enabled: self.enabled.unwrap_or(defaults.enabled),
            // Bounded: every check scans the window, and up to 1 024
            // sessions keep one each.
            history_size: positive_int_or(self.history_size, defaults.history_size)
                .min(MAX_HISTORY_SIZE),
            warning_threshold,
            critical_threshold,
            global_circuit_breaker_threshold,
            unknown_tool_threshold: positive_int_or(
                self.unknown_tool_threshold,
                defaults.unknown_tool_threshold,
            ),
            detectors: ResolvedLoopDetectors {
                generic_repeat: detectors
                    .generic_repeat
                    .unwrap_or(defaults.detectors.generic_repeat),
                known_poll_no_progress: detectors
                    .known_poll_no_progress
                    .unwrap_or(defaults.detectors.known_poll_no_progress),
                ping_pong: detectors.ping_pong.unwrap_or(defaults.detectors.ping_pong),
            },
        }
    }
}

/// The largest `historySize` honoured; larger values are clamped.
pub const MAX_HISTORY_SIZE: usize = 1_000;

/// `value` when it is a positive integer (as JavaScript's
/// `Number.isInteger(value) && value > 0`), otherwise `fallback`. Integers
/// beyond `usize` saturate.
fn positive_int_or(value: Option<f64>, fallback: usize) -> usize {
    match value {
        // A float-to-int `as` cast saturates, which is the intent here.
        Some(v) if v.is_finite() && v.fract() == 0.0 && v > 0.0 => v as usize,
        _ => fallback,
    }
}

fn overlay_detectors(
    global: Option<&LoopDetectorsConfig>,
    agent: Option<&LoopDetectorsConfig>,
) -> Option<LoopDetectorsConfig> {
    match (global, agent) {
        (None, None) => None,
        (Some(g), None) => Some(g.clone()),
        (None, Some(a)) => Some(a.clone()),
        (Some(g), Some(a)) => Some(LoopDetectorsConfig {
            generic_repeat: a.generic_repeat.or(g.generic_repeat),
            known_poll_no_progress: a.known_poll_no_progress.or(g.known_poll_no_progress),
            ping_pong: a.ping_pong.or(g.ping_pong),
        }),
    }
}

/// Shallow merge of two optional JSON values: two objects merge key by key
/// (the agent's keys win); otherwise the agent's value wins when present.
fn overlay_value(global: Option<&Value>, agent: Option<&Value>) -> Option<Value> {
    match (global, agent) {
        (Some(Value::Object(g)), Some(Value::Object(a))) => {
            let mut merged = g.clone();
            for (key, value) in a {
                merged.insert(key.clone(), value.clone());
            }
            Some(Value::Object(merged))
        }
        (_, Some(a)) => Some(a.clone()),
        (g, None) => g.cloned(),
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
