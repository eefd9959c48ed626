#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;

use proptest::prelude::*;

use super::*;

fn servers(names: &[&str]) -> Vec<String> {
    safe_server_names(names, &mut HashSet::new())
}

#[test]
fn fragments_follow_the_openclaw_rules() {
    let cases = [
        ("github", "mcp", "github"),
        ("  github  ", "mcp", "github"),
        ("my server", "mcp", "my-server"),
        ("dots.and/slashes", "tool", "dots-and-slashes"),
        ("café", "tool", "caf-"),
        // One BMP character is one UTF-16 unit, an astral one two.
        ("工具", "tool", "tool---"),
        ("🚀launch", "tool", "tool---launch"),
        ("1password", "mcp", "mcp-1password"),
        ("_private", "tool", "tool-_private"),
        ("-dash", "tool", "tool--dash"),
        ("", "mcp", "mcp"),
        ("   ", "tool", "tool"),
        ("Kebab-Case_ok", "tool", "Kebab-Case_ok"),
    ];
    for (raw, fallback, want) in cases {
        assert_eq!(sanitize_fragment(raw, fallback), want, "input {raw:?}");
    }
}

#[test]
fn server_names_are_cut_to_30_and_deduplicated_case_insensitively_in_order() {
    let long = "a".repeat(40);
    let got = servers(&["GitHub", "github", "GITHUB", &long, &long, "", "  "]);
    assert_eq!(
        got,
        vec![
            "GitHub".to_owned(),
            "github-2".to_owned(),
            "GITHUB-3".to_owned(),
            "a".repeat(30),
            format!("{}-2", "a".repeat(28)),
            "mcp".to_owned(),
            "mcp-2".to_owned(),
        ]
    );
    for name in &got {
        assert!(name.len() <= MAX_SERVER_NAME_CHARS, "{name}");
    }
}

#[test]
fn server_suffixes_past_nine_still_fit() {
    let names: Vec<String> = (0..12).map(|_| "s".repeat(30)).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let got = servers(&refs);
    assert_eq!(got[9], format!("{}-10", "s".repeat(27)));
    assert!(got.iter().all(|n| n.len() == 30));
    let unique: HashSet<_> = got.iter().map(|n| n.to_lowercase()).collect();
    assert_eq!(unique.len(), got.len());
}

#[test]
fn tool_names_keep_the_server_and_cut_the_tool_part() {
    let mut reserved = HashSet::new();
    assert_eq!(
        safe_tool_name("github", "create_issue", &mut reserved),
        "github__create_issue"
    );
    let server = "s".repeat(30);
    let long_tool = "t".repeat(100);
    let got = safe_tool_name(&server, &long_tool, &mut reserved);
    assert_eq!(got, format!("{server}__{}", "t".repeat(32)));
    assert_eq!(got.len(), 64);
    // A clash cuts the fragment so that `-2` still fits in 64.
    let again = safe_tool_name(&server, &long_tool, &mut reserved);
    assert_eq!(again, format!("{server}__{}-2", "t".repeat(30)));
    assert_eq!(again.len(), 64);
}

#[test]
fn tool_names_clash_case_insensitively_with_reserved_names() {
    let mut reserved: HashSet<String> = ["fix__echo".to_owned()].into();
    assert_eq!(safe_tool_name("fix", "Echo", &mut reserved), "fix__Echo-2");
    assert_eq!(safe_tool_name("fix", "ECHO", &mut reserved), "fix__ECHO-3");
    assert_eq!(safe_tool_name("fix", "", &mut reserved), "fix__tool");
    assert_eq!(safe_tool_name("fix", "工具", &mut reserved), "fix__tool---");
    assert_eq!(
        safe_tool_name("fix", "9lives", &mut reserved),
        "fix__tool-9lives"
    );
}

#[test]
fn validity_check_rejects_what_the_algorithm_never_produces() {
    assert!(is_valid_tool_name("github__create_issue"));
    assert!(!is_valid_tool_name(""));
    assert!(!is_valid_tool_name("1abc"));
    assert!(!is_valid_tool_name("a b"));
    assert!(!is_valid_tool_name(&"a".repeat(65)));
}

fn any_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9_ .-]{0,80}",
        "\\PC{0,40}",
        Just("Echo".to_owned()),
        Just("echo".to_owned()),
        Just("x".repeat(100)),
    ]
}

/// Name a whole set the way materialisation does.
fn name_all(servers: &[String], tools: &[(usize, String)]) -> Vec<String> {
    let refs: Vec<&str> = servers.iter().map(String::as_str).collect();
    let safe = safe_server_names(&refs, &mut HashSet::new());
    let mut reserved = HashSet::new();
    tools
        .iter()
        .map(|(s, t)| safe_tool_name(&safe[*s % safe.len()], t, &mut reserved))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn names_are_valid_unique_bounded_and_stable(
        servers in prop::collection::vec(any_name(), 1..6),
        tools in prop::collection::vec((0usize..6, any_name()), 0..40),
    ) {
        let first = name_all(&servers, &tools);
        let mut seen = HashSet::new();
        for name in &first {
            prop_assert!(is_valid_tool_name(name), "invalid: {name:?}");
            prop_assert!(name.len() <= MAX_TOOL_NAME_CHARS);
            prop_assert!(seen.insert(name.to_lowercase()), "duplicate: {name:?}");
        }
        // Same input set, same output.
        prop_assert_eq!(first, name_all(&servers, &tools));
    }

    #[test]
    fn server_names_are_valid_and_bounded(servers in prop::collection::vec(any_name(), 1..12)) {
        let refs: Vec<&str> = servers.iter().map(String::as_str).collect();
        let safe = safe_server_names(&refs, &mut HashSet::new());
        let mut seen = HashSet::new();
        for s in &safe {
            prop_assert!(s.len() <= MAX_SERVER_NAME_CHARS);
            prop_assert!(s.starts_with(|c: char| c.is_ascii_alphabetic()));
            prop_assert!(seen.insert(s.to_lowercase()));
        }
    }
}
