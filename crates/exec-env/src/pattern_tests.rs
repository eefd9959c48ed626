use pretty_assertions::assert_eq;
use proptest::prelude::*;

use super::*;

fn pat(p: &str) -> NamePattern {
    NamePattern::parse(p).unwrap()
}

#[test]
fn star_matches_any_run_including_none() {
    let p = pat("*TOKEN*");
    for name in ["TOKEN", "GITHUB_TOKEN", "TOKEN_FILE", "MY_TOKEN_X"] {
        assert!(p.matches(name), "{name}");
    }
    for name in ["TOKE", "TOK_EN", ""] {
        assert!(!p.matches(name), "{name}");
    }
    assert!(pat("LC_*").matches("LC_ALL"));
    assert!(!pat("LC_*").matches("XLC_ALL"));
    assert!(pat("A*B*C").matches("AXXBYYC"));
    assert!(!pat("A*B*C").matches("AXXBYYCD"));
    assert!(pat("*").matches(""));
    assert!(pat("EXACT").matches("exact"));
    assert!(!pat("EXACT").matches("EXACTLY"));
}

#[test]
fn matching_ignores_case() {
    assert!(pat("*key*").matches("OPENAI_API_KEY"));
    assert!(pat("*KEY*").matches("openai_api_key"));
    assert!(pat("*Secret*").matches("aws_SECRET_access_key"));
}

#[test]
fn only_star_is_a_wildcard() {
    for bad in ["FOO?", "[AB]*", "{A,B}", "!FOO", "FOO-BAR", "A.B", "A B"] {
        let err = NamePattern::parse(bad).unwrap_err();
        assert!(
            matches!(err, PatternError::BadChar { .. }),
            "{bad}: {err:?}"
        );
    }
    assert_eq!(NamePattern::parse("  ").unwrap_err(), PatternError::Empty);
    assert_eq!(pat(" lc_* ").as_str(), "LC_*");
}

#[test]
fn many_stars_do_not_blow_up() {
    let p = pat(&"*A".repeat(40));
    let name = "A".repeat(39) + "B";
    assert!(!p.matches(&name));
}

proptest! {
    #[test]
    fn a_name_matches_itself_and_star_wraps(name in "[A-Za-z_][A-Za-z0-9_]{0,20}") {
        let wrapped = pat(&format!("*{name}*")).matches(&format!("X{name}Y"));
        let prefix = pat(&format!("{name}*")).matches(&name.to_lowercase());
        let itself = pat(&name).matches(&name);
        prop_assert!(itself && wrapped && prefix);
    }
}
