//! Counters for `GET /metrics` (Prometheus text format): calls by tool and
//! outcome, latency histograms, blocks by layer, and gauges.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// How a call ended, as recorded in metrics and the journal: the
/// runtime's [`CallStatus`](talon_runtime::CallStatus), computed once per
/// call from the typed outcome.
pub use talon_runtime::CallStatus as CallOutcomeKind;

/// The slot of a status in the per-tool counters.
fn index(kind: CallOutcomeKind) -> usize {
    match kind {
        CallOutcomeKind::Ok => 0,
        CallOutcomeKind::Error => 1,
        CallOutcomeKind::Blocked => 2,
        CallOutcomeKind::Timeout => 3,
        CallOutcomeKind::Cancelled => 4,
    }
}

/// Histogram bucket upper bounds, in microseconds.
const BUCKETS_US: [u64; 12] = [
    50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 50_000, 250_000, 1_000_000, 10_000_000,
];

/// At most this many distinct tool labels; more share `other`.
const MAX_TOOL_LABELS: usize = 512;

/// The `tool` label of a call to a name that is no known tool (and of
/// every tool past [`MAX_TOOL_LABELS`]).
pub(crate) const OTHER_TOOL_LABEL: &str = "other";

#[derive(Debug, Default)]
struct ToolCounters {
    outcomes: [AtomicU64; 5],
    buckets: [AtomicU64; BUCKETS_US.len()],
    sum_us: AtomicU64,
    count: AtomicU64,
}

/// The gateway's metrics. Recording takes a read lock and a few atomic
/// increments.
#[derive(Debug, Default)]
pub struct Metrics {
    tools: RwLock<HashMap<String, Arc<ToolCounters>>>,
    blocked: RwLock<HashMap<String, Arc<AtomicU64>>>,
    /// Open WebSocket connections.
    pub connections: AtomicU64,
    /// Connections dropped because their client did not read.
    pub slow_consumers: AtomicU64,
    /// Rejected authentication attempts.
    pub auth_failures: AtomicU64,
    /// Results cut to the output cap.
    pub truncated_outputs: AtomicU64,
    /// Successful reloads.
    pub reloads: AtomicU64,
    /// Failed reloads.
    pub reload_failures: AtomicU64,
    /// Calls being executed now.
    pub in_flight: AtomicU64,
}

impl Metrics {
    fn tool(&self, tool: &str) -> Arc<ToolCounters> {
        if let Ok(map) = self.tools.read()
            && let Some(c) = map.get(tool)
        {
            return Arc::clone(c);
        }
        let mut map = match self.tools.write() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        let key = if map.len() >= MAX_TOOL_LABELS && !map.contains_key(tool) {
            OTHER_TOOL_LABEL
        } else {
            tool
        };
        Arc::clone(map.entry(key.to_owned()).or_default())
    }

    /// Record one finished call.
    pub fn record_call(&self, tool: &str, outcome: CallOutcomeKind, elapsed: Duration) {
        let c = self.tool(tool);
        c.outcomes[index(outcome)].fetch_add(1, Ordering::Relaxed);
        let us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        if let Some(i) = BUCKETS_US.iter().position(|b| us <= *b) {
            c.buckets[i].fetch_add(1, Ordering::Relaxed);
        }
        c.sum_us.fetch_add(us, Ordering::Relaxed);
        c.count.fetch_add(1, Ordering::Relaxed);
    }

