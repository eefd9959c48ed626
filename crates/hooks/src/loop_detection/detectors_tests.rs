use pretty_assertions::assert_eq;

use super::*;
use crate::loop_detection::config::ResolvedLoopDetectors;
use crate::loop_detection::test_support::{enabled_config, rec};

fn refs(records: &[CallRecord]) -> Vec<&CallRecord> {
    records.iter().collect()
}

fn unknown(tool: &str, missing: &str) -> CallRecord {
    CallRecord {
        unknown_tool_name: Some(missing.to_owned()),
        ..rec(tool, "x", Some("error:1"))
    }
}

fn query<'a>(tool_name: &'a str, args_hash: &'a str) -> Query<'a> {
    Query {
        tool_name,
        args_hash,
        known_poll: false,
    }
}

#[test]
fn no_progress_streak_skips_other_calls_and_stops_at_a_change() {
    let records = vec![
        rec("exec", "a", Some("h0")),
        rec("exec", "a", Some("h1")),
        rec("read", "z", Some("h1")),
        rec("exec", "a", Some("h1")),
        rec("exec", "a", None),
        rec("exec", "b", Some("h1")),
        rec("exec", "a", Some("h1")),
    ];
    let streak = no_progress_streak(&refs(&records), "exec", "exec:a");
    assert_eq!(streak.count, 3);
    assert_eq!(streak.latest_hash, Some("h1"));
    let none = no_progress_streak(&refs(&records), "exec", "exec:q");
    assert_eq!(
        none,
        NoProgressStreak {
            count: 0,
            latest_hash: None
        }
    );
}

#[test]
fn unknown_tool_streak_counts_trailing_same_missing_tool() {
    let records = vec![
        unknown("foo", "foo"),
        rec("foo", "x", Some("ok")),
        unknown("foo", "bar"),
        unknown("foo", "foo"),
        unknown("foo", "foo"),
    ];
    let streak = unknown_tool_streak(&refs(&records), "foo");
    assert_eq!(
        streak,
        UnknownStreak {
            count: 2,
            name: Some("foo")
        }
    );
    assert_eq!(unknown_tool_streak(&refs(&records), "other").count, 0);
}

#[test]
fn ping_pong_needs_the_query_to_continue_the_alternation() {
    let records = vec![
        rec("read", "a", Some("ha")),
        rec("list", "b", Some("hb")),
        rec("read", "a", Some("ha")),
        rec("list", "b", Some("hb")),
    ];
    let pp = ping_pong_streak(&refs(&records), "read:a");
    assert_eq!(pp.count, 5);
    assert_eq!(pp.paired_signature, Some("list:b"));
    assert!(pp.no_progress_evidence);
    // Repeating the last side, or a third signature, is not a ping-pong.
    assert_eq!(ping_pong_streak(&refs(&records), "list:b").count, 0);
    assert_eq!(ping_pong_streak(&refs(&records), "read:c").count, 0);
    // A single record or a single signature is not either.
    assert_eq!(ping_pong_streak(&refs(&records[..1]), "list:b").count, 0);
    let same = vec![rec("read", "a", None), rec("read", "a", None)];
    assert_eq!(ping_pong_streak(&refs(&same), "read:b").count, 0);
}

#[test]
fn ping_pong_evidence_needs_stable_outcomes_on_both_sides() {
    let changing = vec![
        rec("read", "a", Some("ha")),
        rec("list", "b", Some("hb1")),
        rec("read", "a", Some("ha")),
        rec("list", "b", Some("hb2")),
    ];
    let pp = ping_pong_streak(&refs(&changing), "read:a");
    assert_eq!(pp.count, 5);
    assert!(!pp.no_progress_evidence);

    let unfinished = vec![
        rec("read", "a", Some("ha")),
        rec("list", "b", Some("hb")),
        rec("read", "a", None),
    ];
    assert!(!ping_pong_streak(&refs(&unfinished), "list:b").no_progress_evidence);
}

#[test]
fn unknown_tool_comes_first_and_ignores_detector_switches() {
    let mut config = enabled_config();
    config.unknown_tool_threshold = 3;
    config.detectors = ResolvedLoopDetectors {
        generic_repeat: false,
        known_poll_no_progress: false,
        ping_pong: false,
    };
    let records: Vec<CallRecord> = (0..3).map(|_| unknown("foo", "foo")).collect();
    let found = detect(&config, &refs(&records), query("foo", "foo:x")).unwrap();
    assert_eq!(found.level, Level::Critical);
    assert_eq!(found.detector, LoopDetectorKind::UnknownToolRepeat);
    assert_eq!(found.count, 3);
    assert_eq!(
        found.message,
        "CRITICAL: attempted unavailable tool foo 3 times. Stop retrying that missing tool and answer without it."
    );
    assert_eq!(found.warning_key, "unknown-tool:foo:foo");
    assert_eq!(
        detect(&config, &refs(&records[..2]), query("foo", "foo:x")),
        None
    );
}

#[test]
fn global_breaker_ignores_detector_switches() {
    let mut config = enabled_config();
    config.detectors = ResolvedLoopDetectors {
        generic_repeat: false,
        known_poll_no_progress: false,
        ping_pong: false,
    };
    let records: Vec<CallRecord> = (0..30).map(|_| rec("exec", "a", Some("h"))).collect();
    let found = detect(&config, &refs(&records), query("exec", "exec:a")).unwrap();
    assert_eq!(found.detector, LoopDetectorKind::GlobalCircuitBreaker);
    assert_eq!(found.level, Level::Critical);
    assert_eq!(found.count, 30);
    assert_eq!(
        found.message,
        "CRITICAL: exec has repeated identical no-progress outcomes 30 times. Session execution blocked by global circuit breaker to prevent runaway loops."
    );
    // Below the breaker, with every switchable detector off, nothing fires.
    assert_eq!(
        detect(&config, &refs(&records[..29]), query("exec", "exec:a")),
        None
    );
}

#[test]
fn switched_off_detectors_do_not_fire() {
    let mut config = enabled_config();
    config.detectors.generic_repeat = false;
    let records: Vec<CallRecord> = (0..25).map(|_| rec("exec", "a", Some("h"))).collect();
    assert_eq!(
        detect(&config, &refs(&records), query("exec", "exec:a")),
        None
    );

    let mut config = enabled_config();
    config.detectors.known_poll_no_progress = false;
    let poll = Query {
        known_poll: true,
        ..query("command_status", "command_status:a")
    };
    let records: Vec<CallRecord> = (0..25)
        .map(|_| rec("command_status", "a", Some("h")))
        .collect();
    // Generic repeat never handles polling tools.
    assert_eq!(detect(&config, &refs(&records), poll), None);

    // Eleven alternating calls: a ping-pong warning (count 12) when the
    // detector is on, nothing when it is off (each side alone is below the
    // generic warning threshold).
    let records: Vec<CallRecord> = (0..11)
        .map(|i| {
            if i % 2 == 0 {
                rec("read", "a", Some("ha"))
            } else {
                rec("list", "b", Some("hb"))
            }
        })
        .collect();
    let on = detect(&enabled_config(), &refs(&records), query("list", "list:b")).unwrap();
    assert_eq!(
        (on.detector, on.level, on.count),
        (LoopDetectorKind::PingPong, Level::Warning, 12)
    );
    let mut config = enabled_config();
    config.detectors.ping_pong = false;
    assert_eq!(
        detect(&config, &refs(&records), query("list", "list:b")),
        None
    );
}
