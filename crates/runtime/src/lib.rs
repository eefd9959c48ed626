//! One run's tool table, and every call through it.
//!
//! New here? The [`guide`] walks an embedder from one crate line to a
//! gated, sandboxed call.
//!
//! [`RuntimeBuilder`] compiles a configuration once (the tool policy, loop
//! detection with per-agent overlays, command hooks from `tools.hooks`, and
//! whatever hooks, trusted policies, approval broker and tool families the
//! embedder registers). [`Runtime::assemble`] then builds a [`ToolTable`]
//! for one run, in stages whose timings it records:
//!
//! 1. `tool-families`: every family in the run's construction plan lists
//!    its tools (schemas only);
//! 2. `tool-policy`: the layered allow/deny pipeline of
//!    `talon-tool-policy`, audited;
//! 3. `workspace-policy`: trigger-based narrowing (`trigger: memory` lets
//!    `write` only append to the memory file; `trigger: cron` lets the
//!    `cron` tool only read or remove the run's own job);
//! 4. `schema-normalize`: schemas shaped for the run's provider;
//! 5. `tool-construct`: eager tools are built (lazy families build on first
//!    call);
//! 6. `hook-wrap`: the agent's gate (loop detection → trusted policies →
//!    plugin hooks → approval) is attached.
//!
//! [`ToolTable::invoke`] coerces the model's arguments, runs the gate,
//! executes the tool, records the outcome for loop detection, emits
//! diagnostics and fires `after_tool_call` observers. A call of a tool the
//! policy removed is answered with a sentence naming the layer, the rule
//! and the config key to change — not a bare "unknown tool".
//!
//! ```
//! use talon_runtime::{ModelToolCall, InvokeOutcome, RunSpec, RuntimeBuilder};
//! use talon_tool_policy::{PolicyConfig, RunContext};
//!
//! let runtime = RuntimeBuilder::new(PolicyConfig::default()).build()?;
//! let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
//! assert!(table.contains("session_status"));
//! let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! let outcome = rt.block_on(table.invoke(ModelToolCall::new("c1", "session_status", serde_json::json!({}))));
//! assert!(matches!(outcome, InvokeOutcome::Completed { .. }));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Sandboxing: one decision per run
//!
//! Whether a run is sandboxed is decided by the runtime, once, when the
//! run is assembled: [`resolve_run_sandbox`] reads the agent's sandbox
//! mode (`off`, `non-main`, `all`), its main session (`session.mainKey`,
//! `session.scope`) and the run's session key. An embedder does not set
//! anything: under `sandbox.mode: "non-main"` a group, channel, DM, cron or
//! sub-agent session is sandboxed. `RunContext.sandboxed = true` forces a
//! sandbox on; `false` (the default) never turns a configured one off. The
//! effective decision feeds the policy's `sandbox` layer and the file and
//! shell tools' target alike, and [`ToolTable::sandbox`] reports it. A
//! sandboxed run's tools act only in its sandbox: when the configured
//! backend is not registered or its engine is down they fail with the
//! reason (naming the config key), never on the host.
//!
//! Where a sandboxed run acts is the backend its agent's `sandbox.backend`
//! names (default `docker`). [`RuntimeBuilder::from_config`] registers the
//! built-in backends itself — `local` always, `docker` and `ssh` when this
//! build has their cargo features (below) — so an embedder that uses
//! `from_config` registers nothing for them; each connects only when a
//! sandboxed run first needs it. [`RuntimeBuilder::sandbox_backend`] adds
//! a backend of the embedder's own (or replaces one of the same id).
//!
//! ```
//! use talon_runtime::{RunSpec, RuntimeBuilder};
//! use talon_tool_policy::RunContext;
//!
//! let config = talon_config::load_str(
//!     r#"{ agents: { defaults: { sandbox: { mode: "non-main" } } } }"#,
//!     "talon.json",
//! )?
//! .config;
//! let runtime = RuntimeBuilder::from_config(&config, std::path::Path::new("."))?.build()?;
//!
//! let mut ctx = RunContext::new("main");
//! ctx.session_key = "agent:main:telegram:group:42".into();
//! let table = runtime.assemble(RunSpec::new(ctx));
//! assert!(table.sandbox().sandboxed);
//! assert_eq!(table.sandbox().config.backend, "docker");
//! // The policy's sandbox layer applied: its default denies are gone.
//! assert!(!table.contains("gateway"));
//!
//! // The agent's main session stays on the host.
//! let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
//! assert!(!table.sandbox().sandboxed);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Cargo features
//!
//! The heavy parts are cargo features, all on by default (the gateway and
//! the CLI use every one). An embedder that brings its own sandbox backend
//! or tools can leave them out with `default-features = false` and pick:
//!
//! | Feature | Brings | What [`RuntimeBuilder::from_config`] then registers |
//! |---|---|---|
//! | `docker` | `talon-sandbox-docker` (bollard) | the `docker` sandbox backend |
//! | `ssh` | `talon-sandbox-ssh` (openssh) | the `ssh` sandbox backend |
//! | `mcp` | `talon-mcp` (rmcp, reqwest) | the servers of `mcp.servers` and each agent's `mcp`, offered by the `mcp` family; `RuntimeBuilder::mcp_manager`, `Runtime::mcp_manager` |
//! | `web` | `talon-tools/web` (reqwest, htmd) | `web_fetch` and `web_search` (the `web` family), as `tools.web` configures them |
//! | `sqlite-state` | `talon-cron` (its job store and the `cron` tool), `talon-hooks/sqlite`, `talon-memory` (rusqlite) | `memory_search` and `memory_get` (`from_config`, unless `agents.defaults.memorySearch.enabled` is false; the index in `<state dir>/memory/`); `RuntimeBuilder::cron_service` (the `cron` tool over the embedder's cron service) and `talon_hooks::approval::SqliteApprovalBroker` exist |
//! | `media` | `talon-media` (runs Debian's poppler and espeak-ng; no new Rust dependency of weight) | `pdf`, `tts` (local espeak-ng), and `image_generate` / `music_generate` / `video_generate`, which refuse with `media.no_provider` naming the config key (the `media` family) |
//! | `channels` | `talon-channels` (reqwest through the egress guard, rusqlite for the send ledger) | `message` over `channels.webhook` / `channels.irc` (the `message` family; sends written ahead in `<state dir>/channels-sends.sqlite`) |
//!
//! Without any of them the runtime still has the `coding` (`read`, `write`,
//! `edit`, `apply_patch`), `shell` (`exec`, `process`), `gateway` and
//! `session_status` tools, the `local` sandbox backend, the policy
//! pipeline and the whole gate; `cargo tree -p talon-runtime
//! --no-default-features -e normal` then lists none of bollard, openssh,
//! rmcp, reqwest or rusqlite (`cargo xtask test` checks this).
//!
//! A part left out is not registered, and a configuration that asks for it
//! is told so, never served by something else:
//!
//! - a sandboxed run whose `sandbox.backend` is `docker` or `ssh` without
//!   that feature fails closed like any run whose backend is missing: every
//!   file and shell call fails with the reason, the config key and the
//!   feature to enable, and nothing runs on the host (unless the embedder
//!   registered its own backend under that id);
//! - a call of `web_fetch` / `web_search` without `web` (or of `cron`,
//!   `memory_search` or `memory_get` without `sqlite-state`, or of a media
//!   tool without `media`) is an unknown tool whose message names the
//!   feature; a `tools.web` block that enables them is logged as a warning
//!   when the runtime is built;
//! - enabled MCP servers in the configuration without `mcp` make
//!   [`RuntimeBuilder::from_config`] fail with [`Error::FeatureDisabled`]
//!   (their tools would otherwise be missing without a word).
//!
//! This crate does not implement tools (`talon-tools`, MCP, plugins do),
//! decide policy (`talon-tool-policy`) or run hooks itself (`talon-hooks`);
//! it puts them together for one run.
#![deny(missing_docs)]

