//! insta snapshots of the CLI's `--json` outputs on the bundled example
//! config (`fixtures/example/talon.json`), with a temp `HOME` and state
//! dir: `tools list`, `policy explain`, `policy check`, `sandbox explain`,
//! `sandbox validate`, `config validate` and `cron next`. Temp paths, the
//! fixture root and volatile values are redacted; a changed shape is a
//! snapshot diff to review.

use std::path::{Path, PathBuf};

use talon_test_support::snapshot::Redactions;

use super::util::{cli, fixture};

/// `talon --config <example> <args>` in a fresh home; its JSON, redacted.
fn json_of(args: &[&str], code: i32) -> serde_json::Value {
    let home = tempfile::tempdir().unwrap();
    let config = fixture("example/talon.json");
    let run = cli()
        .config(&config)
        .home(home.path())
        .state_dir(home.path().join("state"))
        .env(
            "DOCKER_HOST",
            format!("unix://{}/no-docker.sock", home.path().display()),
        )
        .args(args)
        .run();
    assert_eq!(run.code, code, "{run:?}");
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    Redactions::new()
        .path(home.path(), "[home]")
        .path(&fixtures, "[fixtures]")
        .path(Path::new(env!("CARGO_MANIFEST_DIR")), "[talon]")
        .apply(&run.json())
}

#[test]
fn tools_list() {
    insta::assert_json_snapshot!(json_of(&["tools", "list", "--json"], 0));
}

#[test]
fn policy_explain_main_session() {
    let mut v = json_of(&["policy", "explain", "--json"], 0);
    // The whole config is echoed back; its own snapshot is `config validate`.
    v["config"] = serde_json::json!("<config>");
    insta::assert_json_snapshot!(v);
}

#[test]
fn policy_check_allowed_and_denied() {
    insta::assert_json_snapshot!(
        "policy_check_allowed",
        json_of(&["policy", "check", "read", "--json"], 0)
    );
    insta::assert_json_snapshot!(
        "policy_check_denied",
        json_of(
            &[
                "--session",
                "agent:main:telegram:dm:7",
                "policy",
                "check",
                "exec",
                "--json"
            ],
            1
        )
    );
}

#[test]
fn sandbox_explain_group_session() {
    insta::assert_json_snapshot!(json_of(
        &[
            "--session",
            "agent:main:telegram:group:1",
            "sandbox",
            "explain",
            "--json"
        ],
        0
    ));
}

#[test]
fn sandbox_validate() {
    insta::assert_json_snapshot!(json_of(&["sandbox", "validate", "--json"], 0));
}

#[test]
fn config_validate() {
    insta::assert_json_snapshot!(json_of(&["config", "validate", "--json"], 0));
}

#[test]
fn cron_next() {
    insta::assert_json_snapshot!(json_of(
        &[
            "cron",
            "next",
            "0 9 * * 1-5",
            "--tz",
            "Europe/Paris",
            "--from",
            "2026-03-06T14:00:00Z",
            "--count",
            "3",
            "--json"
        ],
        0
    ));
}

/// With `--json`, a load or usage error is a JSON object on stdout as well
/// as the message on stderr, with the same exit status (2).
#[test]
fn errors_are_json_on_stdout_with_json() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("talon.json");
    std::fs::write(&bad, "{ tools: ").unwrap();
    let bad = bad.display().to_string();
    let r = super::util::talon(&["--config", &bad, "policy", "explain", "--json"]);
    assert_eq!(r.code, 2, "{r:?}");
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("talon.json"),
        "{v}"
    );
    assert!(r.stderr.contains("talon.json"), "{}", r.stderr);
    // Without --json stdout stays empty.
    let r = super::util::talon(&["--config", &bad, "policy", "explain"]);
    assert_eq!(r.code, 2);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
}
