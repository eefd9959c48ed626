#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;

use super::*;

#[test]
fn stat_fields_are_counted_from_the_last_parenthesis() {
    let line = "1234 (a) b (c) S 1 1234 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 98765 1000 10 18446744073709551615";
    assert_eq!(
        parse_stat(line),
        Some(Stat {
            state: 'S',
            ppid: 1,
            pgrp: 1234,
            starttime: 98765
        })
    );
    assert_eq!(parse_stat("garbage"), None);
}

#[test]
fn this_process_is_alive_since_its_start_time_and_not_another() {
    let me = std::process::id();
    let start = stat(me).unwrap().starttime;
    assert!(alive_since(me, start));
    assert!(!alive_since(me, start + 1));
    assert!(!alive(u32::MAX));
}

#[test]
fn the_label_is_found_in_an_environ_block() {
    let block = b"A=1\0TALON_PROC_LEAF=12-34-0-5\0B=2\0";
    assert_eq!(label_in_environ(block).as_deref(), Some("12-34-0-5"));
    assert_eq!(label_in_environ(b"X_TALON_PROC_LEAF=1\0"), None);
}
