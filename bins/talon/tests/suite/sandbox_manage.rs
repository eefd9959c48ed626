//! `talon sandbox ls|rm|recreate` on the real Docker engine (started with
//! the test image by `cargo xtask docker-up`, which `cargo xtask test` runs).

use std::process::Command;

use super::util::{Run, cli};

struct Env {
    dir: tempfile::TempDir,
    agent: String,
}

impl Env {
    fn new() -> Env {
        talon_test_support::docker::require_engine();
        let dir = tempfile::tempdir().unwrap();
        let agent = format!("cli-sbx-{}", std::process::id());
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        let config = format!(
            r#"{{ agents: {{ defaults: {{ workspace: "./ws", sandbox: {{ mode: "all", workspaceAccess: "rw",
                docker: {{ image: "talon-sandbox-test:busybox" }} }} }}, list: [{{ id: "{agent}" }}] }} }}"#
        );
        std::fs::write(dir.path().join("talon.json"), config).unwrap();
        Env { dir, agent }
    }

    fn talon(&self, args: &[&str]) -> Run {
        cli()
            .config(self.dir.path().join("talon.json"))
            .state_dir(self.dir.path().join("state"))
            .args(["--agent", &self.agent])
            .args(args)
            .run()
    }

    fn mine(&self) -> Vec<serde_json::Value> {
        let r = self.talon(&["sandbox", "ls", "--json"]);
        assert_eq!(
            r.code, 0,
            "{r:?} (is the engine up? `cargo xtask docker-up`)"
        );
        r.json()
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["scopeKey"] == format!("agent:{}", self.agent))
            .cloned()
            .collect()
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = Command::new("docker")
            .args(["rm", "-f", &format!("decoy-{}", self.agent)])
            .output();
        let label = format!("label=talon.sessionKey=agent:{}", self.agent);
        if let Ok(out) = Command::new("docker")
            .args(["ps", "-aq", "--filter", &label])
            .output()
        {
            for id in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                let _ = Command::new("docker").args(["rm", "-f", id]).output();
            }
        }
    }
}

#[test]
fn ls_recreate_and_rm_act_on_owned_containers_only() {
    let env = Env::new();
    let r = env.talon(&[
        "tools",
        "call",
        "exec",
        "--params",
        r#"{"command":"true"}"#,
        "--approve",
        "allow-once",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let mine = env.mine();
    assert_eq!(mine.len(), 1, "{mine:?}");
    let name = mine[0]["name"].as_str().unwrap().to_owned();
    assert_eq!(mine[0]["running"], true);

    // A container that only looks like ours is never removed.
    let decoy = format!("decoy-{}", env.agent);
    let made = Command::new("docker")
        .args([
            "create",
            "--name",
            &decoy,
            "talon-sandbox-test:busybox",
            "true",
        ])
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let r = env.talon(&["sandbox", "rm", &decoy, "--json"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.json()["notOwned"][0], decoy.as_str());
    let still = Command::new("docker")
        .args(["inspect", &decoy])
        .output()
        .unwrap();
    assert!(still.status.success(), "the decoy was removed");

    // recreate removes the scope's container; the next call makes a new one.
    let r = env.talon(&["sandbox", "recreate", "--json"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.json()["removed"], true, "{r:?}");
    assert_eq!(r.json()["name"], name.as_str());
    assert!(env.mine().is_empty());
    let r = env.talon(&[
        "tools",
        "call",
        "exec",
        "--params",
        r#"{"command":"true"}"#,
        "--approve",
        "allow-once",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(env.mine().len(), 1);

    let r = env.talon(&["sandbox", "rm", &name]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("removed"), "{r:?}");
    assert!(env.mine().is_empty());
}
