//! One sandbox decision per run, taken by the runtime from the
//! configuration: an embedder who never sets `RunContext.sandboxed` still
//! gets a sandbox for a non-main session, a caller can force a sandbox but
//! never remove one, and `talon sandbox explain`'s library function
//! (`resolve_run_sandbox`) agrees with what the run does.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, Runtime, RuntimeBuilder};
use talon_sandbox_core::{
    OwnedSandbox, SandboxBackend, SandboxError, SandboxHandle, SandboxRequest,
};
use talon_tool_policy::RunContext;

/// A backend whose engine is down: it records what it was asked for and
/// refuses. A run routed to it can only fail; it cannot reach the host.
#[derive(Debug, Default)]
struct EngineDown {
    asked: Mutex<Vec<(String, String)>>,
}

#[async_trait::async_trait]
impl SandboxBackend for EngineDown {
    fn id(&self) -> &str {
        "docker"
    }

    async fn ensure(
        &self,
        request: &SandboxRequest,
    ) -> Result<Arc<dyn SandboxHandle>, SandboxError> {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push((request.session_key.clone(), request.scope_key.clone()));
        }
        Err(SandboxError::engine_unavailable(
            "the test engine is down".to_owned(),
        ))
    }

    async fn list_owned(&self) -> Result<Vec<OwnedSandbox>, SandboxError> {
        Ok(Vec::new())
    }

    async fn remove(&self, _name: &str) -> Result<(), SandboxError> {
        Ok(())
    }
}

fn runtime_with(text: &str, dir: &Path, backend: Option<Arc<EngineDown>>) -> Runtime {
    let loaded = talon_config::load_str(text, "talon.json").unwrap();
    let mut builder = RuntimeBuilder::from_config(&loaded.config, dir).unwrap();
    if let Some(b) = backend {
        builder = builder.sandbox_backend(b);
    }
    builder.build().unwrap()
}

fn context(agent: &str, session: &str) -> RunContext {
    let mut ctx = RunContext::new(agent);
    ctx.session_key = session.to_owned();
    ctx
}

fn failure(out: &InvokeOutcome) -> String {
    match out {
        InvokeOutcome::Failed(e) => e.to_string(),
        other => panic!("expected a failure, got {other:?}"),
    }
}

fn sandbox_layer_active(table: &talon_runtime::ToolTable) -> bool {
    table
        .policy()
        .layers
        .iter()
        .find(|l| l.id == "sandbox")
        .is_some_and(|l| l.active)
}

async fn session_status(table: &talon_runtime::ToolTable) -> Value {
    match table
        .invoke(ModelToolCall::new("s", "session_status", json!({})))
        .await
    {
        InvokeOutcome::Completed { result, .. } => serde_json::from_str(&result.text()).unwrap(),
        other => panic!("session_status failed: {other:?}"),
    }
}

#[tokio::test]
async fn an_embedder_following_the_docs_gets_a_sandbox_for_a_non_main_session() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let engine = Arc::new(EngineDown::default());
    let rt = runtime_with(
        r#"{ agents: { defaults: { workspace: "./ws", sandbox: { mode: "non-main" } } } }"#,
        dir.path(),
        Some(Arc::clone(&engine)),
    );

    // No `sandboxed` anywhere: the runtime decides.
    let group = "agent:main:telegram:group:42";
    let table = rt.assemble(RunSpec::new(context("main", group)));
    assert!(table.sandbox().sandboxed && !table.sandbox().forced);
    assert!(table.run().context.sandboxed);
    assert!(sandbox_layer_active(&table));
    // The sandbox tool policy removed its default denies (`gateway`).
    assert!(!table.contains("gateway"));
    assert_eq!(session_status(&table).await["sandboxed"], json!(true));

    let out = table
        .invoke(ModelToolCall::new(
            "c1",
            "exec",
            json!({ "command": "touch host-was-used" }),
        ))
        .await;
    let message = failure(&out);
    assert!(message.contains("the test engine is down"), "{message}");
    assert!(!ws.join("host-was-used").exists(), "exec ran on the host");
    let out = table
        .invoke(ModelToolCall::new(
            "c2",
            "write",
            json!({ "path": "host-write.txt", "content": "x" }),
        ))
        .await;
    assert!(failure(&out).contains("the test engine is down"), "{out:?}");
    assert!(!ws.join("host-write.txt").exists(), "write ran on the host");
    let asked = engine.asked.lock().unwrap().clone();
    assert!(
        asked
            .iter()
            .all(|(session, scope)| session == group && scope == "agent:main"),
        "{asked:?}"
    );
    assert!(!asked.is_empty());

    // The agent's main session, in the same runtime, stays on the host.
    let table = rt.assemble(RunSpec::new(context("main", "main")));
    assert!(!table.sandbox().sandboxed);
    assert!(!sandbox_layer_active(&table));
    assert_eq!(session_status(&table).await["sandboxed"], json!(false));
    let out = table
        .invoke(ModelToolCall::new(
            "c3",
            "exec",
            json!({ "command": "touch main-ran-here" }),
        ))
        .await;
    assert!(matches!(out, InvokeOutcome::Completed { .. }), "{out:?}");
    assert!(ws.join("main-ran-here").exists());
}

