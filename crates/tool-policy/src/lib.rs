//! Which tools a run gets: OpenClaw's allow/deny semantics and its layered
//! pipeline, compiled once per configuration, with an audit of every layer.
//!
//! - [`PolicyEngine::new`] compiles a [`PolicyConfig`] (the `tools` section
//!   and each agent's `tools` block); [`PolicyEngine::evaluate`] applies the
//!   pre-filters (message provider, model provider, trigger) and the twelve
//!   layers (`profile`, `provider-profile`, `global`, `global-provider`,
//!   `agent`, `agent-provider`, `group`, `sender`, `sandbox`, `owner-only`,
//!   `subagent`, `inherited`) to a [`ToolUniverse`] for a [`RunContext`].
//! - Matching: deny always wins; an absent or empty allow list allows
//!   everything not denied; `*` is the only wildcard; `group:*` ids expand;
//!   plugin ids, `group:plugins` and `bundle-mcp` admit plugin and MCP
//!   tools; an allow list that matches `write` also admits `apply_patch`.
//! - Every layer can only remove tools. The [`PolicyOutcome`] records, per
//!   layer, which tool it removed, by which rule, and which config key would
//!   change that.
//! - The sandbox tool policy keeps OpenClaw's two surprising merge rules
//!   (see [`resolve_sandbox_tool_policy`]); children and cron jobs are
//!   capped by their parent's or creator's tools ([`cap_cron_job_tools`]).
//!
//! ```
//! use talon_tool_policy::{PolicyConfig, PolicyEngine, RunContext, ToolUniverse};
//! use talon_tool_policy::config::ToolsConfig;
//!
//! let config = PolicyConfig {
//!     tools: ToolsConfig {
//!         profile: Some("coding".into()),
//!         deny: Some(vec!["group:runtime".into()]),
//!         ..ToolsConfig::default()
//!     },
//!     ..PolicyConfig::default()
//! };
//! let engine = PolicyEngine::new(&config)?;
//! let outcome = engine.evaluate(&RunContext::new("main"), &ToolUniverse::core());
//! assert!(outcome.allows("read"));
//! assert!(!outcome.allows("exec"));
//! let why = outcome.removed_by("exec").unwrap();
//! assert_eq!((why.layer.as_str(), why.rule.as_str()), ("global", "deny group:runtime"));
//! # Ok::<(), talon_tool_policy::PolicyError>(())
//! ```
//!
//! This crate does not load config files (`talon-config`), run tools, or
//! decide per call (approvals and hooks are `talon-hooks`); it answers
//! "which tools exist for this run, and why not the others".
#![deny(missing_docs)]

pub use crate::caps::{CappedTools, cap_cron_job_tools};
pub use crate::channels::{SenderKeyError, normalize_sender_key};
pub use crate::config::PolicyConfig;
pub use crate::context::{RunContext, SubagentKind, Trigger};
pub use crate::empty_allow::{empty_allow_keys, is_empty_allow};
pub use crate::engine::{NODE_PROVIDER_TOOLS, OWNER_ONLY_CORE_TOOLS, PolicyEngine};
pub use crate::error::{EMPTY_ALLOW_REASON, PolicyError, Result};
pub use crate::outcome::{CheckOutcome, LAYER_IDS, LayerAudit, PolicyOutcome, Removal, RemovedBy};
pub use crate::pattern::{PatternError, validate_entry};
pub use crate::plugins::PLUGINS_LAYER_ID;
pub use crate::sandbox::{
    DEFAULT_SANDBOX_TOOL_ALLOW, DEFAULT_SANDBOX_TOOL_DENY, ListSource, SandboxMode,
    SandboxToolBlock, SandboxToolPolicy, resolve_sandbox_tool_policy,
    resolve_sandbox_tool_policy_at,
};
pub use crate::subagent::{
    LEAF_SUBAGENT_EXTRA_DENY, LEAF_SUBAGENT_FIXED_DENY, SUBAGENT_DEFAULT_DENY,
};
pub use crate::universe::{ToolEntry, ToolUniverse};

mod caps;
mod channels;
pub mod config;
mod context;
mod empty_allow;
mod engine;
mod error;
mod list;
mod outcome;
mod pattern;
mod plugins;
mod policy;
mod provider_names;
mod sandbox;
mod subagent;
mod universe;
mod warnings;
