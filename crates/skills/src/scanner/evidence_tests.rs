use pretty_assertions::assert_eq;

use super::*;

#[test]
fn evidence_is_trimmed_and_truncated() {
    assert_eq!(format_evidence("   x = 1;  \r"), "x = 1;");
    let long = "a".repeat(130);
    let ev = format_evidence(&long);
    assert_eq!(ev, format!("{}…", "a".repeat(120)));
    assert_eq!(format_evidence(&"b".repeat(120)), "b".repeat(120));
    // Multi-byte characters are cut on a character boundary.
    let wide = "é".repeat(200);
    assert_eq!(format_evidence(&wide), format!("{}…", "é".repeat(120)));
}

#[test]
fn evidence_with_a_secret_is_redacted() {
    for line in [
        "token = ghp_abcdefghijklmnopqrstuvwxyz0123",
        "k=sk-svcacct-abcdefghijklmnopqrstuvwxyz0123456789",
        "github_pat_abcdefghijklmnopqrstuvwx",
        "xoxb-1234567890-abcdefghijkl",
        "AIzaSyA1234567890abcdefghijklmnopqrstuv",
        "aws AKIAABCDEFGHIJKLMNOP",
        "-----BEGIN OPENSSH PRIVATE KEY-----",
    ] {
        assert_eq!(format_evidence(line), REDACTED, "{line}");
    }
    // Token shapes glued to more token characters are not the literal.
    assert_eq!(format_evidence("ghp_short"), "ghp_short");
    assert!(find_literal_secret("AIzaSyA1234567890abcdefghijklmnopqrstuv-extra").is_none());
}
