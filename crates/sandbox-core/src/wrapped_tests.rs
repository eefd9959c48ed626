#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

use super::*;

#[test]
fn the_pid_line_is_taken_even_when_split_across_reads() {
    let mut line = PidLine::new();
    assert_eq!(line.feed(b"12"), PidLineStep::More);
    assert_eq!(
        line.feed(b"3\r\nhello"),
        PidLineStep::Done {
            pgid: Some(123),
            rest: b"hello".to_vec()
        }
    );
}

#[test]
fn output_that_is_not_a_pid_line_is_kept_whole() {
    for (input, why) in [
        (&b"not a pid\nmore"[..], "words"),
        (b"1\nmore", "pid 1 is init, never a group to kill"),
        (b"0\n", "zero"),
        (b"99999999999\nx", "over u32"),
    ] {
        assert_eq!(
            PidLine::new().feed(input),
            PidLineStep::Done {
                pgid: None,
                rest: input.to_vec()
            },
            "{why}"
        );
    }
    let long = vec![b'7'; PID_LINE_MAX + 1];
    assert_eq!(
        PidLine::new().feed(&long),
        PidLineStep::Done {
            pgid: None,
            rest: long.clone()
        }
    );
    let mut line = PidLine::new();
    assert_eq!(line.feed(b"42"), PidLineStep::More);
    assert_eq!(line.into_pending(), b"42".to_vec());
}

#[test]
fn path_travels_as_the_prepend_variable_and_bad_keys_are_refused() {
    let env = BTreeMap::from([
        ("PATH".to_owned(), "/opt/tool/bin".to_owned()),
        ("FOO".to_owned(), "bar baz".to_owned()),
    ]);
    let (vars, prepend) = wrapped_env(&env, true).unwrap();
    assert!(prepend);
    assert_eq!(
        vars,
        vec![
            "FOO=bar baz".to_owned(),
            format!("{PREPEND_PATH_VAR}=/opt/tool/bin")
        ]
    );
    let (vars, prepend) =
        wrapped_env(&BTreeMap::from([("PATH".to_owned(), String::new())]), true).unwrap();
    assert!(!prepend && vars.is_empty());
    for key in ["", "A=B", "NUL\0", PREPEND_PATH_VAR] {
        let env = BTreeMap::from([(key.to_owned(), "x".to_owned())]);
        assert!(wrapped_env(&env, false).is_err(), "{key:?}");
    }
    let env = BTreeMap::from([("A".to_owned(), "x\0".to_owned())]);
    assert!(wrapped_env(&env, false).is_err());
    // A name the engine takes but `export` would not.
    let env = BTreeMap::from([("my-var".to_owned(), "x".to_owned())]);
    assert!(wrapped_env(&env, false).is_ok());
    let err = wrapped_env(&env, true).unwrap_err();
    assert_eq!(err.kind(), crate::SandboxErrorKind::Exec);
    assert!(is_portable_name("_a1") && is_portable_name("A_1"));
    for bad in ["", "1A", "A-B", "A=B", "A B", "é"] {
        assert!(!is_portable_name(bad), "{bad}");
    }
}

#[tokio::test]
async fn a_kill_waits_for_the_group_or_the_end_and_the_first_status_wins() {
    let state = Arc::new(WrappedState::new());
    let reporter = Arc::clone(&state);
    let waiter = tokio::spawn(async move { reporter.wait_pgid().await });
    tokio::task::yield_now().await;
    assert!(!*state.subscribe_line().borrow());
    state.line_read(Some(77));
    assert_eq!(waiter.await.unwrap(), Some(77));
    assert!(*state.subscribe_line().borrow());

    let state = Arc::new(WrappedState::new());
    let ender = Arc::clone(&state);
    let waiter = tokio::spawn(async move { ender.wait_pgid().await });
    tokio::task::yield_now().await;
    state.finish(Ok(ExitStatus::Code(3)));
    state.finish(Ok(ExitStatus::Code(9)));
    // Ended without a group: nothing to kill, and no 5 s wait.
    let started = std::time::Instant::now();
    assert_eq!(waiter.await.unwrap(), None);
    assert!(started.elapsed() < PID_WAIT);
    assert_eq!(state.wait("test").await.unwrap(), ExitStatus::Code(3));
    assert!(state.is_done() && state.ended_with_status());
    assert!(!state.was_killed());
    state.mark_killed();
    assert!(state.was_killed());
}
