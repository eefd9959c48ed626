//! Talon's configuration file: one JSON5 file, by default
//! `~/.talon/talon.json`, with OpenClaw's key names.
//!
//! # Overview
//!
//! * [`load`] / [`load_str`] turn a file into a [`Loaded`]: the typed
//!   [`TalonConfig`], the [`Notice`]s worth showing (ignored OpenClaw keys,
//!   sections accepted without validation) and the origin name.
//! * When the file is not valid, loading fails with
//!   [`ConfigError::Invalid`], which lists **every** problem found — not
//!   the first — as an [`Issue`] with a key path
//!   (`agents.list[1].tools.sandbox.tools.dney`), a line and a column. Its
//!   `Display` prints one `origin:line:column: key_path: message` per line.
//!   JSON5 syntax errors are [`ConfigError::Syntax`] (line, column, what was
//!   expected).
//! * [`resolve_config_path`] / [`resolve_config_path_from`] pick the file
//!   (`--config` > `TALON_CONFIG` > `~/.talon/talon.json`) and
//!   [`ConfigLocation::load`] treats a missing default file as an empty
//!   configuration; [`state_dir_from`] picks the state directory
//!   (`TALON_STATE_DIR` > `~/.talon`).
//! * [`TalonConfig::policy_config`] hands the tool policy sections to
//!   `talon-tool-policy`; [`TalonConfig::main_session`] reads
//!   `session.mainKey` / `session.scope` (which session is an agent's main
//!   one); [`TalonConfig::resolved_sandbox`] applies
//!   `agents.defaults.sandbox` under an agent's own `sandbox`;
//!   [`TalonConfig::default_agent_id`] and [`TalonConfig::agent_ids`] list
//!   the agents of `agents.list[]` and `agents.entries`.
//! * Every section a consumer reads is typed on [`TalonConfig`]: the
//!   consumers take `&McpConfig`, `&CronConfig`, [`GatewayConfig`],
//!   [`ToolsSection`] (whose [`ToolsSection::policy`] is what
//!   `talon-tool-policy` reads), … and never parse JSON themselves. The
//!   sections whose readers are behaviour crates (MCP client, exec and web
//!   tools, cron, skills) are plain data in [`sections`], re-exported by
//!   those crates, so this crate does not depend on them.
//! * [`config_schema`] is the JSON Schema of the whole file.
//!
//! # How a file is checked
//!
//! 1. A JSON5 parser written for this crate parses the text and records the
//!    line and column of every key and value. A key repeated within one
//!    object is an error (a duplicate silently replacing a `deny` list would
//!    be a security bug), and so are `Infinity` / `NaN`. Files over
//!    [`MAX_CONFIG_BYTES`] and nesting deeper than 128 levels are refused.
//! 2. OpenClaw keys that Talon knows but does not use (a channel's bot
//!    token, `models`, `agents.defaults.model`, `agents.list[].identity`,
//!    …) are removed, each with a notice, so a whole `openclaw.json`
//!    loads. The tool policies of `channels.<provider>` (its groups,
//!    accounts and senders) are kept and enforced. OpenClaw settings that
//!    *restrict* tools but that Talon does not enforce yet (an agent's
//!    `tools.exec.host`, a channel's `direct.<id>.tools`, …) are errors
//!    instead: ignoring them would widen access.
//! 3. The value is walked against the schemars-generated schema of
//!    [`TalonConfig`]: unknown keys (with "did you mean `allow`?"), wrong
//!    types and bad enum values are all collected.
//! 4. Semantic checks: every allow / alsoAllow / deny entry goes through
//!    [`talon_tool_policy::validate_entry`], every `profile` through
//!    [`talon_tool_catalog::Profile`], agent ids must be
//!    `[a-z0-9][a-z0-9_-]*` after lowercasing and unique across
//!    `agents.list` and `agents.entries`.
//! 5. Only then is the value deserialized with serde.
//!
//! # Example
//!
//! ```
//! let text = r#"{
//!   // JSON5: comments, unquoted keys, trailing commas.
//!   tools: { profile: "coding", deny: ["exec"], },
//!   agents: { list: [{ id: "Main", default: true, sandbox: { mode: "all" } }] },
//!   channels: { telegram: { botToken: "123:abc" } },
//! }"#;
//! let loaded = talon_config::load_str(text, "talon.json").unwrap();
//! assert_eq!(loaded.config.default_agent_id(), "main");
//! assert_eq!(
//!     loaded.config.resolved_sandbox("main").mode,
//!     talon_config::SandboxMode::All
//! );
//! assert_eq!(loaded.notices[0].key_path, "channels.telegram");
//!
//! let err = talon_config::load_str("{ tools: { alow: [] } }", "talon.json").unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "talon.json:1:12: tools.alow: unknown key `alow` (did you mean `allow`?)"
//! );
//! ```
//!
//! # What this crate does not do
//!
//! * It does not decide which tools a run gets (`talon-tool-policy` does,
//!   from [`TalonConfig::policy_config`]) and does not check that allow
//!   entries name existing tools (plugin and MCP tools are only known at
//!   run time).
//! * It does not validate the top-level `sandbox` section or the sandbox
//!   `browser` block, which no part of Talon reads yet: they are accepted
//!   as JSON and reported with a notice saying so. OpenClaw sections Talon
//!   does not implement are dropped with a notice, except the restrictions
//!   in them (tool policies per channel, group and sender, the owner list,
//!   plugin switches, gateway TLS/origins/roles), which are load errors
//!   unless `acceptUnenforced` drops them knowingly. Every
//!   section Talon reads (`tools` with `fs` / `exec` / `web` /
//!   `loopDetection` / `hooks`, `skills`, `mcp`, `cron`, `gateway`,
//!   `session`, the agents' `tools`, `sandbox` and `mcp`) is typed on
//!   [`TalonConfig`]: a wrong value in it is a load error at its key, never
//!   a default, and consumers read the typed value instead of parsing JSON.
//!   (Whether sandbox values are *safe* — binds, network, profiles — is
//!   checked by `talon_sandbox_core::validate_sandbox_security`, not at
//!   load time.)
//! * It does not resolve paths (`~` in `workspace`), watch the file for
//!   changes, write the file, or read the process environment except in
//!   [`resolve_config_path`], [`state_dir`] and [`home_dir`].
//! * It does not support OpenClaw's `$include` or `${ENV}` substitution.
#![deny(missing_docs)]

