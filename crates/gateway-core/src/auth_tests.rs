#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt as _;

use super::*;

#[test]
fn token_set_matches_exactly_and_picks_scope() {
    let mut set = TokenSet::new();
    set.add("reader-token-0123456789", Scope::ReadOnly);
    set.add("agent-token-0123456789", Scope::Runner);
    assert_eq!(set.scope_of("agent-token-0123456789"), Some(Scope::Runner));
    assert_eq!(
        set.scope_of("reader-token-0123456789"),
        Some(Scope::ReadOnly)
    );
    assert_eq!(set.scope_of("agent-token-012345678"), None);
    assert_eq!(set.scope_of("agent-token-01234567890"), None);
    assert_eq!(set.scope_of(""), None);
    assert!(!format!("{set:?}").contains("agent-token"));
}

/// Tokens carry an identity; a token given by its SHA-256 matches its
/// plain text, another token's text does not; the default id comes from
/// the hash, never the text.
#[test]
fn token_set_identifies_by_hash() {
    let mut set = TokenSet::new();
    let hash = token_hash("hashed-token-0123456789");
    set.add_hash(hash, Some("ci"), Scope::Owner);
    set.add("plain-token-0123456789", Scope::Runner);
    assert_eq!(
        set.identify(" hashed-token-0123456789 "),
        Some(Identity::new("ci", Scope::Owner))
    );
    let plain = set.identify("plain-token-0123456789").unwrap();
    assert_eq!(plain.scope, Scope::Runner);
    assert!(
        plain.id.starts_with("token-") && plain.id.len() == 14,
        "{plain:?}"
    );
    assert!(!plain.id.contains("plain"));
    assert_eq!(
        plain.id,
        default_token_id(&token_hash("plain-token-0123456789"))
    );
    assert_eq!(set.identify("hashed-token-012345678"), None);
    assert_eq!(
        set.identify_hash(&hash).map(|i| i.id),
        Some("ci".to_owned())
    );
    assert!(Identity::new("x", Scope::Operator).is_owner());
    assert!(!Identity::new("x", Scope::Runner).is_owner());
}

#[test]
fn token_file_is_created_0600_and_reused() {
    let dir = tempfile::tempdir().unwrap();
    let (t1, path) = load_or_create_token(dir.path()).unwrap();
    assert_eq!(t1.len(), 64);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let (t2, _) = load_or_create_token(dir.path()).unwrap();
    assert_eq!(t1, t2);
    // A file readable by others is tightened.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    load_or_create_token(dir.path()).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn limiter_locks_out_after_failures_and_forgets_after_window() {
    let limiter = AuthLimiter::new(3, Duration::from_millis(200));
    let peer: IpAddr = "127.0.0.9".parse().unwrap();
    let other: IpAddr = "127.0.0.10".parse().unwrap();
    for _ in 0..3 {
        assert!(!limiter.is_limited(peer));
        limiter.failed(peer);
    }
    assert!(limiter.is_limited(peer));
    assert!(!limiter.is_limited(other));
    let wait = limiter.retry_after(peer).unwrap();
    assert!(
        wait <= Duration::from_millis(200) && !wait.is_zero(),
        "{wait:?}"
    );
    assert_eq!(limiter.retry_after(other), None);
    std::thread::sleep(Duration::from_millis(250));
    assert!(!limiter.is_limited(peer));
}
