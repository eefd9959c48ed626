#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::http::{HeaderMap, HeaderValue};

use super::McpCaller;

fn caller(headers: &[(&'static str, &str)], query: Option<&str>) -> McpCaller {
    let mut map = HeaderMap::new();
    for (k, v) in headers {
        map.insert(*k, HeaderValue::from_str(v).unwrap());
    }
    McpCaller {
        headers: map,
        query: query.map(str::to_owned),
        grant: None,
        peer: None,
    }
}

#[test]
fn the_bearer_token_is_read_case_insensitively_and_nothing_else_counts() {
    assert_eq!(
        caller(&[("authorization", "Bearer abc")], None).bearer_token(),
        Some("abc")
    );
    assert_eq!(
        caller(&[("authorization", "bearer  abc ")], None).bearer_token(),
        Some("abc")
    );
    assert_eq!(
        caller(&[("authorization", "Basic abc")], None).bearer_token(),
        None
    );
    assert_eq!(
        caller(&[("authorization", "Bearer ")], None).bearer_token(),
        None
    );
    assert_eq!(caller(&[], None).bearer_token(), None);
}

#[test]
fn the_session_header_wins_over_the_query() {
    let c = caller(&[("x-talon-session", "main")], Some("session=ops"));
    assert_eq!(c.session_hint().as_deref(), Some("main"));
    let c = caller(&[], Some("a=1&session=ops&b=2"));
    assert_eq!(c.session_hint().as_deref(), Some("ops"));
    assert_eq!(caller(&[], Some("session=")).session_hint(), None);
    assert_eq!(caller(&[], Some("mysession=x")).session_hint(), None);
    assert_eq!(caller(&[], None).session_hint(), None);
}
