use std::cell::Cell;

use pretty_assertions::assert_eq;
use serde_json::{Map, Value, json};
use talon_tool_catalog::ToolResult;

use super::*;
use crate::loop_detection::LoopDetectionConfig;
use crate::loop_detection::test_support::{enabled_config, params, result};

/// Drives one session the way the gate does: check, record the call (also
/// when vetoed), then record its outcome (the veto, or the given one).
struct Gate<'a> {
    detector: &'a LoopDetector,
    session: &'a str,
    run: Option<&'a str>,
    next_id: Cell<usize>,
}

impl<'a> Gate<'a> {
    fn new(detector: &'a LoopDetector, run: Option<&'a str>) -> Self {
        Self {
            detector,
            session: "agent:main",
            run,
            next_id: Cell::new(0),
        }
    }

    fn call_with(
        &self,
        tool: &str,
        args: &Map<String, Value>,
        outcome: LoopOutcome<'_>,
    ) -> LoopVerdict {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let call_id = format!("call-{id}");
        let verdict = self.detector.check(self.session, self.run, tool, args);
        self.detector
            .record_call(self.session, self.run, tool, &call_id, args);
        let outcome = if verdict.is_critical() {
            LoopOutcome::LoopVeto
        } else {
            outcome
        };
        self.detector
            .record_outcome(self.session, self.run, &call_id, tool, outcome);
        verdict
    }

    fn call(&self, tool: &str, args: &Map<String, Value>, res: &ToolResult) -> LoopVerdict {
        self.call_with(tool, args, LoopOutcome::Result(res))
    }
}

fn enabled() -> LoopDetector {
    LoopDetector::new(enabled_config())
}

/// `(detector, count)` of a warning, `None` otherwise.
fn warning(v: &LoopVerdict) -> Option<(LoopDetectorKind, usize)> {
    match v {
        LoopVerdict::Warning {
            detector, count, ..
        } => Some((*detector, *count)),
        _ => None,
    }
}

/// `(detector, count, stop_run)` of a critical verdict, `None` otherwise.
fn critical(v: &LoopVerdict) -> Option<(LoopDetectorKind, usize, bool)> {
    match v {
        LoopVerdict::Critical {
            detector,
            count,
            stop_run,
            ..
        } => Some((*detector, *count, *stop_run)),
        _ => None,
    }
}

#[test]
fn detector_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<LoopDetector>();
}

#[test]
fn disabled_by_default_never_flags_or_records() {
    let detector = LoopDetector::new(ResolvedLoopDetection::default());
    assert!(!detector.is_enabled());
    let gate = Gate::new(&detector, None);
    let args = params(json!({ "command": "ls" }));
    let res = result("same", json!({}));
    for _ in 0..40 {
        assert_eq!(gate.call("exec", &args, &res), LoopVerdict::Ok);
    }
    assert_eq!(detector.session_count(), 0);
}

#[test]
fn generic_repeat_warns_at_ten_and_blocks_at_twenty_identical_outcomes() {
    let detector = enabled();
    let gate = Gate::new(&detector, None);
    let args = params(json!({ "path": "a.txt" }));
    let res = result("contents", json!({}));
    let verdicts: Vec<LoopVerdict> = (0..21).map(|_| gate.call("read", &args, &res)).collect();
    assert!(verdicts[..10].iter().all(LoopVerdict::is_ok));
    let LoopVerdict::Warning {
        detector: kind,
        count,
        message,
        key,
        emit,
    } = &verdicts[10]
    else {
        panic!("expected a warning, got {:?}", verdicts[10]);
    };
    assert_eq!(
        (*kind, *count, *emit),
        (LoopDetectorKind::GenericRepeat, 10, true)
    );
    assert_eq!(
        message,
        "WARNING: You have called read 10 times with identical arguments. If this is not making progress, stop retrying and report the task as failed."
    );
    assert!(key.starts_with("generic:read:read:"), "{key}");
    for (i, v) in verdicts[11..20].iter().enumerate() {
        assert_eq!(warning(v), Some((LoopDetectorKind::GenericRepeat, 11 + i)));
    }
    let LoopVerdict::Critical {
        detector: kind,
        count,
        message,
        stop_run,
    } = &verdicts[20]
    else {
        panic!("expected a critical verdict, got {:?}", verdicts[20]);
    };
    assert_eq!(
        (*kind, *count, *stop_run),
        (LoopDetectorKind::GenericRepeat, 20, false)
    );
    assert_eq!(
        message,
        "CRITICAL: Called read with identical arguments and identical outcomes 20 times. Session execution blocked to prevent runaway loops."
    );
}

