//! `talon sandbox explain|ls|rm` with the `ssh` backend: explain shows the
//! SSH target and remote root; ls and rm see only the remote directories
//! that carry Talon's marker, over a real sshd on a loopback port
//! (`cargo xtask sshd-install` installs it).

use std::path::Path;

use super::util::{Run, cli};

fn talon(d: &Path, args: &[&str]) -> Run {
    cli()
        .config(d.join("talon.json"))
        .state_dir(d.join("state"))
        .env(
            "DOCKER_HOST",
            format!("unix://{}/no-docker.sock", d.display()),
        )
        .args(args)
        .run()
}

#[test]
fn explain_ls_and_rm_with_the_ssh_backend() {
    let dir = tempfile::Builder::new()
        .prefix("clissh")
        .tempdir_in("/tmp")
        .unwrap();
    let d = dir.path();
    let sshd = talon_test_support::sshd::Sshd::start().unwrap();
    let (port, user) = (sshd.port, sshd.user.clone());
    let (key, known_hosts) = (sshd.client_key(), sshd.known_hosts());
    std::fs::create_dir_all(d.join("ws")).unwrap();
    let remote = d.join("remote");
    std::fs::write(
        d.join("talon.json"),
        format!(
            r#"{{ agents: {{ defaults: {{ workspace: "./ws", sandbox: {{ mode: "all", backend: "ssh",
                ssh: {{ host: "127.0.0.1", port: {port}, user: "{user}", identityFile: "{key}",
                knownHostsFile: "{known_hosts}", workspaceRoot: "{root}/" }} }} }} }} }}"#,
            key = key.display(),
            known_hosts = known_hosts.display(),
            root = remote.display()
        ),
    )
    .unwrap();

    let run = talon(d, &["sandbox", "explain", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let doc = run.json();
    let name = doc["sandboxName"].as_str().unwrap().to_owned();
    assert_eq!(doc["backend"], "ssh");
    assert_eq!(doc["ssh"]["target"], format!("{user}@127.0.0.1:{port}"));
    assert_eq!(doc["ssh"]["remoteRoot"], remote.display().to_string());
    assert_eq!(doc["ssh"]["hostKeyPolicy"], "strict");
    assert_eq!(
        doc["ssh"]["remoteWorkdir"],
        format!("{}/{name}/workspace", remote.display())
    );
    let run = talon(d, &["sandbox", "explain"]);
    assert!(run.stdout.contains("ssh target:"), "{run:?}");
    assert!(
        run.stdout
            .contains(&format!("remote root: {}", remote.display())),
        "{run:?}"
    );

    // One directory as Talon makes it, one that only looks similar.
    std::fs::create_dir_all(remote.join(&name).join("workspace")).unwrap();
    std::fs::write(
        remote.join(&name).join(".talon-sandbox.json"),
        format!(
            r#"{{"talonSandbox":1,"name":"{name}","scopeKey":"agent:main","configHash":"abc","createdAtMs":1,"lastUsedAtMs":2}}"#
        ),
    )
    .unwrap();
    std::fs::create_dir_all(remote.join("talon-sbx-foreign")).unwrap();
    std::fs::write(remote.join("talon-sbx-foreign/keep.txt"), "keep").unwrap();

    let run = talon(d, &["sandbox", "ls", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let names: Vec<String> = run
        .json()
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["backend"] == "ssh")
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, std::slice::from_ref(&name));
    let run = talon(d, &["sandbox", "ls"]);
    assert!(run.stdout.contains(&name), "{run:?}");

    let run = talon(d, &["sandbox", "rm", "talon-sbx-foreign"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(remote.join("talon-sbx-foreign/keep.txt").exists());
    let run = talon(d, &["sandbox", "rm", &name]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!remote.join(&name).exists());
    assert!(remote.join("talon-sbx-foreign/keep.txt").exists());
}
