#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::record::Outcome;

fn start() -> CallStart {
    CallStart {
        call_id: "call-1".into(),
        session_key: "agent:main:main".into(),
        agent_id: "main".into(),
        tool: "exec".into(),
        params_digest: "a".repeat(64),
        at_ms: 1,
        tool_call_id: Some("toolu_01".into()),
    }
}

fn field_of(err: JournalError) -> &'static str {
    match err {
        JournalError::Invalid { field, .. } => field,
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn a_good_start_passes() {
    check_start(&start()).unwrap();
}

#[test]
fn each_bad_field_is_named() {
    let cases: Vec<(CallStart, &str)> = vec![
        (
            CallStart {
                call_id: String::new(),
                ..start()
            },
            "callId",
        ),
        (
            CallStart {
                call_id: "x".repeat(MAX_CALL_ID_BYTES + 1),
                ..start()
            },
            "callId",
        ),
        (
            CallStart {
                call_id: "a\u{0}b".into(),
                ..start()
            },
            "callId",
        ),
        (
            CallStart {
                session_key: "s\nk".into(),
                ..start()
            },
            "sessionKey",
        ),
        (
            CallStart {
                agent_id: String::new(),
                ..start()
            },
            "agentId",
        ),
        (
            CallStart {
                tool: "t".repeat(MAX_NAME_BYTES + 1),
                ..start()
            },
            "tool",
        ),
        (
            CallStart {
                params_digest: "A".repeat(64),
                ..start()
            },
            "paramsDigest",
        ),
        (
            CallStart {
                params_digest: r#"{"command":"rm"}"#.into(),
                ..start()
            },
            "paramsDigest",
        ),
        (
            CallStart {
                at_ms: u64::MAX,
                ..start()
            },
            "atMs",
        ),
        (
            CallStart {
                tool_call_id: Some(String::new()),
                ..start()
            },
            "toolCallId",
        ),
        (
            CallStart {
                tool_call_id: Some("t\u{1b}[2J".into()),
                ..start()
            },
            "toolCallId",
        ),
        (
            CallStart {
                tool_call_id: Some("x".repeat(MAX_CALL_ID_BYTES + 1)),
                ..start()
            },
            "toolCallId",
        ),
    ];
    for (bad, field) in cases {
        assert_eq!(field_of(check_start(&bad).unwrap_err()), field, "{bad:?}");
    }
}

#[test]
fn messages_say_how_to_fix() {
    let err = check_start(&CallStart {
        call_id: "x".repeat(300),
        ..start()
    })
    .unwrap_err();
    assert!(err.to_string().contains("at most 256 bytes"), "{err}");
    let err = check_start(&CallStart {
        params_digest: "nope".into(),
        ..start()
    })
    .unwrap_err();
    assert!(err.to_string().contains("params_digest"), "{err}");
}

#[test]
fn end_times_must_fit() {
    let end = CallEnd {
        outcome: Outcome::Ok,
        summary: String::new(),
        at_ms: 1,
        duration_us: u64::MAX,
    };
    assert_eq!(field_of(normalise_end(end).unwrap_err()), "durationUs");
}

#[test]
fn long_summaries_are_cut_at_a_char_boundary() {
    // 'é' is two bytes, so the cut point falls inside a character.
    let long = "é".repeat(MAX_SUMMARY_BYTES);
    let cut = cut_summary(long);
    assert!(cut.len() <= MAX_SUMMARY_BYTES);
    assert!(cut.ends_with('…'));
    assert!(cut.trim_end_matches('…').chars().all(|c| c == 'é'));
    let short = "exit 0".to_string();
    assert_eq!(cut_summary(short.clone()), short);
}

#[test]
fn history_limit_is_capped() {
    check_history_limit(MAX_HISTORY_LIMIT).unwrap();
    assert_eq!(
        field_of(check_history_limit(MAX_HISTORY_LIMIT + 1).unwrap_err()),
        "limit"
    );
}