pub use crate::channel_connections::{ChannelConnections, IrcChannelConfig, WebhookChannelConfig};
pub use crate::error::{ConfigError, Issue, Notice, Result};
pub use crate::gateway::{
    CommandsConfig, DEFAULT_GATEWAY_PORT, DEFAULT_HTTP_TOOL_DENY, GatewayAuthConfig, GatewayBind,
    GatewayConfig, GatewayJournalConfig, GatewayLimitsConfig, GatewayTokenConfig,
    GatewayTokenScope, GatewayToolsConfig, JournalDurability, MIN_GATEWAY_TOKEN_CHARS,
    MIN_JOURNAL_MAX_BYTES, OPERATOR_TOKEN_ID, STATE_TOKEN_ID, gateway_listen_addr,
    is_valid_token_id, parse_sha256_hex,
};
pub use crate::json5_read::{Json5Document, Json5Error, parse_json5};
pub use crate::load::{Loaded, MAX_CONFIG_BYTES, config_schema, load, load_str};
pub use crate::location::{
    CONFIG_ENV, ConfigLocation, DEFAULT_CONFIG_FILE, DEFAULT_DIR_NAME, STATE_DIR_ENV, home_dir,
    reexec_with_state_dir, resolve_config_path, resolve_config_path_from, state_dir,
    state_dir_from,
};
pub use crate::model::{
    AgentBody, AgentDefaults, AgentEntry, AgentsConfig, DEFAULT_AGENT_ID, DEFAULT_SANDBOX_BACKEND,
    ResolvedSandbox, TalonConfig,
};
pub use crate::sections::cron::{CronConfig, CronQuotasConfig, CronRetryConfig};
pub use crate::sections::exec::{AgentExecConfig, ExecConfig, ExecConfigError};
pub use crate::sections::fs::FsToolsConfig;
pub use crate::sections::mcp::{McpConfig, McpServerConfig, McpServers};
pub use crate::sections::memory::MemorySearchConfig;
pub use crate::sections::skills::SkillsConfig;
pub use crate::sections::web::WebToolsConfig;
pub use crate::session::{SessionScope, SessionSection};
pub use crate::suggest::did_you_mean;
pub use crate::tools_section::{AgentToolsSection, ToolsSection};
/// The sandbox section's types, defined by `talon-sandbox-core` (one
/// definition).
pub use talon_sandbox_core::{
    DockerConfig, MainSession, ResolvedSandboxConfig, SandboxConfig, SandboxScope, UlimitRange,
    UlimitValue, WorkspaceAccess,
};
/// Sandbox mode, shared with the policy crate (one definition).
pub use talon_tool_policy::SandboxMode;

pub mod channel_connections;
mod channels;
pub mod edit;
mod error;
mod findings;
mod gateway;
mod json5_read;
mod json5_spanned;
mod load;
mod location;
mod model;
mod openclaw_keys;
mod schema_check;
pub mod secrets;
pub mod sections;
mod semantic;
mod session;
mod spans;
mod suggest;
mod tools_section;
