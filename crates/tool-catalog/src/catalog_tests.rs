use pretty_assertions::assert_eq;

use super::*;

#[test]
fn catalog_has_42_unique_ids() {
    assert_eq!(CORE_TOOLS.len(), 42);
    let mut ids: Vec<_> = CORE_TOOLS.iter().map(|t| t.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 42);
}

#[test]
fn coding_profile_is_derived_and_ends_with_bundle_mcp() {
    let coding = Profile::Coding.allow_list();
    assert_eq!(coding.last().map(String::as_str), Some("bundle-mcp"));
    assert_eq!(
        &coding[..6],
        ["read", "write", "edit", "apply_patch", "exec", "process"]
    );
    assert!(
        !coding
            .iter()
            .any(|t| t == "message" || t == "browser" || t == "tts")
    );
    assert!(coding.iter().any(|t| t == "cron"));
}

#[test]
fn messaging_profile_matches_openclaw() {
    assert_eq!(
        Profile::Messaging.allow_list(),
        vec![
            "sessions",
            "sessions_list",
            "sessions_history",
            "sessions_search",
            "sessions_send",
            "session_status",
            "message",
            "bundle-mcp",
        ]
    );
    assert_eq!(Profile::Full.allow_list(), vec!["*"]);
}

#[test]
fn openclaw_group_excludes_files_shell_and_canvas() {
    let members = core_group_members(OPENCLAW_GROUP_ID).unwrap();
    assert_eq!(members.len(), 35);
    for excluded in [
        "read",
        "write",
        "edit",
        "apply_patch",
        "exec",
        "process",
        "canvas",
    ] {
        assert!(!members.contains(&excluded), "{excluded}");
    }
}

#[test]
fn section_groups() {
    assert_eq!(
        core_group_members("group:runtime").unwrap(),
        vec!["exec", "process", "code_execution"]
    );
    assert_eq!(
        core_group_members("group:media").unwrap(),
        vec![
            "image",
            "image_generate",
            "music_generate",
            "video_generate",
            "tts"
        ]
    );
    assert_eq!(core_group_members("group:nope"), None);
    assert_eq!(core_group_members("group:plugins"), None);
    assert_eq!(core_group_ids().len(), 12);
}

#[test]
fn normalisation_and_aliases() {
    assert_eq!(normalize_tool_name("  Exec "), "exec");
    assert_eq!(normalize_tool_name("bash"), "exec");
    assert_eq!(normalize_tool_name("Apply-Patch"), "apply_patch");
    assert_eq!(normalize_tool_name("shell"), "shell");
}

#[test]
fn profile_parse() {
    assert_eq!(" Coding ".parse::<Profile>(), Ok(Profile::Coding));
    assert!("cod".parse::<Profile>().is_err());
}

#[test]
fn execution_mode_is_written_as_openclaw_spells_it() {
    use crate::ExecutionMode;
    assert_eq!(
        serde_json::to_value(ExecutionMode::Serial).unwrap(),
        serde_json::json!("sequential")
    );
    assert_eq!(
        serde_json::to_value(ExecutionMode::Parallel).unwrap(),
        serde_json::json!("parallel")
    );
    for spelled in ["sequential", "serial"] {
        let mode: ExecutionMode = serde_json::from_value(serde_json::json!(spelled)).unwrap();
        assert_eq!(mode, ExecutionMode::Serial);
    }
}

#[test]
fn tool_facts_live_in_the_catalog_row() {
    use crate::{is_read_only, runs_commands};
    let read_only: Vec<&str> = CORE_TOOLS
        .iter()
        .filter(|t| t.read_only)
        .map(|t| t.id)
        .collect();
    assert_eq!(
        read_only,
        vec![
            "read",
            "web_search",
            "web_fetch",
            "memory_search",
            "memory_get",
            "sessions_list",
            "sessions_history",
            "session_status",
            "gateway",
            "agents_list",
        ]
    );
    // Anything that changes state, and anything not in the catalog, is not
    // read-only.
    for id in [
        "write",
        "edit",
        "apply_patch",
        "exec",
        "process",
        "cron",
        "mcp__x__y",
        "nope",
    ] {
        assert!(!is_read_only(id), "{id}");
    }
    assert!(runs_commands("exec"));
    assert!(!runs_commands("process") && !runs_commands("read") && !runs_commands("bash"));
    assert!(
        CORE_TOOLS.iter().all(|t| !(t.read_only && t.runs_commands)),
        "a command runner is never read-only"
    );
}
