//! `talon sandbox explain|recreate` with the `local` backend: explain lists
//! the protections this host gives and the settings the backend refuses;
//! recreate has nothing to remove.

use std::path::Path;
use std::process::{Command, Stdio};

use super::util::Run;

fn talon(d: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_talon"))
        .arg("--config")
        .arg(d.join("talon.json"))
        .args(args)
        .env_remove("TALON_CONFIG")
        .env("TALON_STATE_DIR", d.join("state"))
        // No Landlock helper, whatever else the target dir holds (the
        // helper's own tests are in talon-sandbox-local).
        .env("TALON_SANDBOX_EXEC", d.join("no-such-helper"))
        .env(
            "DOCKER_HOST",
            format!("unix://{}/no-docker.sock", d.display()),
        )
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn explain_shows_the_local_protections_and_refused_settings() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("ws")).unwrap();
    std::fs::write(
        d.join("talon.json"),
        r#"{ agents: { defaults: { workspace: "./ws", sandbox: { mode: "all", backend: "local",
            workspaceAccess: "rw", docker: { pidsLimit: 64, network: "my-compose-net" } } } } }"#,
    )
    .unwrap();
    let run = talon(d, &["sandbox", "explain", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let doc = run.json();
    assert_eq!(doc["backend"], "local");
    let local = &doc["local"];
    assert_eq!(local["bwrap"], "/usr/bin/bwrap");
    assert_eq!(local["seccomp"]["applied"], true);
    assert!(
        local["seccomp"]["detail"]
            .as_str()
            .unwrap()
            .contains("ptrace")
    );
    assert_eq!(local["landlock"]["applied"], false);
    assert!(
        local["landlock"]["detail"]
            .as_str()
            .unwrap()
            .contains("talon-sandbox-exec was not found"),
        "{}",
        local["landlock"]
    );
    assert!(
        local["namespaces"]["detail"]
            .as_str()
            .unwrap()
            .contains("--unshare-net")
    );
    assert!(
        local["cgroupLimits"]["detail"]
            .as_str()
            .unwrap()
            .contains("pids 64")
    );
    assert_eq!(
        local["refusedSettings"][0]["key"],
        "agents.defaults.sandbox.docker.network"
    );

    let run = talon(d, &["sandbox", "explain"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("landlock: off"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("blocked: agents.defaults.sandbox.docker.network"),
        "{}",
        run.stdout
    );
    // `bridge` is the guarded egress: not refused, explained, and the
    // missing relay helper is named.
    std::fs::write(
        d.join("talon.json"),
        r#"{ agents: { defaults: { workspace: "./ws", sandbox: { mode: "all", backend: "local",
            workspaceAccess: "rw", docker: { network: "bridge" } } } } }"#,
    )
    .unwrap();
    let run = talon(d, &["sandbox", "explain", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let local = &run.json()["local"];
    assert_eq!(local["refusedSettings"], serde_json::json!([]));
    let network = local["network"]["detail"].as_str().unwrap();
    assert!(network.contains("SSRF-guarded egress proxy"), "{network}");
    assert!(
        local["missing"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m.as_str().unwrap().contains("talon-sandbox-exec helper")),
        "{local}"
    );

    let run = talon(d, &["sandbox", "recreate"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains("keeps nothing between"),
        "{}",
        run.stdout
    );
}

#[test]
fn ls_without_a_docker_engine_is_a_note_only_when_no_agent_uses_docker() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("talon.json"),
        r#"{ agents: { defaults: { sandbox: { mode: "all", backend: "local" } } } }"#,
    )
    .unwrap();
    // DOCKER_HOST points at a socket that does not exist.
    let run = talon(d, &["sandbox", "ls"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.starts_with("docker: "), "{run:?}");
    let run = talon(d, &["sandbox", "ls", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json(), serde_json::json!([]));

    // One agent on the default `docker` backend: a missing engine is an
    // error again.
    std::fs::write(
        d.join("talon.json"),
        r#"{ agents: { defaults: { sandbox: { mode: "all", backend: "local" } },
            list: [ { id: "ops", sandbox: { backend: "docker" } } ] } }"#,
    )
    .unwrap();
    let run = talon(d, &["sandbox", "ls"]);
    assert_ne!(run.code, 0, "{run:?}");
}