    /// Record a block by `layer` (the denied reason: `tool_policy`, `hook`,
    /// `loop`, `approval`, …).
    pub fn record_blocked(&self, layer: &str) {
        if let Ok(map) = self.blocked.read()
            && let Some(c) = map.get(layer)
        {
            c.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let mut map = match self.blocked.write() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        map.entry(layer.to_owned())
            .or_default()
            .fetch_add(1, Ordering::Relaxed);
    }

    /// The calls of `tool` that ended with `outcome` so far.
    pub fn calls(&self, tool: &str, outcome: CallOutcomeKind) -> u64 {
        self.tools
            .read()
            .ok()
            .and_then(|m| {
                m.get(tool)
                    .map(|c| c.outcomes[index(outcome)].load(Ordering::Relaxed))
            })
            .unwrap_or(0)
    }

    /// Render the Prometheus text format, with the gauges given.
    pub fn render(
        &self,
        approvals_pending: usize,
        sandbox_containers: usize,
        sessions: usize,
    ) -> String {
        let mut out = String::with_capacity(4096);
        let _ = writeln!(
            out,
            "# HELP talon_gateway_calls_total Tool calls by tool and outcome."
        );
        let _ = writeln!(out, "# TYPE talon_gateway_calls_total counter");
        let tools: Vec<(String, Arc<ToolCounters>)> = match self.tools.read() {
            Ok(m) => {
                let mut v: Vec<_> = m.iter().map(|(k, v)| (k.clone(), Arc::clone(v))).collect();
                v.sort_by(|a, b| a.0.cmp(&b.0));
                v
            }
            Err(_) => Vec::new(),
        };
        for (tool, c) in &tools {
            for o in CallOutcomeKind::ALL {
                let n = c.outcomes[index(o)].load(Ordering::Relaxed);
                if n > 0 {
                    let _ = writeln!(
                        out,
                        "talon_gateway_calls_total{{tool=\"{}\",outcome=\"{}\"}} {n}",
                        label(tool),
                        o.as_str()
                    );
                }
            }
        }
        let _ = writeln!(
            out,
            "# HELP talon_gateway_call_duration_seconds Tool call latency."
        );
        let _ = writeln!(out, "# TYPE talon_gateway_call_duration_seconds histogram");
        for (tool, c) in &tools {
            let mut cumulative = 0u64;
            for (i, b) in BUCKETS_US.iter().enumerate() {
                cumulative += c.buckets[i].load(Ordering::Relaxed);
                let _ = writeln!(
                    out,
                    "talon_gateway_call_duration_seconds_bucket{{tool=\"{}\",le=\"{}\"}} {cumulative}",
                    label(tool),
                    *b as f64 / 1e6
                );
            }
            let count = c.count.load(Ordering::Relaxed);
            let _ = writeln!(
                out,
                "talon_gateway_call_duration_seconds_bucket{{tool=\"{}\",le=\"+Inf\"}} {count}",
                label(tool)
            );
            let _ = writeln!(
                out,
                "talon_gateway_call_duration_seconds_sum{{tool=\"{}\"}} {}",
                label(tool),
                c.sum_us.load(Ordering::Relaxed) as f64 / 1e6
            );
            let _ = writeln!(
                out,
                "talon_gateway_call_duration_seconds_count{{tool=\"{}\"}} {count}",
                label(tool)
            );
        }
        let _ = writeln!(
            out,
            "# HELP talon_gateway_blocked_total Blocked calls by layer."
        );
        let _ = writeln!(out, "# TYPE talon_gateway_blocked_total counter");
        if let Ok(m) = self.blocked.read() {
            let mut v: Vec<_> = m.iter().collect();
            v.sort_by(|a, b| a.0.cmp(b.0));
            for (layer, n) in v {
                let _ = writeln!(
                    out,
                    "talon_gateway_blocked_total{{layer=\"{}\"}} {}",
                    label(layer),
                    n.load(Ordering::Relaxed)
                );
            }
        }
        let gauges: [(&str, &str, u64); 10] = [
            (
                "talon_gateway_approvals_pending",
                "Approvals waiting for a human.",
                approvals_pending as u64,
            ),
            (
                "talon_gateway_sandbox_containers",
                "Sandbox containers known to this gateway.",
                sandbox_containers as u64,
            ),
            ("talon_gateway_sessions", "Open sessions.", sessions as u64),
            (
                "talon_gateway_connections",
                "Open WebSocket connections.",
                self.connections.load(Ordering::Relaxed),
            ),
            (
                "talon_gateway_calls_in_flight",
                "Calls executing now.",
                self.in_flight.load(Ordering::Relaxed),
            ),
            (
                "talon_gateway_slow_consumer_disconnects_total",
                "Connections dropped for not reading.",
                self.slow_consumers.load(Ordering::Relaxed),
            ),
            (
                "talon_gateway_auth_failures_total",
                "Rejected authentication attempts.",
                self.auth_failures.load(Ordering::Relaxed),
            ),
            (
                "talon_gateway_truncated_outputs_total",
                "Results cut to the output cap.",
                self.truncated_outputs.load(Ordering::Relaxed),
            ),
            (
                "talon_gateway_reloads_total",
                "Successful config reloads.",
                self.reloads.load(Ordering::Relaxed),
            ),
            (
                "talon_gateway_reload_failures_total",
                "Rejected config reloads.",
                self.reload_failures.load(Ordering::Relaxed),
            ),
        ];
        for (name, help, v) in gauges {
            let kind = if name.ends_with("_total") {
                "counter"
            } else {
                "gauge"
            };
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} {kind}");
            let _ = writeln!(out, "{name} {v}");
        }
        out
    }
}

/// A label value with `\`, `"` and newlines escaped.
fn label(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
