//! Embedding Talon, from one crate line to a gated call.
//!
//! This page walks the path an agent embedding Talon takes; every example
//! on it is compiled and run by `cargo test --doc`.
//!
//! # 1. The dependency
//!
//! ```toml
//! [dependencies]
//! talon-runtime = "0.1"      # the tool table and the gate
//! talon-config = "0.1"       # the talon.json / openclaw.json loader
//! talon-tool-policy = "0.1"  # RunContext: who is calling, from where
//! talon-tool-catalog = "0.1" # the Tool trait, for tools of your own
//! tokio = { version = "1", features = ["rt", "macros"] }
//! ```
//!
//! # 2. A runtime from the configuration
//!
//! [`RuntimeBuilder::from_config`](crate::RuntimeBuilder::from_config)
//! compiles the policy once and registers everything the configuration
//! names: the built-in tool families (files, shell, web, the read-only
//! `gateway` tool, `session_status`), the sandbox backends the agents use
//! (Docker, SSH, the local bubblewrap backend), MCP servers and command
//! hooks. A broken command hook does not stop the build: it is logged,
//! kept on [`Runtime::hook_problems`](crate::Runtime::hook_problems) and
//! blocks the calls it gates.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let state = tempfile::tempdir()?;
//! let config = talon_config::load_str(
//!     r#"{ tools: { profile: "coding", deny: ["process"] } }"#,
//!     "talon.json",
//! )?
//! .config;
//! let runtime = talon_runtime::RuntimeBuilder::from_config(&config, state.path())?.build()?;
//! assert!(runtime.hook_problems().is_empty());
//! # Ok(()) }
//! ```
//!
//! A bad file is an error naming the key, line and column, and changes
//! nothing: `load_str` (or `talon_config::load` for a path) never falls
//! back to defaults.
//!
//! # 3. A table per run
//!
//! Each model run gets its own [`ToolTable`](crate::ToolTable) from
//! [`Runtime::assemble`](crate::Runtime::assemble). The run's context says
//! who is calling and from where; the runtime decides from it and the
//! configuration whether the run is sandboxed (you never set that), and the
//! policy pipeline removes what the layers deny, recording which layer,
//! rule and config key removed each tool.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let state = tempfile::tempdir()?;
//! # let config = talon_config::load_str(r#"{ tools: { profile: "coding", deny: ["process"] } }"#, "talon.json")?.config;
//! # let runtime = talon_runtime::RuntimeBuilder::from_config(&config, state.path())?.build()?;
//! use talon_runtime::RunSpec;
//! use talon_tool_policy::RunContext;
//!
//! let workspace = tempfile::tempdir()?;
//! let mut ctx = RunContext::new("main");
//! ctx.session_key = "agent:main:main".into();
//! let mut run = RunSpec::new(ctx);
//! run.workspace = Some(workspace.path().to_path_buf());
//! let table = runtime.assemble(run);
//!
//! assert!(table.contains("read") && table.contains("exec"));
//! assert!(!table.sandbox().sandboxed); // the agent's main session, sandbox off
//! let why = table.policy().removed_by("process").expect("denied");
//! assert_eq!((why.layer.as_str(), why.config_key.as_str()), ("global", "tools.deny"));
//! # Ok(()) }
//! ```
//!
//! # 4. Calls through the gate
//!
//! Whatever the model asks for goes to
//! [`ToolTable::invoke`](crate::ToolTable::invoke): its arguments are
//! coerced to the schema, the gate runs (loop detection, trusted policies,
//! hooks, approvals), the tool runs on the workspace or in the sandbox, and
//! the outcome comes back typed. What the model reads is
//! [`InvokeOutcome::to_model_result`](crate::InvokeOutcome::to_model_result);
//! what a front end reports is the call's status and its wire codes.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let state = tempfile::tempdir()?;
//! # let config = talon_config::load_str(r#"{ tools: { profile: "coding", deny: ["process"] } }"#, "talon.json")?.config;
//! # let runtime = talon_runtime::RuntimeBuilder::from_config(&config, state.path())?.build()?;
//! # let workspace = tempfile::tempdir()?;
//! # let mut run = talon_runtime::RunSpec::new(talon_tool_policy::RunContext::new("main"));
//! # run.workspace = Some(workspace.path().to_path_buf());
//! # let table = runtime.assemble(run);
//! use serde_json::json;
//! use talon_runtime::{CallStatus, InvokeOutcome, ModelToolCall};
//!
//! let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! rt.block_on(async {
//!     let wrote = table
//!         .invoke(ModelToolCall::new("c1", "write", json!({"path": "notes.md", "content": "hi"})))
//!         .await;
//!     assert_eq!(wrote.status(), CallStatus::Ok);
//!
//!     // A removed tool is refused with the layer and the key to change.
//!     let refused = table
//!         .invoke(ModelToolCall::new("c2", "process", json!({"action": "list"})))
//!         .await;
//!     assert!(matches!(refused, InvokeOutcome::Blocked(_)));
//!     assert!(refused.to_model_result("process").text().contains("tools.deny"));
//!
//!     // A path that leaves the workspace fails inside the file bridge.
//!     let escaped = table
//!         .invoke(ModelToolCall::new("c3", "read", json!({"path": "../../etc/passwd"})))
//!         .await;
//!     assert!(matches!(escaped, InvokeOutcome::Failed(_)));
//! });
//! assert_eq!(std::fs::read_to_string(workspace.path().join("notes.md"))?, "hi");
//! # Ok(()) }
//! ```
//!
//! # 5. Tools of your own, and hooks
//!
//! Implement [`talon_tool_catalog::Tool`] and register the tools as a
//! family ([`ToolSet`](crate::ToolSet) and
//! [`RuntimeBuilder::family`](crate::RuntimeBuilder::family)); they pass the
//! same policy and gate. To the policy they are plugin tools: a profile such
//! as `coding` removes them unless `tools.alsoAllow` names them, and the
//! runtime logs a warning naming the layer the first time that happens.
//! Hooks (`before_tool_call` handlers, trusted policies, an approval broker)
//! are registered on [`RuntimeBuilder::hooks_mut`](crate::RuntimeBuilder::hooks_mut)
//! and [`RuntimeBuilder::broker`](crate::RuntimeBuilder::broker).
//! The example `scripted_agent` (`cargo run -p talon-runtime --example
//! scripted_agent`) does all of this: an in-memory tool family, a hook that
//! blocks one write and asks a human about the others, and the loop
//! detector stopping a model that repeats itself.
//!
//! # 6. Sandboxes
//!
//! Set `agents.defaults.sandbox.mode` (`non-main` sandboxes every session
//! that is not an agent's main one) and the backend (`docker`, `ssh`,
//! `local`). The decision is the runtime's, per run, in
//! [`resolve_run_sandbox`](crate::resolve_run_sandbox); a sandboxed run's
//! file and shell tools act only inside its sandbox and fail, never fall
//! back to the host, when the backend or its engine is missing. The crate
//! documentation's "Sandboxing" section has a worked example.
