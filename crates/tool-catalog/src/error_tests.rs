use std::collections::HashSet;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

#[test]
fn codes_are_unique_namespaced_snake_case() {
    let mut seen = HashSet::new();
    for code in ToolErrorCode::ALL {
        let s = code.as_str();
        assert!(seen.insert(s), "duplicate code {s}");
        let (area, what) = s.split_once('.').unwrap_or_else(|| panic!("{s}: no area"));
        for part in [area, what] {
            assert!(
                !part.is_empty() && part.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{s}: not snake case"
            );
        }
    }
}

#[test]
fn every_kind_has_a_default_code_of_that_kind() {
    for kind in ToolErrorKind::ALL {
        assert_eq!(ToolErrorCode::default_for(kind).kind(), kind);
    }
}

#[test]
fn constructors_pick_their_kind() {
    assert_eq!(ToolError::input("p", "m").kind(), ToolErrorKind::Input);
    assert_eq!(ToolError::input("p", "m").param(), Some("p"));
    assert_eq!(ToolError::invalid_arguments("m").param(), None);
    assert_eq!(ToolError::execution("m").kind(), ToolErrorKind::Execution);
    assert_eq!(
        ToolError::unauthorized("m").kind(),
        ToolErrorKind::Unauthorized
    );
    assert!(ToolError::aborted("stop").is_aborted());
    assert!(ToolError::timed_out("late").is_timeout());
    assert!(ToolError::unavailable("gone").is_unavailable());
}

#[test]
fn the_code_decides_the_kind() {
    let e = ToolError::execution("m").with_code(ToolErrorCode::McpTimeout);
    assert!(e.is_timeout());
    assert_eq!(e.status(), 504);
    let e = ToolError::input("path", "m").with_code(ToolErrorCode::FsIo);
    assert_eq!(e.kind(), ToolErrorKind::Execution);
    assert_eq!(
        e.param(),
        Some("path"),
        "the parameter survives a code change"
    );
}

#[test]
fn abort_shows_its_reason() {
    let e = ToolError::aborted("user pressed stop");
    assert_eq!(e.to_string(), "aborted: user pressed stop");
    assert_eq!(e.message(), "user pressed stop");
}

#[test]
fn context_keeps_code_param_and_details() {
    let e = ToolError::input("path", "escape")
        .with_code(ToolErrorCode::FsEscape)
        .with_detail("path", "../x")
        .context("section 2");
    assert_eq!(e.message(), "section 2: escape");
    assert_eq!(e.code(), ToolErrorCode::FsEscape);
    assert_eq!(e.param(), Some("path"));
    assert_eq!(
        e.details().and_then(|d| d.get("path")),
        Some(&json!("../x"))
    );
}

#[test]
fn serialises_kind_code_message_param_details() {
    let e = ToolError::input("path", "no such file")
        .with_code(ToolErrorCode::FsNotFound)
        .with_detail("path", "a.txt");
    assert_eq!(
        serde_json::to_value(&e).ok(),
        Some(json!({
            "kind": "input",
            "code": "fs.not_found",
            "message": "no such file",
            "param": "path",
            "details": {"path": "a.txt"},
        }))
    );
    assert_eq!(
        serde_json::to_value(ToolError::execution("boom")).ok(),
        Some(json!({"kind": "execution", "code": "tool.failed", "message": "boom"}))
    );
}

#[test]
fn empty_details_are_none() {
    assert_eq!(
        ToolError::execution("m").with_details(Map::new()).details(),
        None
    );
}
