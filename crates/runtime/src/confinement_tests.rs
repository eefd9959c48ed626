#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use talon_tool_policy::RunContext;

use super::*;
use crate::resolve_run_sandbox;

fn decide(config: &str, agent: &str, key: &str) -> RunSandbox {
    let config = talon_config::load_str(config, "talon.json").unwrap().config;
    let mut ctx = RunContext::new(agent);
    ctx.session_key = key.to_owned();
    resolve_run_sandbox(&config, &ctx, Path::new("/state"), None)
}

const BASE: &str = r#"{ agents: {
    defaults: { sandbox: { mode: "all", workspaceAccess: "ro",
        docker: { network: "none", binds: ["/srv/data:/data:ro"] } } },
    list: [{ id: "main" }, { id: "other" }],
} }"#;

fn with(defaults: &str) -> String {
    format!(
        r#"{{ agents: {{ defaults: {{ sandbox: {{ mode: "all", {defaults} }} }}, list: [{{ id: "main" }}, {{ id: "other" }}] }} }}"#
    )
}

#[test]
fn an_unsandboxed_parent_constrains_nothing() {
    let parent = decide(r#"{}"#, "main", "main");
    let child = decide(BASE, "main", "x");
    assert!(check_child_confinement(&parent, &child).is_ok());
}

#[test]
fn the_same_sandbox_passes_and_narrowing_passes() {
    let parent = decide(BASE, "main", "p");
    assert!(check_child_confinement(&parent, &decide(BASE, "main", "c")).is_ok());
    let narrower = with(r#"workspaceAccess: "none", docker: { network: "none" }"#);
    assert!(check_child_confinement(&parent, &decide(&narrower, "main", "c")).is_ok());
    // With no access to agent files, another agent is no wider.
    assert!(check_child_confinement(&parent, &decide(&narrower, "other", "c")).is_ok());
}

#[test]
fn each_widening_is_refused_and_named() {
    let parent = decide(BASE, "main", "p");
    let cases = [
        (r#"{}"#, "main", None),
        (
            &*with(r#"workspaceAccess: "rw", docker: { network: "none" }"#),
            "main",
            Some("workspaceAccess"),
        ),
        (
            &*with(r#"workspaceAccess: "ro", docker: { network: "bridge" }"#),
            "main",
            Some("network"),
        ),
        (
            &*with(
                r#"workspaceAccess: "ro", docker: { network: "none", binds: ["/srv/data:/data:rw"] }"#,
            ),
            "main",
            Some("binds"),
        ),
        (
            &*with(
                r#"workspaceAccess: "ro", docker: { network: "none", binds: ["/etc/x:/x:ro"] }"#,
            ),
            "main",
            Some("binds"),
        ),
        (
            &*with(r#"workspaceAccess: "ro", backend: "ssh", docker: { network: "none" }"#),
            "main",
            Some("backend"),
        ),
        (
            &*with(r#"workspaceAccess: "ro", docker: { network: "none" }"#),
            "other",
            Some("agent"),
        ),
    ];
    for (config, agent, what) in cases {
        let child = decide(config, agent, "c");
        let err = check_child_confinement(&parent, &child).unwrap_err();
        match (what, &err) {
            (None, ConfinementError::NotSandboxed { .. }) => {
                assert_eq!(err.code(), "child_unsandboxed");
            }
            (Some(w), ConfinementError::Wider { what, .. }) => {
                assert_eq!(*what, w, "{config}");
                assert_eq!(err.code(), "child_sandbox_wider");
            }
            _ => panic!("{config}: unexpected {err:?}"),
        }
    }
}

#[test]
fn a_read_only_copy_of_a_parent_bind_is_not_wider() {
    let parent = decide(
        &with(r#"workspaceAccess: "ro", docker: { network: "none", binds: ["/srv/data:/data"] }"#),
        "main",
        "p",
    );
    let child = decide(
        &with(
            r#"workspaceAccess: "ro", docker: { network: "none", binds: ["/srv/data:/data:ro"] }"#,
        ),
        "main",
        "c",
    );
    assert!(check_child_confinement(&parent, &child).is_ok());
}