#[tokio::test]
async fn a_missing_backend_is_an_error_naming_its_key_never_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    for (config, key) in [
        (
            r#"{ agents: { defaults: { workspace: "./ws", sandbox: { mode: "non-main", backend: "nosuch" } } } }"#,
            "agents.defaults.sandbox.backend",
        ),
        (
            r#"{ agents: { defaults: { workspace: "./ws", sandbox: { mode: "non-main" } },
                 list: [{ id: "main", sandbox: { backend: "openshell" } }] } }"#,
            "agents.list[0].sandbox.backend",
        ),
    ] {
        let rt = runtime_with(config, dir.path(), None);
        let table = rt.assemble(RunSpec::new(context(
            "main",
            "agent:main:discord:channel:7",
        )));
        let out = table
            .invoke(ModelToolCall::new(
                "c1",
                "exec",
                json!({ "command": "touch host-was-used" }),
            ))
            .await;
        let message = failure(&out);
        assert!(message.contains(key), "{message}");
        assert!(message.contains("is not registered"), "{message}");
        assert!(
            message.contains("(registered: ")
                && (message.contains("docker") || !cfg!(feature = "docker")),
            "{message}"
        );
        assert!(message.contains("To fix:"), "{message}");
        assert!(
            message.contains("does not fall back to the host"),
            "{message}"
        );
        assert!(!ws.join("host-was-used").exists(), "exec ran on the host");
    }
}

#[tokio::test]
async fn forcing_tightens_a_mode_off_config_and_nothing_loosens_mode_all() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let engine = Arc::new(EngineDown::default());
    let rt = runtime_with(
        r#"{ agents: { defaults: { workspace: "./ws" } } }"#,
        dir.path(),
        Some(Arc::clone(&engine)),
    );
    let mut ctx = context("main", "main");
    ctx.sandboxed = true;
    let table = rt.assemble(RunSpec::new(ctx));
    assert!(table.sandbox().sandboxed && table.sandbox().forced);
    assert!(table.sandbox().reason.starts_with("forced by the caller"));
    assert!(sandbox_layer_active(&table));
    let out = table
        .invoke(ModelToolCall::new(
            "c1",
            "exec",
            json!({ "command": "touch host-was-used" }),
        ))
        .await;
    assert!(failure(&out).contains("the test engine is down"), "{out:?}");
    assert!(!ws.join("host-was-used").exists(), "exec ran on the host");

    // `sandboxed: false` (the default) never removes a configured sandbox,
    // not even for the main session under mode `all`.
    let rt = runtime_with(
        r#"{ agents: { defaults: { workspace: "./ws", sandbox: { mode: "all" } } } }"#,
        dir.path(),
        Some(engine),
    );
    let mut ctx = context("main", "main");
    ctx.sandboxed = false;
    let table = rt.assemble(RunSpec::new(ctx));
    assert!(table.sandbox().sandboxed && !table.sandbox().forced);
    assert!(table.run().context.sandboxed);
    // Re-assembling the run the table reports keeps the sandbox.
    let again = rt.assemble(table.run().clone());
    assert!(again.sandbox().sandboxed);
}

/// Which keys are the main session of agent `main` under the default
/// session settings, `session.mainKey: "work"`, and `session.scope:
/// "global"`.
const KEYS: &[(&str, [bool; 3])] = &[
    ("main", [true, true, true]),
    ("MAIN", [true, true, true]),
    (" main ", [true, true, true]),
    ("", [true, true, true]),
    ("agent:main:main", [true, true, true]),
    ("Agent:Main:Main", [true, true, true]),
    ("agent:main:work", [false, true, false]),
    ("work", [false, true, false]),
    ("global", [false, false, true]),
    ("agent:main:telegram:group:-100123", [false, false, false]),
    ("agent:main:discord:channel:42", [false, false, false]),
    ("agent:main:whatsapp:dm:+15550100", [false, false, false]),
    ("agent:main:cron:job-1", [false, false, false]),
    ("agent:main:subagent:abc123", [false, false, false]),
    ("agent:ops:main", [false, false, false]),
    ("agent:ops:work", [false, false, false]),
];

const SESSIONS: [&str; 3] = [
    "",
    r#"session: { mainKey: "work" },"#,
    r#"session: { scope: "global" },"#,
];

#[test]
fn explain_and_the_run_agree_on_every_session_key() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    for mode in ["off", "non-main", "all"] {
        for (s, session) in SESSIONS.iter().enumerate() {
            let text = format!(
                r#"{{ {session} agents: {{ defaults: {{ workspace: "./ws", sandbox: {{ mode: "{mode}" }} }} }} }}"#
            );
            let config = talon_config::load_str(&text, "talon.json").unwrap().config;
            let rt = runtime_with(&text, dir.path(), None);
            for (key, main) in KEYS {
                let expected = match mode {
                    "off" => false,
                    "all" => true,
                    _ => !main[s],
                };
                let ctx = context("main", key);
                let explained = talon_runtime::resolve_run_sandbox(&config, &ctx, &state, None);
                let table = rt.assemble(RunSpec::new(ctx.clone()));
                let what = format!("mode {mode}, session {session:?}, key {key:?}");
                assert_eq!(explained.sandboxed, expected, "explain: {what}");
                assert_eq!(explained.status.sandboxed, expected, "status: {what}");
                assert_eq!(table.sandbox().sandboxed, expected, "run: {what}");
                assert_eq!(table.run().context.sandboxed, expected, "context: {what}");
                assert_eq!(sandbox_layer_active(&table), expected, "policy: {what}");
                assert_eq!(rt.run_sandbox(&ctx).sandboxed, expected, "runtime: {what}");
                assert!(!explained.forced);
            }
        }
    }
}
