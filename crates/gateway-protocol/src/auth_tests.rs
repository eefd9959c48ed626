use super::*;

#[test]
fn bearer_tokens() {
    assert_eq!(bearer_token(Some("Bearer abc")), Some("abc"));
    assert_eq!(bearer_token(Some("bearer   abc ")), Some("abc"));
    assert_eq!(bearer_token(Some(" BEARER abc")), Some("abc"));
    assert_eq!(bearer_token(Some("Basic abc")), None);
    assert_eq!(bearer_token(Some("Bearer ")), None);
    assert_eq!(bearer_token(Some("Bearer")), None);
    assert_eq!(bearer_token(None), None);
    assert_eq!(
        bearer_token(Some(&authorization_header(" t0k "))),
        Some("t0k")
    );
}

#[test]
fn session_from_header_then_query() {
    assert_eq!(session_key(None, None), None);
    assert_eq!(
        session_key(None, Some("a=1&session=agent%3Amain%3Amain")).as_deref(),
        Some("agent:main:main")
    );
    assert_eq!(
        session_key(Some(" s1 "), Some("session=other")).as_deref(),
        Some("s1")
    );
    // An empty header falls back to the query.
    assert_eq!(
        session_key(Some("  "), Some("session=ops")).as_deref(),
        Some("ops")
    );
    assert_eq!(session_key(None, Some("session=")), None);
    assert_eq!(session_key(None, Some("mysession=x")), None);
    assert_eq!(
        session_key(None, Some("session=a+b%2")).as_deref(),
        Some("a b%2")
    );
    // A multi-byte character split by a bad escape does not panic.
    assert_eq!(session_key(None, Some("session=%é")).as_deref(), Some("%é"));
}