#[test]
fn warnings_are_emitted_at_ten_and_twenty_only() {
    // Identical calls whose results keep changing: the generic warning
    // fires on every call from the tenth repeat on, never critical.
    let detector = enabled();
    let gate = Gate::new(&detector, None);
    let args = params(json!({ "url": "https://example.com" }));
    let mut emitted = Vec::new();
    for i in 0..30 {
        let res = result(&format!("page v{i}"), json!({}));
        match gate.call("web_fetch", &args, &res) {
            LoopVerdict::Ok => assert!(i < 10, "call {i} should warn"),
            LoopVerdict::Warning { count, emit, .. } => {
                assert_eq!(count, i);
                if emit {
                    emitted.push(count);
                }
            }
            other @ LoopVerdict::Critical { .. } => panic!("progress must not block: {other:?}"),
        }
    }
    assert_eq!(emitted, [10, 20]);
}

#[test]
fn progress_resets_the_no_progress_streak() {
    let detector = enabled();
    let gate = Gate::new(&detector, None);
    let args = params(json!({ "command": "make" }));
    let same = result(
        "",
        json!({ "status": "completed", "exitCode": 2, "aggregated": "error" }),
    );
    let changed = result(
        "",
        json!({ "status": "completed", "exitCode": 0, "aggregated": "ok" }),
    );
    for _ in 0..19 {
        assert!(!gate.call("exec", &args, &same).is_critical());
    }
    // One different outcome: the streak restarts from it.
    assert!(!gate.call("exec", &args, &changed).is_critical());
    for _ in 0..19 {
        assert!(!gate.call("exec", &args, &same).is_critical());
    }
    // Nineteen identical outcomes since the change, then the twentieth
    // repeat is blocked.
    assert!(!gate.call("exec", &args, &same).is_critical());
    assert_eq!(
        critical(&gate.call("exec", &args, &same)),
        Some((LoopDetectorKind::GenericRepeat, 20, false))
    );
}

#[test]
fn vetoed_retries_escalate_to_the_global_circuit_breaker() {
    let detector = enabled();
    let gate = Gate::new(&detector, Some("run-1"));
    let args = params(json!({ "command": "curl http://down" }));
    let res = result(
        "",
        json!({ "status": "failed", "exitCode": 7, "aggregated": "refused" }),
    );
    let verdicts: Vec<LoopVerdict> = (0..31).map(|_| gate.call("exec", &args, &res)).collect();
    for (i, v) in verdicts[20..30].iter().enumerate() {
        assert_eq!(
            critical(v),
            Some((LoopDetectorKind::GenericRepeat, 20 + i, false))
        );
    }
    let LoopVerdict::Critical {
        detector: kind,
        count,
        message,
        stop_run,
    } = &verdicts[30]
    else {
        panic!("expected the breaker, got {:?}", verdicts[30]);
    };
    assert_eq!(
        (*kind, *count, *stop_run),
        (LoopDetectorKind::GlobalCircuitBreaker, 30, true)
    );
    assert_eq!(
        message,
        "CRITICAL: exec has repeated identical no-progress outcomes 30 times. Session execution blocked by global circuit breaker to prevent runaway loops."
    );
}

