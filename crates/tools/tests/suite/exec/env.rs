//! The call's env, the resolve_exec_env hook and the inherited env.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::json;
use talon_exec_env::{EnvPolicy, ExecEnvConfig};
use talon_hooks::HookContext;
use talon_hooks::exec_env::{ExecEnvEvent, ExecEnvHooks, ExecHost, ResolveExecEnvHandler};
use talon_sandbox_core::{LaunchRequest, LaunchedProcess, ProcessLauncher, SandboxError};
use talon_tool_catalog::{CancellationToken, Tool};
use talon_tools::{ExecConfig, ExecTool, HostLauncher, ProcessRegistry};

use super::common::{Harness, KEY, bounded, call, small_options};

#[tokio::test]
async fn rejected_env_keys_are_named_and_nothing_runs() {
    bounded(async {
        let h = Harness::new();
        let marker = h.dir.path().join("ran");
        let err = h
            .exec(json!({
                "command": format!("touch {}", marker.display()),
                "env": {
                    "PATH": "/tmp/evil",
                    "LD_PRELOAD": "/tmp/evil.so",
                    "node_options": "--require /tmp/x.js",
                    "HTTPS_PROXY": "http://attacker:8080",
                    "OPENCLAW_CLI": "0",
                    "1BAD": "x",
                    "FINE": "ok"
                }
            }))
            .await
            .unwrap_err();
        assert_eq!(err.param(), Some("env"));
        let message = err.to_string();
        for key in [
            "\"PATH\"",
            "\"LD_PRELOAD\"",
            "\"node_options\"",
            "\"HTTPS_PROXY\"",
            "\"OPENCLAW_CLI\"",
            "\"1BAD\"",
        ] {
            assert!(message.contains(key), "{key} not named in: {message}");
        }
        assert!(!message.contains("FINE"), "{message}");
        assert!(!marker.exists(), "a refused call ran");
    })
    .await;
}

#[tokio::test]
async fn allowed_env_keys_reach_the_command_literally() {
    bounded(async {
        let h = Harness::new();
        let r = h
            .exec(json!({"command": "printf '%s|%s' \"$GREETING\" \"$OTHER\"", "env": {"GREETING": "hi $HOME", "OTHER": "two words"}}))
            .await
            .unwrap();
        assert_eq!(r.text(), "hi $HOME|two words");
    })
    .await;
}

struct Recording {
    events: Mutex<Vec<ExecEnvEvent>>,
    env: BTreeMap<String, String>,
}

#[async_trait::async_trait]
impl ResolveExecEnvHandler for Recording {
    async fn resolve_exec_env(
        &self,
        event: &ExecEnvEvent,
        _ctx: &HookContext,
    ) -> Result<BTreeMap<String, String>, talon_hooks::HookError> {
        self.events.lock().unwrap().push(event.clone());
        Ok(self.env.clone())
    }
}

fn recording(pairs: &[(&str, &str)]) -> Arc<Recording> {
    Arc::new(Recording {
        events: Mutex::new(Vec::new()),
        env: pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    })
}

