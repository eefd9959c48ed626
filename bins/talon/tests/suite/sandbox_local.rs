//! `talon sandbox explain|recreate` with the `local` backend: explain lists
//! the protections this host gives and the settings the backend refuses;
//! recreate has nothing to remove.

use std::path::Path;

use super::util::{Run, cli};

fn talon(d: &Path, args: &[&str]) -> Run {
    cli()
        .config(d.join("talon.json"))
        .state_dir(d.join("state"))
        // No Landlock helper, whatever else the target dir holds (the
        // helper's own tests are in talon-sandbox-local).
        .env("TALON_SANDBOX_EXEC", d.join("no-such-helper"))
        .env(
            "DOCKER_HOST",
            format!("unix://{}/no-docker.sock", d.display()),
        )
        .args(args)
        .run()
}

#[test]
fn explain_shows_the_local_protections_and_refused_settings() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("ws")).unwrap();
    std::fs::write(
        d.join("talon.json"),
        r#"{ agents: { defaults: { workspace: "./ws", sandbox: { mode: "all", backend: "local",
            workspaceAccess: "rw", docker: { pidsLimit: 64, network: "bridge" } } } } }"#,
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
