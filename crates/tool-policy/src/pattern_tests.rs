use super::*;

#[test]
fn literal_and_star() {
    assert!(Pattern::compile("*").matches("anything"));
    assert!(Pattern::compile("exec").matches("exec"));
    assert!(!Pattern::compile("exec").matches("exec2"));
}

#[test]
fn globs() {
    let p = Pattern::compile("sessions_*");
    assert!(p.matches("sessions_list"));
    assert!(p.matches("sessions_"));
    assert!(!p.matches("sessions"));
    let p = Pattern::compile("*_search");
    assert!(p.matches("web_search"));
    assert!(!p.matches("web_search2"));
    let p = Pattern::compile("a*b*c");
    assert!(p.matches("abc"));
    assert!(p.matches("aXbYc"));
    assert!(!p.matches("aXbY"));
    assert!(!p.matches("ac"));
    let p = Pattern::compile("ab*ab");
    assert!(!p.matches("ab"));
    assert!(p.matches("abab"));
    let p = Pattern::compile("*x*");
    assert!(p.matches("x"));
    assert!(!p.matches("y"));
    assert!(Pattern::compile("**").matches(""));
}

#[test]
fn regex_metacharacters_are_literal() {
    let p = Pattern::compile("srv__a.b*");
    assert!(p.matches("srv__a.bcd"));
    assert!(!p.matches("srv__aXbcd"));
}

#[test]
fn validation() {
    assert_eq!(validate_entry("  "), Err(PatternError::Empty));
    assert!(validate_entry("exec").is_ok());
    assert!(validate_entry("group:fs").is_ok());
    assert!(validate_entry("srv__*").is_ok());
    let err = validate_entry("exe?").unwrap_err();
    assert_eq!(
        err.to_string(),
        "`exe?` uses `?`, which is not a wildcard here: only `*` is (write e.g. `exe*`)"
    );
    assert!(matches!(
        validate_entry("web fetch"),
        Err(PatternError::Whitespace { .. })
    ));
    assert!(matches!(
        validate_entry("group:"),
        Err(PatternError::EmptyGroup { .. })
    ));
}

proptest::proptest! {
    /// The hand-written matcher agrees with a naive reference matcher.
    #[test]
    fn glob_agrees_with_reference(pat in "[ab*]{0,6}", name in "[ab]{0,6}") {
        let compiled = if pat.is_empty() { None } else { Some(Pattern::compile(&pat)) };
        if let Some(c) = compiled {
            proptest::prop_assert_eq!(c.matches(&name), reference(pat.as_bytes(), name.as_bytes()));
        }
    }
}

fn reference(p: &[u8], s: &[u8]) -> bool {
    match (p.first(), s.first()) {
        (None, None) => true,
        (None, Some(_)) => false,
        (Some(b'*'), _) => reference(&p[1..], s) || (!s.is_empty() && reference(p, &s[1..])),
        (Some(c), Some(d)) if c == d => reference(&p[1..], &s[1..]),
        _ => false,
    }
}