pub use crate::builtin::{
    BROWSER_FAMILY_ID, CODING_FAMILY_ID, CRON_FAMILY_ID, GATEWAY_FAMILY_ID, MEDIA_FAMILY_ID,
    MEMORY_FAMILY_ID, MESSAGE_FAMILY_ID, SHELL_FAMILY_ID, WEB_FAMILY_ID,
};
pub use crate::confinement::{ConfinementError, check_child_confinement};
pub use crate::error::{Error, Result};
pub use crate::family::{ToolFamily, ToolSet};
#[cfg(feature = "mcp")]
pub use crate::mcp_family::MCP_FAMILY_ID;
pub use crate::narrowing::{CRON_SCOPED_READS, CRON_SELF_ACTIONS};
pub use crate::outcome::{CallStatus, WireCodes};
pub use crate::provided::{
    GATEWAY_CORE_TOOLS, gateway_provides_core_tool, missing_core_tools, provided_core_tools,
    provides_core_tool,
};
pub use crate::run::RunSpec;
pub use crate::runtime::{Runtime, RuntimeBuilder, check_hooks};
pub use crate::sandbox_decision::{RunSandbox, resolve_run_sandbox};
pub use crate::status_family::{STATUS_FAMILY_ID, StatusFamily};
pub use crate::table::{InvokeOutcome, ModelToolCall, StageTiming, ToolDefinition, ToolTable};
pub use crate::turn::{
    AgentTurn, TurnError, TurnErrorKind, TurnReply, TurnRunner, TurnTrigger, run_turn,
};
pub use talon_tools::StatusSource;

mod builtin;
mod cargo_features;
mod confinement;
mod error;
mod family;
pub mod guide;
#[cfg(feature = "mcp")]
mod mcp_family;
mod narrowing;
mod outcome;
mod provided;
mod run;
mod runtime;
mod sandbox_decision;
mod status_family;
mod table;
mod target;
mod turn;
