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

/// A copy of `talon` alone in a directory: no `talon-sandbox-exec` beside
/// it, so the local backend must use `talon` itself as its helper.
fn lone_talon(d: &Path) -> std::path::PathBuf {
    let bin = d.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let exe = bin.join("talon");
    std::fs::copy(env!("CARGO_BIN_EXE_talon"), &exe).unwrap();
    exe
}

#[test]
fn talon_is_its_own_sandbox_helper_and_bridge_reaches_out_only_through_the_guard() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("ws")).unwrap();
    let exe = lone_talon(d);
    // A host HTTP server on loopback, reachable only because the
    // allowlist names `localhost` (as for web_fetch).
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for mut conn in listener.incoming().flatten() {
            let mut buf = [0u8; 2048];
            let _ = conn.read(&mut buf);
            let _ = conn.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\nConnection: close\r\n\r\nhost-page",
            );
        }
    });
    let config = |allow: &str| {
        format!(
            r#"{{ agents: {{ defaults: {{ workspace: "./ws", sandbox: {{ mode: "all",
            backend: "local", workspaceAccess: "rw", docker: {{ network: "bridge" }} }} }} }},
            tools: {{ web: {{ fetch: {{ ssrfAllowlist: {{ hosts: [{allow}] }} }} }} }} }}"#
        )
    };
    let run = |args: &[&str]| {
        talon_test_support::cli::Cli::new(&exe)
            .config(d.join("talon.json"))
            .home(d)
            .state_dir(d.join("state"))
            .env_remove("TALON_SANDBOX_EXEC")
            .args(args)
            .run()
    };
    std::fs::write(d.join("talon.json"), config("\"localhost\"")).unwrap();
    let explained = run(&["sandbox", "explain", "--json"]);
    assert_eq!(explained.code, 0, "{explained:?}");
    let landlock = &explained.json()["local"]["landlock"];
    assert_eq!(landlock["applied"], true, "{landlock}");
    assert!(
        landlock["detail"]
            .as_str()
            .unwrap()
            .contains(&exe.display().to_string()),
        "{landlock}"
    );

    // An absolute-form request straight to the proxy (NO_PROXY would
    // send urllib's `localhost` around it, into the sandbox's own
    // loopback).
    let fetch = format!(
        "python3 -c 'import http.client as h; c = h.HTTPConnection(\"127.0.0.1\", 3128, timeout=10); \
         c.request(\"GET\", \"http://localhost:{port}/\"); r = c.getresponse(); \
         print(r.status, r.headers.get(\"X-Talon-Egress\"), r.read().decode())'"
    );
    let params = serde_json::json!({ "command": fetch }).to_string();
    let call = [
        "--session",
        "agent:main:cli",
        "tools",
        "call",
        "exec",
        "--params",
        params.as_str(),
        "--json",
        "--approve",
        "allow-once",
    ];
    let allowed = run(&call);
    assert_eq!(allowed.code, 0, "{allowed:?}");
    assert!(allowed.stdout.contains("200 None host-page"), "{allowed:?}");

    // Without the allowlist entry the same request is refused by the guard.
    std::fs::write(d.join("talon.json"), config("")).unwrap();
    let refused = run(&call);
    assert!(refused.stdout.contains("403 ssrf_blocked"), "{refused:?}");
}