#[test]
fn known_poll_warns_then_blocks_then_breaks_the_circuit() {
    let detector = enabled();
    let gate = Gate::new(&detector, None);
    let args = params(json!({ "action": "poll", "sessionId": "proc-1" }));
    let verdicts: Vec<LoopVerdict> = (0..31)
        .map(|i| {
            // Only volatile fields change, so there is no progress.
            let res = result(
                "still running",
                json!({ "status": "running", "elapsedMs": i }),
            );
            gate.call("process", &args, &res)
        })
        .collect();
    assert!(verdicts[..10].iter().all(LoopVerdict::is_ok));
    let LoopVerdict::Warning {
        count,
        message,
        emit,
        ..
    } = &verdicts[10]
    else {
        panic!("expected a warning, got {:?}", verdicts[10]);
    };
    assert_eq!((*count, *emit), (10, true));
    assert_eq!(
        message,
        "WARNING: You have called process 10 times with identical arguments and no progress. Stop polling and either (1) increase wait time between checks, or (2) report the task as failed if the process is stuck."
    );
    assert_eq!(
        warning(&verdicts[19]),
        Some((LoopDetectorKind::KnownPollNoProgress, 19))
    );
    let LoopVerdict::Critical {
        detector: kind,
        count,
        message,
        stop_run,
    } = &verdicts[20]
    else {
        panic!("expected a critical verdict, got {:?}", verdicts[20]);
    };
    assert_eq!(
        (*kind, *count, *stop_run),
        (LoopDetectorKind::KnownPollNoProgress, 20, false)
    );
    assert_eq!(
        message,
        "CRITICAL: Called process with identical arguments and no progress 20 times. This appears to be a stuck polling loop. Session execution blocked to prevent resource waste."
    );
    assert_eq!(
        critical(&verdicts[30]),
        Some((LoopDetectorKind::GlobalCircuitBreaker, 30, true))
    );
}

#[test]
fn ping_pong_warns_at_ten_and_blocks_at_twenty_with_stable_outcomes() {
    let detector = enabled();
    let gate = Gate::new(&detector, None);
    let a = params(json!({ "path": "a.txt" }));
    let b = params(json!({ "path": "b.txt" }));
    let ra = result("A", json!({}));
    let rb = result("B", json!({}));
    let verdicts: Vec<LoopVerdict> = (0..20)
        .map(|i| {
            if i % 2 == 0 {
                gate.call("read", &a, &ra)
            } else {
                gate.call("read", &b, &rb)
            }
        })
        .collect();
    assert!(verdicts[..9].iter().all(LoopVerdict::is_ok));
    let LoopVerdict::Warning {
        detector: kind,
        count,
        message,
        key,
        emit,
    } = &verdicts[9]
    else {
        panic!("expected a warning, got {:?}", verdicts[9]);
    };
    assert_eq!(
        (*kind, *count, *emit),
        (LoopDetectorKind::PingPong, 10, true)
    );
    assert_eq!(
        message,
        "WARNING: You are alternating between repeated tool-call patterns (10 consecutive calls). This looks like a ping-pong loop; stop retrying and report the task as failed."
    );
    assert!(
        key.starts_with("pingpong:read:") && key.contains('|'),
        "{key}"
    );
    assert_eq!(
        warning(&verdicts[18]),
        Some((LoopDetectorKind::PingPong, 19))
    );
    let LoopVerdict::Critical {
        detector: kind,
        count,
        message,
        stop_run,
    } = &verdicts[19]
    else {
        panic!("expected a critical verdict, got {:?}", verdicts[19]);
    };
    assert_eq!(
        (*kind, *count, *stop_run),
        (LoopDetectorKind::PingPong, 20, false)
    );
    assert_eq!(
        message,
        "CRITICAL: You are alternating between repeated tool-call patterns (20 consecutive calls) with no progress. This appears to be a stuck ping-pong loop. Session execution blocked to prevent resource waste."
    );
}

#[test]
fn ping_pong_with_changing_outcomes_only_warns() {
    let detector = enabled();
    let gate = Gate::new(&detector, None);
    let a = params(json!({ "path": "a.txt" }));
    let b = params(json!({ "path": "b.txt" }));
    let ra = result("A", json!({}));
    for i in 0..40 {
        let verdict = if i % 2 == 0 {
            gate.call("read", &a, &ra)
        } else {
            gate.call("read", &b, &result(&format!("B{i}"), json!({})))
        };
        assert!(!verdict.is_critical(), "call {i}: {verdict:?}");
        if i >= 9 {
            assert_eq!(
                verdict.detector(),
                Some(LoopDetectorKind::PingPong),
                "call {i}"
            );
        }
    }
}

