use pretty_assertions::assert_eq;

use super::*;
use crate::loop_detection::test_support::rec;

fn digest(hash: &str) -> Option<OutcomeDigest> {
    Some(OutcomeDigest {
        result_hash: hash.to_owned(),
        unknown_tool_name: None,
    })
}

fn pending(tool: &str, sig: &str, call_id: &str, run_id: Option<&str>) -> CallRecord {
    CallRecord {
        call_id: call_id.to_owned(),
        run_id: run_id.map(str::to_owned),
        ..rec(tool, sig, None)
    }
}

fn apply(
    state: &mut SessionState,
    run: Option<&str>,
    call: &str,
    tool: &str,
    d: Option<OutcomeDigest>,
) {
    let position = state.pending_position(run, call, tool);
    state.apply_outcome(position, run, call, tool, d, 30);
}

#[test]
fn push_trims_the_oldest_records() {
    let mut state = SessionState::default();
    for i in 0..5 {
        state.push(pending("read", &i.to_string(), &format!("c{i}"), None), 3);
    }
    let ids: Vec<&str> = state.history.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(ids, ["c2", "c3", "c4"]);
}

#[test]
fn scoped_history_only_holds_the_same_run() {
    let mut state = SessionState::default();
    state.push(pending("read", "a", "1", Some("r1")), 30);
    state.push(pending("read", "a", "2", None), 30);
    state.push(pending("read", "a", "3", Some("r2")), 30);
    state.push(pending("read", "a", "4", Some("r1")), 30);
    let ids = |run| {
        state
            .scoped(run)
            .iter()
            .map(|r| r.call_id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(Some("r1")), ["1", "4"]);
    assert_eq!(ids(None), ["2"]);
    assert_eq!(ids(Some("r3")), Vec::<String>::new());
}

#[test]
fn outcome_fills_the_matching_call_id_in_the_same_run() {
    let mut state = SessionState::default();
    state.push(pending("read", "a", "c1", Some("r1")), 30);
    state.push(pending("read", "a", "c2", Some("r1")), 30);
    state.push(pending("read", "a", "c1", Some("r2")), 30);
    apply(&mut state, Some("r1"), "c1", "read", digest("h1"));
    let hashes: Vec<Option<&str>> = state
        .history
        .iter()
        .map(|r| r.result_hash.as_deref())
        .collect();
    assert_eq!(hashes, [Some("h1"), None, None]);

    // An empty call id matches the newest unfinished record of the tool.
    apply(&mut state, Some("r1"), "", "read", digest("h2"));
    assert_eq!(state.history[1].result_hash.as_deref(), Some("h2"));
    assert_eq!(state.history.len(), 3);
}

#[test]
fn unmatched_outcome_appends_a_finished_record() {
    let mut state = SessionState::default();
    state.push(pending("read", "a", "c1", None), 30);
    apply(&mut state, None, "zz", "read", digest("h"));
    assert_eq!(state.history.len(), 2);
    let appended = &state.history[1];
    assert_eq!(appended.call_id, "zz");
    assert_eq!(appended.result_hash.as_deref(), Some("h"));
    assert_eq!(appended.args_hash, "read:unrecorded:zz");
    assert_eq!(state.history[0].result_hash, None);

    // A second outcome for a finished call appends rather than overwrites.
    apply(&mut state, None, "c1", "read", digest("x"));
    apply(&mut state, None, "c1", "read", digest("y"));
    assert_eq!(state.history[0].result_hash.as_deref(), Some("x"));
    assert_eq!(state.history.len(), 3);
}

#[test]
fn a_veto_repeats_the_previous_outcome_of_the_same_call() {
    let mut state = SessionState::default();
    state.push(rec("exec", "a", Some("old")), 30);
    state.push(rec("exec", "a", Some("same")), 30);
    state.push(rec("exec", "b", Some("other")), 30);
    state.push(pending("exec", "a", "v1", None), 30);
    apply(&mut state, None, "v1", "exec", None);
    assert_eq!(state.history[3].result_hash.as_deref(), Some("same"));

    // With no earlier outcome for the call, the veto gets the marker.
    state.push(pending("exec", "c", "v2", None), 30);
    apply(&mut state, None, "v2", "exec", None);
    assert_eq!(
        state.history[4].result_hash.as_deref(),
        Some(VETO_MARKER_HASH)
    );

    // Outcomes of another run are not inherited.
    state.push(pending("exec", "b", "v3", Some("r9")), 30);
    apply(&mut state, Some("r9"), "v3", "exec", None);
    assert_eq!(
        state.history[5].result_hash.as_deref(),
        Some(VETO_MARKER_HASH)
    );
}

#[test]
fn warnings_are_emitted_once_per_bucket_of_ten() {
    let mut state = SessionState::default();
    let emitted: Vec<usize> = (1..=31)
        .filter(|count| state.should_emit_warning("k", *count))
        .collect();
    assert_eq!(emitted, [10, 20, 30]);
    // Another key has its own buckets.
    assert!(state.should_emit_warning("k2", 12));
    assert!(!state.should_emit_warning("k2", 19));
}

#[test]
fn warning_keys_are_bounded() {
    let mut state = SessionState::default();
    for i in 0..(MAX_WARNING_KEYS + 10) {
        assert!(state.should_emit_warning(&format!("k{i}"), 10));
    }
    assert_eq!(state.warning_key_count(), MAX_WARNING_KEYS);
    // The oldest keys were dropped, so they emit again; recent ones do not.
    assert!(state.should_emit_warning("k0", 10));
    assert!(!state.should_emit_warning(&format!("k{}", MAX_WARNING_KEYS + 9), 10));
}
