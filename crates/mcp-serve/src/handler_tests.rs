#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;

use super::{CURSOR_PREFIX, fresh_call_id, parse_cursor};

#[test]
fn cursors_round_trip_and_garbage_is_refused_with_the_fix() {
    assert_eq!(parse_cursor(None).unwrap(), 0);
    assert_eq!(
        parse_cursor(Some(&format!("{CURSOR_PREFIX}40"))).unwrap(),
        40
    );
    for bad in [
        "40",
        "talon-page:",
        "talon-page:-1",
        "talon-page:1e3",
        "x".repeat(500).as_str(),
    ] {
        let err = parse_cursor(Some(bad)).unwrap_err();
        assert!(
            err.message.contains("invalid tools/list cursor"),
            "{bad}: {err:?}"
        );
        assert!(err.message.contains("nextCursor"));
        assert!(err.message.len() < 300, "the cursor is echoed unbounded");
    }
}

#[test]
fn call_ids_are_fresh() {
    let ids: HashSet<String> = (0..1000).map(|_| fresh_call_id().unwrap()).collect();
    assert_eq!(ids.len(), 1000);
    assert!(
        ids.iter()
            .all(|id| id.len() == 28 && id.starts_with("mcp-"))
    );
}