#[test]
fn unknown_tool_repeat_blocks_and_retries_still_reach_the_breaker() {
    let detector = enabled();
    let gate = Gate::new(&detector, None);
    let args = params(json!({ "q": "x" }));
    let error = LoopOutcome::Error("Unknown tool: web_browse");
    let verdicts: Vec<LoopVerdict> = (0..31)
        .map(|_| gate.call_with("web_browse", &args, error))
        .collect();
    assert!(verdicts[..10].iter().all(|v| !v.is_critical()));
    let LoopVerdict::Critical {
        detector: kind,
        count,
        message,
        stop_run,
    } = &verdicts[10]
    else {
        panic!("expected a critical verdict, got {:?}", verdicts[10]);
    };
    assert_eq!(
        (*kind, *count, *stop_run),
        (LoopDetectorKind::UnknownToolRepeat, 10, false)
    );
    assert_eq!(
        message,
        "CRITICAL: attempted unavailable tool web_browse 10 times. Stop retrying that missing tool and answer without it."
    );
    assert_eq!(
        critical(&verdicts[30]),
        Some((LoopDetectorKind::GlobalCircuitBreaker, 30, true))
    );
}

#[test]
fn send_results_with_fresh_ids_count_as_no_progress() {
    let detector = enabled();
    let gate = Gate::new(&detector, None);
    let args = params(json!({ "action": "send", "to": "chat-1", "text": "hi" }));
    let verdicts: Vec<LoopVerdict> = (0..21)
        .map(|i| {
            let res = result(
                &format!("sent message m{i}"),
                json!({ "ok": true, "messageId": format!("m{i}"), "ts": i }),
            );
            gate.call("message", &args, &res)
        })
        .collect();
    assert_eq!(
        critical(&verdicts[20]),
        Some((LoopDetectorKind::GenericRepeat, 20, false))
    );

    // The same ids on another tool are progress.
    let detector = enabled();
    let gate = Gate::new(&detector, None);
    let args = params(json!({ "url": "u" }));
    for i in 0..25 {
        let res = result("x", json!({ "messageId": format!("m{i}") }));
        assert!(!gate.call("web_fetch", &args, &res).is_critical());
    }
}

#[test]
fn repeated_policy_blocks_count_as_no_progress() {
    let detector = enabled();
    let gate = Gate::new(&detector, None);
    let args = params(json!({ "command": "rm -rf /" }));
    let verdicts: Vec<LoopVerdict> = (0..21)
        .map(|_| gate.call_with("exec", &args, LoopOutcome::Blocked("blocked by policy-x")))
        .collect();
    assert_eq!(
        critical(&verdicts[20]),
        Some((LoopDetectorKind::GenericRepeat, 20, false))
    );
}

#[test]
fn detection_is_scoped_to_the_run() {
    let detector = enabled();
    let args = params(json!({ "path": "a" }));
    let res = result("same", json!({}));
    let run1 = Gate::new(&detector, Some("run-1"));
    for _ in 0..15 {
        run1.call("read", &args, &res);
    }
    // Another run, or no run, sees none of run-1's calls.
    assert_eq!(
        detector.check("agent:main", Some("run-2"), "read", &args),
        LoopVerdict::Ok
    );
    assert_eq!(
        detector.check("agent:main", None, "read", &args),
        LoopVerdict::Ok
    );
    // Blank run ids count as no run.
    assert_eq!(
        detector.check("agent:main", Some("  "), "read", &args),
        LoopVerdict::Ok
    );
    // Another session sees nothing either.
    assert_eq!(
        detector.check("agent:other", Some("run-1"), "read", &args),
        LoopVerdict::Ok
    );

    let LoopVerdict::Warning {
        count, key, emit, ..
    } = detector.check("agent:main", Some(" run-1 "), "read", &args)
    else {
        panic!("run-1 should warn");
    };
    assert_eq!(count, 15);
    assert!(key.starts_with("run-1:generic:read:"), "{key}");
    // The bucket for 10 was emitted during the loop above.
    assert!(!emit);

    // The same warning in another run has its own dedupe key.
    let run2 = Gate::new(&detector, Some("run-2"));
    let verdicts: Vec<LoopVerdict> = (0..11).map(|_| run2.call("read", &args, &res)).collect();
    let LoopVerdict::Warning { key, emit, .. } = &verdicts[10] else {
        panic!("run-2 should warn");
    };
    assert!(key.starts_with("run-2:generic:"), "{key}");
    assert!(*emit);
}

