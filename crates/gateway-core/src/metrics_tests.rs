#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn renders_counters_histograms_and_gauges() {
    let m = Metrics::default();
    m.record_call("exec", CallOutcomeKind::Blocked, Duration::from_micros(30));
    m.record_call(
        "exec",
        CallOutcomeKind::Blocked,
        Duration::from_micros(3_000),
    );
    m.record_call("read\"x", CallOutcomeKind::Ok, Duration::from_micros(70));
    m.record_blocked("tool_policy");
    let text = m.render(2, 0, 1);
    assert!(
        text.contains("talon_gateway_calls_total{tool=\"exec\",outcome=\"blocked\"} 2"),
        "{text}"
    );
    assert!(text.contains("tool=\"read\\\"x\""), "{text}");
    assert!(
        text.contains("talon_gateway_call_duration_seconds_bucket{tool=\"exec\",le=\"0.00005\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("talon_gateway_call_duration_seconds_bucket{tool=\"exec\",le=\"+Inf\"} 2"),
        "{text}"
    );
    assert!(text.contains("talon_gateway_blocked_total{layer=\"tool_policy\"} 1"));
    assert!(text.contains("talon_gateway_approvals_pending 2"));
    assert_eq!(m.calls("exec", CallOutcomeKind::Blocked), 2);
}

#[test]
fn tool_labels_are_bounded() {
    let m = Metrics::default();
    for i in 0..(MAX_TOOL_LABELS + 50) {
        m.record_call(&format!("t{i}"), CallOutcomeKind::Error, Duration::ZERO);
    }
    assert!(m.tools.read().unwrap().len() <= MAX_TOOL_LABELS + 1);
    assert!(m.calls("other", CallOutcomeKind::Error) >= 50);
}
