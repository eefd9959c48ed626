//! `talon sandbox prune` on the real Docker engine (started with the test
//! image by `cargo xtask docker-up`): three session sandboxes of one agent,
//! their last use set in the usage file (fresh, idle 30 h, idle 23 h);
//! `--dry-run` removes nothing and reports the idle one, the real run
//! removes exactly it.

use std::process::Command;

use talon_sandbox_core::{SandboxKey, UsageRecord, UsageStore, now_ms};

use super::util::{Run, cli};

const HOUR_MS: u64 = 3_600_000;

struct Env {
    dir: tempfile::TempDir,
    agent: String,
}

impl Env {
    fn talon(&self, args: &[&str]) -> Run {
        cli()
            .config(self.dir.path().join("talon.json"))
            .state_dir(self.dir.path().join("state"))
            .args(["--agent", &self.agent])
            .args(args)
            .run()
    }

    /// Container name per session suffix, of this agent's containers.
    fn mine(&self) -> Vec<(String, String)> {
        let r = self.talon(&["sandbox", "ls", "--json"]);
        assert_eq!(
            r.code, 0,
            "{r:?} (is the engine up? `cargo xtask docker-up`)"
        );
        let prefix = format!("agent:{}:", self.agent);
        let mut out: Vec<(String, String)> = r
            .json()
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| {
                let session = c["scopeKey"].as_str()?.strip_prefix(&prefix)?.to_owned();
                Some((session, c["name"].as_str()?.to_owned()))
            })
            .collect();
        out.sort();
        out
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        for (_, name) in self.mine_quiet() {
            let _ = Command::new("docker").args(["rm", "-f", &name]).output();
        }
    }
}

impl Env {
    fn mine_quiet(&self) -> Vec<(String, String)> {
        let out = Command::new("docker")
            .args([
                "ps",
                "-a",
                "--format",
                "{{.Names}} {{.Label \"talon.sessionKey\"}}",
            ])
            .output();
        let prefix = format!("agent:{}:", self.agent);
        out.map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter_map(|l| {
                    let (name, key) = l.split_once(' ')?;
                    key.starts_with(&prefix)
                        .then(|| (key.to_owned(), name.to_owned()))
                })
                .collect()
        })
        .unwrap_or_default()
    }
}

#[test]
fn dry_run_removes_nothing_and_the_real_run_removes_exactly_the_idle_sandbox() {
    talon_test_support::docker::require_engine();
    let dir = tempfile::tempdir().unwrap();
    let agent = format!("cli-prune-{}", std::process::id());
    std::fs::create_dir_all(dir.path().join("ws")).unwrap();
    std::fs::write(
        dir.path().join("talon.json"),
        format!(
            r#"{{ agents: {{ defaults: {{ workspace: "./ws", sandbox: {{ mode: "all", scope: "session",
                workspaceAccess: "rw", prune: {{ idleHours: 24 }},
                docker: {{ image: "talon-sandbox-test:busybox" }} }} }}, list: [{{ id: "{agent}" }}] }} }}"#
        ),
    )
    .unwrap();
    let env = Env { dir, agent };
    for session in ["fresh", "idle", "recent"] {
        let key = format!("agent:{}:{session}", env.agent);
        let r = env.talon(&[
            "--session",
            &key,
            "tools",
            "call",
            "exec",
            "--params",
            r#"{"command":"true"}"#,
            "--approve",
            "allow-once",
        ]);
        assert_eq!(r.code, 0, "{r:?}");
    }
    let mine = env.mine();
    let sessions: Vec<&str> = mine.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(sessions, vec!["fresh", "idle", "recent"]);

    // The calls recorded their use in the state dir's usage file.
    let store = UsageStore::new(&env.dir.path().join("state"));
    let recorded = store.read().unwrap();
    for (_, name) in &mine {
        assert!(
            recorded.contains_key(&SandboxKey::new("docker", name)),
            "{name} not recorded: {recorded:?}"
        );
    }
    // Age two of them: idle 30 h (past 24 h) and 23 h (not yet).
    let now = now_ms();
    for (session, idle_hours) in [("fresh", 0), ("idle", 30), ("recent", 23)] {
        let name = &mine.iter().find(|(s, _)| s == session).unwrap().1;
        store
            .set(
                &SandboxKey::new("docker", name),
                UsageRecord {
                    last_used_at_ms: now - idle_hours * HOUR_MS,
                    busy_at_ms: None,
                },
            )
            .unwrap();
    }
    let idle_name = mine[1].1.clone();

    let r = env.talon(&["sandbox", "prune", "--dry-run", "--json"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        r.json(),
        serde_json::json!([{
            "backend": "docker",
            "name": idle_name,
            "scopeKey": format!("agent:{}:idle", env.agent),
            "reason": "idle",
            "idleHours": 30,
            "ageDays": 0,
            "removed": false,
            "skipped": "dry-run",
        }])
    );
    assert_eq!(env.mine().len(), 3, "--dry-run removed something");

    let r = env.talon(&["sandbox", "prune", "--json"]);
    assert_eq!(r.code, 0, "{r:?}");
    let list = r.json();
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    assert_eq!(list[0]["name"], idle_name.as_str());
    assert_eq!(list[0]["removed"], true);
    let left: Vec<String> = env.mine().into_iter().map(|(s, _)| s).collect();
    assert_eq!(left, vec!["fresh", "recent"]);

    // Nothing more to do; the table form says so.
    let r = env.talon(&["sandbox", "prune"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("nothing to prune"), "{r:?}");

    let r = env.talon(&["sandbox", "prune", "--all"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("exclude each other"), "{r:?}");
}