#[tokio::test]
async fn hook_env_is_merged_over_the_call_env_and_filtered() {
    bounded(async {
        let dir = tempfile::tempdir().unwrap();
        let registry = Arc::new(ProcessRegistry::new(small_options()));
        let handler = recording(&[
            ("FROM_HOOK", "hooked"),
            ("SHARED", "hook-wins"),
            ("NODE_OPTIONS", "--require /tmp/evil.js"),
            ("PATH", "/tmp/evil"),
            ("TALON_CLI", "0"),
        ]);
        let mut hooks = ExecEnvHooks::default();
        hooks.register("plugin-a", 0, None, handler.clone());
        let exec = ExecTool::new(
            Arc::new(HostLauncher::new(dir.path()).unwrap()),
            registry,
            ExecConfig::default(),
        )
        .unwrap()
        .with_env_hooks(Arc::new(hooks));
        let params = json!({
            "command": "echo \"hook=$FROM_HOOK shared=$SHARED call=$CALL_ONLY node=${NODE_OPTIONS:-unset} talon=$TALON_CLI\"; echo \"path=$PATH\"",
            "env": {"SHARED": "call", "CALL_ONLY": "mine"}
        });
        let r = exec
            .execute(&call("exec", params), &talon_tool_catalog::ToolContext::new("main", KEY), &CancellationToken::new())
            .await
            .unwrap();
        let text = r.text();
        assert!(
            text.contains("hook=hooked shared=hook-wins call=mine node=unset talon=1"),
            "{text}"
        );
        assert!(!text.contains("/tmp/evil"), "{text}");
        let dropped: Vec<&str> = r.details["pluginEnvDropped"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["key"].as_str().unwrap())
            .collect();
        assert_eq!(dropped, ["NODE_OPTIONS", "PATH", "TALON_CLI"]);
        assert_eq!(r.details["pluginEnvKeys"], json!(["FROM_HOOK", "SHARED"]));
        assert!(!r.details.to_string().contains("hook-wins"), "a plugin value leaked into details");
        let events = handler.events.lock().unwrap().clone();
        assert_eq!(events, [ExecEnvEvent::new(KEY, ExecHost::Gateway)]);
    })
    .await;
}

/// A launcher that is not the host (as a sandbox backend would be) but
/// runs through the host launcher, to see what the tool sends it.
#[derive(Debug)]
struct FakeSandbox {
    inner: HostLauncher,
    requests: Mutex<Vec<LaunchRequest>>,
}

#[async_trait::async_trait]
impl ProcessLauncher for FakeSandbox {
    fn id(&self) -> &str {
        "fake-sandbox"
    }

    async fn launch(&self, request: LaunchRequest) -> Result<LaunchedProcess, SandboxError> {
        self.requests.lock().unwrap().push(request.clone());
        self.inner.launch(request).await
    }
}

#[tokio::test]
async fn a_sandbox_launcher_gets_host_sandbox_and_path_as_a_prepend() {
    bounded(async {
        let dir = tempfile::tempdir().unwrap();
        let launcher = Arc::new(FakeSandbox {
            inner: HostLauncher::new(dir.path())
                .unwrap()
                .with_host_env([("PATH".to_owned(), "/usr/bin:/bin".to_owned())]),
            requests: Mutex::new(Vec::new()),
        });
        let handler = recording(&[]);
        let mut hooks = ExecEnvHooks::default();
        hooks.register("plugin-a", 0, None, handler.clone());
        let exec = ExecTool::new(
            launcher.clone(),
            Arc::new(ProcessRegistry::new(small_options())),
            ExecConfig::default(),
        )
        .unwrap()
        .with_env_hooks(Arc::new(hooks));
        let r = exec
            .execute(
                &call(
                    "exec",
                    json!({"command": "echo $PATH", "env": {"PATH": "/opt/bin"}}),
                ),
                &talon_tool_catalog::ToolContext::new("main", KEY),
                &CancellationToken::new(),
            )
            .await
            .unwrap();
        assert_eq!(r.text().trim(), "/opt/bin:/usr/bin:/bin");
        assert_eq!(r.details["host"], "sandbox");
        assert_eq!(r.details["launcher"], "fake-sandbox");
        assert_eq!(
            handler.events.lock().unwrap().clone(),
            [ExecEnvEvent::new(KEY, ExecHost::Sandbox)]
        );
        let requests = launcher.requests.lock().unwrap().clone();
        assert_eq!(requests.len(), 1);
        assert_eq!(
            requests[0].env.get("OPENCLAW_CLI").map(String::as_str),
            Some("1")
        );
    })
    .await;
}