#[test]
fn history_is_trimmed_to_the_configured_size() {
    let config = LoopDetectionConfig {
        enabled: Some(true),
        history_size: Some(5.0),
        ..LoopDetectionConfig::default()
    }
    .resolve();
    let detector = LoopDetector::new(config);
    let gate = Gate::new(&detector, None);
    let res = result("x", json!({}));
    for i in 0..8 {
        gate.call("read", &params(json!({ "path": i })), &res);
    }
    let ids = detector
        .with_session("agent:main", |s| {
            s.history
                .iter()
                .map(|r| r.call_id.clone())
                .collect::<Vec<_>>()
        })
        .unwrap();
    assert_eq!(ids, ["call-3", "call-4", "call-5", "call-6", "call-7"]);

    // With a window of 5, ten identical calls never reach the warning.
    let args = params(json!({ "path": "same" }));
    for _ in 0..12 {
        assert_eq!(gate.call("read", &args, &res), LoopVerdict::Ok);
    }
}

#[test]
fn sessions_are_bounded_least_recently_used_first() {
    let detector = enabled();
    let args = params(json!({}));
    for i in 0..MAX_SESSIONS {
        detector.record_call(&format!("s{i}"), None, "read", "c", &args);
    }
    // Touch s0 so that s1 is now the least recently used.
    detector.record_call("s0", None, "read", "c2", &args);
    detector.record_call("new", None, "read", "c", &args);
    assert_eq!(detector.session_count(), MAX_SESSIONS);
    assert!(detector.with_session("s0", |_| ()).is_some());
    assert!(detector.with_session("s1", |_| ()).is_none());
    assert!(detector.with_session("new", |_| ()).is_some());
}

#[test]
fn outcomes_without_a_recorded_call_are_appended() {
    let detector = enabled();
    let res = result("x", json!({}));
    detector.record_outcome("s", None, "ghost", "read", LoopOutcome::Result(&res));
    let records = detector
        .with_session("s", |s| s.history.iter().cloned().collect::<Vec<_>>())
        .unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].call_id, "ghost");
    assert!(records[0].result_hash.is_some());
}

#[test]
fn a_poisoned_lock_is_recovered() {
    let detector = enabled();
    std::thread::scope(|scope| {
        let handle = scope.spawn(|| {
            let _guard = detector.sessions.lock();
            panic!("poison the lock");
        });
        assert!(handle.join().is_err());
    });
    assert!(detector.sessions.is_poisoned());
    let args = params(json!({}));
    detector.record_call("s", None, "read", "c", &args);
    assert_eq!(detector.check("s", None, "read", &args), LoopVerdict::Ok);
    assert_eq!(detector.session_count(), 1);
}

#[test]
fn verdicts_serialise_with_openclaw_detector_ids() {
    let verdict = LoopVerdict::Critical {
        detector: LoopDetectorKind::GlobalCircuitBreaker,
        count: 30,
        message: "CRITICAL: x".to_owned(),
        stop_run: true,
    };
    assert_eq!(
        serde_json::to_value(&verdict).unwrap(),
        json!({
            "level": "critical",
            "detector": "global_circuit_breaker",
            "count": 30,
            "message": "CRITICAL: x",
            "stopRun": true,
        })
    );
    assert_eq!(
        serde_json::to_value(LoopVerdict::Ok).unwrap(),
        json!({ "level": "ok" })
    );
    for kind in [
        LoopDetectorKind::UnknownToolRepeat,
        LoopDetectorKind::GlobalCircuitBreaker,
        LoopDetectorKind::KnownPollNoProgress,
        LoopDetectorKind::PingPong,
        LoopDetectorKind::GenericRepeat,
    ] {
        assert_eq!(serde_json::to_value(kind).unwrap(), json!(kind.as_str()));
    }
}