#[tokio::test]
async fn inherited_host_env_is_filtered() {
    bounded(async {
        let vars = [
            ("KEEP_ME", "yes"),
            ("HOME", "/home/someone"),
            ("LD_PRELOAD", "/tmp/evil.so"),
            ("NODE_OPTIONS", "--require /tmp/evil.js"),
            ("BASH_ENV", "/tmp/evil.sh"),
            ("BASH_FUNC_ls%%", "() { echo pwned; }"),
            ("GIT_ALLOW_PROTOCOL", "ext:https:file"),
            ("AWS_SECRET_ACCESS_KEY", "secret"),
            ("OPENAI_API_KEY", "sk-fake"),
            ("TALON_GATEWAY_TOKEN", "gw-fake"),
        ];
        let all: ExecEnvConfig = serde_json::from_value(json!({"inherit": "all"})).unwrap();
        let policy = Arc::new(EnvPolicy::from_config(&all, None).unwrap());
        let h = Harness::with(small_options(), ExecConfig::default(), |l| {
            l.with_host_env(vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())))
                .with_env_policy(Arc::clone(&policy))
        });
        let r = h.exec(json!({"command": "env"})).await.unwrap();
        let text = r.text();
        assert!(text.contains("KEEP_ME=yes"), "{text}");
        assert!(text.contains("HOME=/home/someone"), "{text}");
        assert!(text.contains("GIT_ALLOW_PROTOCOL=https\n"), "{text}");
        for gone in [
            "LD_PRELOAD",
            "NODE_OPTIONS",
            "BASH_ENV",
            "BASH_FUNC",
            "AWS_SECRET_ACCESS_KEY",
            "OPENAI_API_KEY",
            "TALON_GATEWAY_TOKEN",
        ] {
            assert!(!text.contains(gone), "{gone} reached the command: {text}");
        }
        // The default policy (`inherit: core`) keeps only core names.
        let h = Harness::with(small_options(), ExecConfig::default(), |l| {
            l.with_host_env(vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())))
        });
        let text = h.exec(json!({"command": "env"})).await.unwrap().text();
        assert!(text.contains("HOME=/home/someone"), "{text}");
        assert!(!text.contains("KEEP_ME"), "{text}");
        assert!(!text.contains("GIT_ALLOW_PROTOCOL"), "{text}");
    })
    .await;
}

/// Set by the parent test when it re-runs this binary as a probe.
const PROBE: &str = "TALON_EXEC_TEST_ENV_PROBE";

#[tokio::test]
async fn the_real_process_env_is_filtered() {
    if std::env::var_os(PROBE).is_some() {
        // Child side: the dangerous variables are in this process's own
        // environment; print what a command sees.
        let h = Harness::new();
        let r = h.exec(json!({"command": "env"})).await.unwrap();
        println!("<<<{}>>>", r.text());
        return;
    }
    bounded(async {
        let out = tokio::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                // The test's own path in this binary, wherever it moves.
                &format!(
                    "{}::the_real_process_env_is_filtered",
                    module_path!().split_once("::").map_or("", |(_, rest)| rest)
                ),
                "--nocapture",
                "--test-threads=1",
            ])
            .env(PROBE, "1")
            .env("NODE_OPTIONS", "--require /tmp/evil.js")
            .env("BASH_ENV", "/tmp/evil.sh")
            .env("PYTHONPATH", "/tmp/evil")
            .env("PROBE_KEEP", "kept")
            .env("OPENAI_API_KEY", "sk-fake")
            .env("ANTHROPIC_API_KEY", "fake")
            .env("AWS_SECRET_ACCESS_KEY", "fake")
            .env("GITHUB_TOKEN", "fake")
            .env("DB_PASSWORD", "fake")
            .env("TALON_GATEWAY_TOKEN", "fake")
            .output()
            .await
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let seen = stdout
            .split_once("<<<")
            .and_then(|(_, rest)| rest.split_once(">>>"))
            .map(|(env, _)| env)
            .unwrap_or_else(|| panic!("probe printed nothing: {stdout}"));
        assert!(seen.contains("PATH="), "{seen}");
        for gone in [
            "NODE_OPTIONS",
            "BASH_ENV",
            "PYTHONPATH",
            // `inherit: core` (the default) keeps only core names.
            "PROBE_KEEP",
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "GITHUB_TOKEN",
            "DB_PASSWORD",
            "TALON_GATEWAY_TOKEN",
            "fake",
        ] {
            assert!(!seen.contains(gone), "{gone} reached the command: {seen}");
        }
    })
    .await;
}
