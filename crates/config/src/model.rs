//! The typed configuration file.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use talon_sandbox_core::{
    MainSession, ResolvedSandboxConfig, SandboxConfig, SandboxInputs, SandboxScope, WorkspaceAccess,
};
use talon_tool_policy::SandboxMode;
use talon_tool_policy::config::PolicyConfig;

use crate::gateway::{CommandsConfig, GatewayConfig};
use crate::sections::cron::CronConfig;
use crate::sections::exec::ExecConfig;
use crate::sections::fs::FsToolsConfig;
use crate::sections::mcp::McpConfig;
use crate::sections::skills::SkillsConfig;
use crate::session::SessionSection;
use crate::tools_section::{AgentToolsSection, ToolsSection};

/// The agent id used when the file configures no agent.
pub const DEFAULT_AGENT_ID: &str = "main";

/// The whole configuration file (`~/.talon/talon.json`).
///
/// Key names are OpenClaw's, so a section of an `openclaw.json` pastes in
/// unchanged. Every section Talon reads is typed here, once: consumers get
/// `&McpConfig`, `&CronConfig`, … from it and never parse JSON again. The
/// top-level `sandbox` section, which no part of Talon reads yet, is
/// accepted as it is and reported by a notice saying it was not validated.
/// OpenClaw's `plugins` switches are enforced on plugin tool families.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(title = "Talon configuration")]
pub struct TalonConfig {
    /// The JSON Schema this file follows (for editors; not interpreted).
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// OpenClaw restrictions Talon does not enforce that the operator drops
    /// knowingly, each the exact key the load error names
    /// (`channels.telegram.direct.42.tools`, `plugins.slots`,
    /// `tools.exec.host`, `agents.list[0].tools.message`).
    /// Without an entry such a key is a load error; an entry that matches
    /// nothing is one too. `policy explain` and the security audit list
    /// what was dropped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accept_unenforced: Option<Vec<String>>,
    /// What `acceptUnenforced` dropped in this file (filled at load).
    #[serde(skip)]
    #[schemars(skip)]
    pub dropped_restrictions: Vec<String>,
    /// Tool policy: profile, allow / alsoAllow / deny, per provider, per
    /// group, per sender, sandbox and sub-agent policies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsSection>,
    /// Agents: shared defaults and the agents themselves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<AgentsConfig>,
    /// Talon's browser settings: `maxDownloadBytes` (the download limit).
    /// OpenClaw's other `browser` keys are dropped with a notice, or
    /// refused when they restrict the browser.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser: Option<crate::sections::browser::BrowserConfig>,
    /// Sandbox backends (accepted; not validated by this version of Talon).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<Value>,
    /// Sessions: `mainKey` and `scope`, which decide the agent's main
    /// session (what sandbox mode `non-main` leaves on the host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionSection>,
    /// Skills: extra directories, watching, limits, per-skill entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills: Option<SkillsConfig>,
    /// MCP servers shared by every agent (`mcp.servers.<name>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<McpConfig>,
    /// Cron: the scheduler switch, concurrency and retry policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cron: Option<CronConfig>,
    /// The gateway daemon: listen address, tokens, limits, journal, HTTP
    /// tool deny list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway: Option<GatewayConfig>,
    /// OpenClaw's chat-command settings: only `ownerAllowFrom` is read
    /// (the owner list, with `gateway.auth.ownerAllowFrom`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commands: Option<CommandsConfig>,
    /// OpenClaw's plugin switches, applied to plugin tool families:
    /// `enabled: false`, `allow` / `deny` by plugin id, and per plugin
    /// `entries.<id>.enabled` and `entries.<id>.tools` (a policy for that
    /// plugin's tools only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugins: Option<crate::sections::plugins::PluginsConfig>,
    /// Where the gateway keeps its stores: embedded SQLite (the default)
    /// or a PostgreSQL database several gateways share (Talon's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<crate::sections::state::StateConfig>,
    /// OpenClaw's per-channel tool policies, enforced in the `group`
    /// policy layer for runs whose message provider (and group, account,
    /// sender) match: `channels.<provider>.tools` / `toolsBySender`,
    /// `groups.<id>.tools` / `toolsBySender` (`*` is the fallback group)
    /// and `accounts.<id>.groups`. A channel's other settings (bot tokens,
    /// `dmPolicy`, …) are dropped with a notice at load, and a tool policy
    /// anywhere else in it is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channels: Option<BTreeMap<String, talon_tool_policy::config::ChannelToolsConfig>>,
    /// Talon's own channels, used by the `message` tool: how
    /// `channels.webhook` and `channels.irc` connect. The loader takes
    /// these connection settings out of `channels` (their policy keys stay
    /// in [`TalonConfig::channels`]) and types them here.
    #[serde(skip)]
    #[schemars(skip)]
    pub channel_connections: Option<crate::channel_connections::ChannelConnections>,
}

/// The `agents` section. Agents may be written as a list (`list[]`, each
/// with an `id`), as a map keyed by id (`entries`), or both; an id may
/// appear only once across the two.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentsConfig {
    /// Settings every agent inherits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defaults: Option<AgentDefaults>,
    /// Agents as a list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<Vec<AgentEntry>>,
    /// Agents keyed by id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<BTreeMap<String, AgentBody>>,
}

/// `agents.defaults`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentDefaults {
    /// The default agent workspace directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// The default sandbox settings; each agent's `sandbox` overrides them
    /// field by field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxConfig>,
    /// Memory search (`memory_search`, `memory_get`): what is indexed,
    /// the embedding provider, search defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_search: Option<crate::sections::memory::MemorySearchConfig>,
    /// Sub-agent limits (`sessions_spawn`): depth, children, concurrency,
    /// run budget, which agents may be spawned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagents: Option<crate::sections::subagents::SubagentDefaults>,
}

/// One element of `agents.list`: an `id` plus the fields of [`AgentBody`].
///
/// (The fields are repeated rather than flattened because serde's
/// `flatten` does not combine with `deny_unknown_fields`.)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentEntry {
    /// The agent id: after lowercasing, `[a-z0-9][a-z0-9_-]*`, at most 64
    /// characters.
    pub id: String,
    /// See [`AgentBody::default`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
    /// See [`AgentBody::name`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// See [`AgentBody::workspace`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// See [`AgentBody::tools`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<AgentToolsSection>,
    /// See [`AgentBody::sandbox`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxConfig>,
    /// See [`AgentBody::mcp`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<McpConfig>,
    /// See [`AgentBody::memory_search`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_search: Option<crate::sections::memory::MemorySearchConfig>,
    /// See [`AgentBody::subagents`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagents: Option<crate::sections::subagents::AgentSubagents>,
}

impl AgentEntry {
    /// Everything but the id.
    pub fn body(&self) -> AgentBody {
        AgentBody {
            default: self.default,
            name: self.name.clone(),
            workspace: self.workspace.clone(),
            tools: self.tools.clone(),
            sandbox: self.sandbox.clone(),
            mcp: self.mcp.clone(),
            memory_search: self.memory_search.clone(),
            subagents: self.subagents.clone(),
        }
    }
}

/// One agent's settings (the value of `agents.entries.<id>`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentBody {
    /// Whether this is the default agent (the first one marked wins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The agent's workspace directory (overrides `agents.defaults.workspace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// The agent's tool policy and tool settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<AgentToolsSection>,
    /// The agent's sandbox settings (override `agents.defaults.sandbox`
    /// field by field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxConfig>,
    /// The agent's own MCP servers (`mcp.servers.<name>`, added after the
    /// global ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<McpConfig>,
    /// The agent's memory search, merged over
    /// `agents.defaults.memorySearch` key by key (`enabled: false` turns
    /// `memory_search`/`memory_get` off for this agent only; `extraPaths`
    /// adds to the defaults').
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_search: Option<crate::sections::memory::MemorySearchConfig>,
    /// Which agents this agent's sessions may spawn (`allowAgents`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagents: Option<crate::sections::subagents::AgentSubagents>,
}

/// An agent's sandbox settings after defaults are applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResolvedSandbox {
    /// When sessions are sandboxed.
    pub mode: SandboxMode,
    /// What one sandbox is shared by.
    pub scope: SandboxScope,
    /// How the sandbox sees the agent workspace.
    pub workspace_access: WorkspaceAccess,
    /// The backend id.
    pub backend: String,
    /// The configured workspace root, if any (`None` means the default,
    /// `<state dir>/sandboxes`, which the sandbox crate resolves).
    pub workspace_root: Option<String>,
}

/// The backend used when none is configured.
pub const DEFAULT_SANDBOX_BACKEND: &str = talon_sandbox_core::DEFAULT_SANDBOX_BACKEND;

/// An agent as found in either `agents.list` or `agents.entries`.
struct AgentRef<'a> {
    id: String,
    /// `agents.list[2]` / `agents.entries.<id>`.
    key: String,
    default: Option<bool>,
    tools: Option<&'a AgentToolsSection>,
    sandbox: Option<&'a SandboxConfig>,
    body: AgentBodyRef<'a>,
}

enum AgentBodyRef<'a> {
    Listed(&'a AgentEntry),
    Keyed(&'a AgentBody),
}

impl TalonConfig {
    /// Every configured agent, `agents.list` first (in order), then
    /// `agents.entries` (sorted by id); ids lowercased.
    fn agent_refs(&self) -> Vec<AgentRef<'_>> {
        let mut out = Vec::new();
        let Some(agents) = &self.agents else {
            return out;
        };
        for (index, entry) in agents.list.iter().flatten().enumerate() {
            out.push(AgentRef {
                id: entry.id.trim().to_lowercase(),
                key: format!("agents.list[{index}]"),
                default: entry.default,
                tools: entry.tools.as_ref(),
                sandbox: entry.sandbox.as_ref(),
                body: AgentBodyRef::Listed(entry),
            });
        }
        for (id, body) in agents.entries.iter().flatten() {
            out.push(AgentRef {
                id: id.trim().to_lowercase(),
                key: format!("agents.entries.{id}"),
                default: body.default,
                tools: body.tools.as_ref(),
                sandbox: body.sandbox.as_ref(),
                body: AgentBodyRef::Keyed(body),
            });
        }
        out
    }

    /// Each agent's own `mcp` section, by agent id, in
    /// [`TalonConfig::agent_ids`] order (agents without one are left out).
    pub fn agent_mcp_sections(&self) -> Vec<(String, &McpConfig)> {
        self.agent_refs()
            .into_iter()
            .filter_map(|a| {
                let mcp = match a.body {
                    AgentBodyRef::Listed(e) => e.mcp.as_ref(),
                    AgentBodyRef::Keyed(b) => b.mcp.as_ref(),
                }?;
                Some((a.id, mcp))
            })
            .collect()
    }

    /// The ids of every configured agent (lowercased): `agents.list` in
    /// order, then `agents.entries` sorted. Empty when none is configured
    /// (the runtime then uses [`DEFAULT_AGENT_ID`]).
    pub fn agent_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = Vec::new();
        for agent in self.agent_refs() {
            if !ids.contains(&agent.id) {
                ids.push(agent.id);
            }
        }
        ids
    }

    /// The agent with `default: true` (the first such one), else the first
    /// configured agent, else [`DEFAULT_AGENT_ID`].
    pub fn default_agent_id(&self) -> String {
        let agents = self.agent_refs();
        agents
            .iter()
            .find(|a| a.default == Some(true))
            .or_else(|| agents.first())
            .map_or_else(|| DEFAULT_AGENT_ID.to_owned(), |a| a.id.clone())
    }

    /// One agent's settings, looked up by id (case-insensitively).
    pub fn agent(&self, agent_id: &str) -> Option<AgentBody> {
        let wanted = agent_id.trim().to_lowercase();
        self.agent_refs()
            .into_iter()
            .find(|a| a.id == wanted)
            .map(|a| match a.body {
                AgentBodyRef::Listed(entry) => entry.body(),
                AgentBodyRef::Keyed(body) => body.clone(),
            })
    }

    /// The agent's workspace directory as configured
    /// (`agents.list[].workspace`, else `agents.defaults.workspace`), with a
    /// leading `~/` expanded against `$HOME`. `None` when neither is set.
    pub fn agent_workspace(&self, agent_id: &str) -> Option<std::path::PathBuf> {
        let raw = self.agent(agent_id).and_then(|a| a.workspace).or_else(|| {
            self.agents
                .as_ref()
                .and_then(|a| a.defaults.as_ref())
                .and_then(|d| d.workspace.clone())
        })?;
        Some(expand_home(raw.trim()))
    }

    /// `agents.defaults.memorySearch`, when set (memory search is on
    /// with its defaults when not).
    pub fn memory_search(&self) -> Option<&crate::sections::memory::MemorySearchConfig> {
        self.agents
            .as_ref()
            .and_then(|a| a.defaults.as_ref())
            .and_then(|d| d.memory_search.as_ref())
    }

    /// The memory search settings of `agent_id`: its own `memorySearch`
    /// merged over `agents.defaults.memorySearch`
    /// ([`MemorySearchConfig::merged`](crate::sections::memory::MemorySearchConfig::merged)).
    pub fn agent_memory_search(
        &self,
        agent_id: &str,
    ) -> crate::sections::memory::MemorySearchConfig {
        let own = self.agent(agent_id).and_then(|a| a.memory_search);
        crate::sections::memory::MemorySearchConfig::merged(self.memory_search(), own.as_ref())
    }

    /// The ids of the agents that have their own `memorySearch` block.
    pub fn agents_with_memory_search(&self) -> Vec<String> {
        self.agent_ids()
            .into_iter()
            .filter(|id| self.agent(id).is_some_and(|a| a.memory_search.is_some()))
            .collect()
    }

    /// The agent's workspace directory, the one rule every surface uses:
    /// the configured one ([`TalonConfig::agent_workspace`]; a relative
    /// path is relative to `config_dir`), else (as OpenClaw)
    /// `<state_dir>/workspace` for the default agent and
    /// `<state_dir>/workspace-<id>` for the others. Always absolute.
    pub fn agent_workspace_dir(
        &self,
        agent_id: &str,
        config_dir: &std::path::Path,
        state_dir: &std::path::Path,
    ) -> std::path::PathBuf {
        let agent = agent_id.trim().to_lowercase();
        let dir = match self.agent_workspace(&agent) {
            Some(dir) => config_dir.join(dir),
            None if agent == self.default_agent_id() => state_dir.join("workspace"),
            None => state_dir.join(format!("workspace-{agent}")),
        };
        // Absolute, so bind mounts and the config hash never depend on the
        // working directory's spelling.
        std::path::absolute(&dir).unwrap_or(dir)
    }

    /// The effective `tools.fs.workspaceOnly` of an agent (the agent's
    /// `tools.fs` over the global one; default `true`).
    pub fn fs_workspace_only(&self, agent_id: &str) -> bool {
        let global = self.tools.as_ref().and_then(|t| t.fs.as_ref());
        let agent: Option<FsToolsConfig> = self
            .agent(agent_id)
            .and_then(|a| a.tools)
            .and_then(|t| t.fs);
        FsToolsConfig::workspace_only(global, agent.as_ref())
    }

    /// The `skills` section (the defaults when it is absent).
    pub fn skills_config(&self) -> SkillsConfig {
        self.skills.clone().unwrap_or_default()
    }

    /// The `cron` section (the defaults when it is absent).
    pub fn cron_config(&self) -> CronConfig {
        self.cron.clone().unwrap_or_default()
    }

    /// The `gateway` section (the defaults when it is absent).
    pub fn gateway_config(&self) -> GatewayConfig {
        self.gateway.clone().unwrap_or_default()
    }

    /// The owner list: `gateway.auth.ownerAllowFrom` then
    /// `commands.ownerAllowFrom`, each entry trimmed, empty ones left out.
    /// A sender a `runner` token relays is the owner when it is listed
    /// (case-insensitively) or the list holds `*`.
    pub fn owner_allow_from(&self) -> Vec<String> {
        let gateway = self
            .gateway
            .as_ref()
            .and_then(|g| g.auth.as_ref())
            .map(|a| a.owner_allow_from.as_slice())
            .unwrap_or_default();
        let commands = self
            .commands
            .as_ref()
            .map(|c| c.owner_allow_from.as_slice())
            .unwrap_or_default();
        gateway
            .iter()
            .chain(commands)
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect()
    }

    /// The keys of owner-list entries that are the wildcard `*` (every
    /// sender relayed by a runner token is the owner), for the audit.
    pub fn owner_wildcards(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(a) = self.gateway.as_ref().and_then(|g| g.auth.as_ref()) {
            for (i, s) in a.owner_allow_from.iter().enumerate() {
                if s.trim() == "*" {
                    out.push(format!("gateway.auth.ownerAllowFrom[{i}]"));
                }
            }
        }
        if let Some(c) = &self.commands {
            for (i, s) in c.owner_allow_from.iter().enumerate() {
                if s.trim() == "*" {
                    out.push(format!("commands.ownerAllowFrom[{i}]"));
                }
            }
        }
        out
    }

    /// `tools.exec` (the defaults when it is absent).
    pub fn exec_config(&self) -> ExecConfig {
        self.tools
            .as_ref()
            .and_then(|t| t.exec.clone())
            .unwrap_or_default()
    }

    /// The exec policy of `agent_id`: `tools.exec.security` / `ask`, with
    /// the agent's `tools.exec` overriding key by key (both default to
    /// `full` / `off`).
    pub fn exec_policy(&self, agent_id: &str) -> talon_hooks::exec_approvals::ExecPolicy {
        let agent = self
            .agent(agent_id)
            .and_then(|a| a.tools)
            .and_then(|t| t.exec);
        self.exec_config().policy(agent.as_ref())
    }

    /// The environment policy of `agent_id`: `tools.exec.env` with the
    /// agent's `tools.exec.env` layered over it. A loaded config always
    /// yields one; an unvalidated one can fail at the first bad key.
    pub fn exec_env_policy(
        &self,
        agent_id: &str,
    ) -> Result<talon_exec_env::EnvPolicy, talon_exec_env::EnvConfigError> {
        let agent = self
            .agent(agent_id)
            .and_then(|a| a.tools)
            .and_then(|t| t.exec);
        self.exec_config().env_policy(agent.as_ref())
    }

    /// The exec environment policy as exec children get it: `agent_id`'s
    /// ([`TalonConfig::exec_env_policy`]), or the global one with `None`,
    /// with the `${secret:NAME}` (from `secrets`, the state directory's
    /// secrets file) and `${VAR}` (this process's environment) references
    /// of `set` expanded. A reference that does not resolve is an error at
    /// `set.NAME` naming the secret or variable, never its value.
    pub fn exec_env_policy_expanded(
        &self,
        agent_id: Option<&str>,
        secrets: &crate::secrets::SecretStore,
    ) -> Result<talon_exec_env::EnvPolicy, talon_exec_env::EnvConfigError> {
        let policy = match agent_id {
            Some(id) => self.exec_env_policy(id)?,
            None => self.exec_config().env_policy(None)?,
        };
        let lookup = secrets.lookup(|name| std::env::var(name).ok());
        policy.expand_set(|value| crate::sections::mcp::expand_env_refs(value, &lookup))
    }

    /// Whether any `tools.exec.env.set` value (global or an agent's) holds
    /// a `${…}` reference, so the secrets file is needed to build the exec
    /// environment.
    pub fn exec_env_has_refs(&self) -> bool {
        let global = self.exec_config().env.set;
        let agents = self.agent_ids().into_iter().filter_map(|id| {
            self.agent(&id)
                .and_then(|a| a.tools)
                .and_then(|t| t.exec)
                .and_then(|e| e.env)
                .map(|env| env.set)
        });
        std::iter::once(global)
            .chain(agents)
            .any(|set| set.values().any(|v| v.contains("${")))
    }

    /// What the policy pipeline reads: the `tools` section and, per agent id
    /// (lowercased, from both `agents.list` and `agents.entries`), that
    /// agent's `tools` block (empty when it has none).
    pub fn policy_config(&self) -> PolicyConfig {
        let mut agents = BTreeMap::new();
        let mut agent_keys = BTreeMap::new();
        for agent in self.agent_refs() {
            agent_keys.entry(agent.id.clone()).or_insert(agent.key);
            agents.entry(agent.id).or_insert_with(|| {
                agent
                    .tools
                    .map(AgentToolsSection::policy)
                    .unwrap_or_default()
            });
        }
        PolicyConfig {
            tools: self
                .tools
                .as_ref()
                .map(ToolsSection::policy)
                .unwrap_or_default(),
            agents,
            agent_keys,
            plugins: self.plugins.clone(),
            channels: self.channels.clone().unwrap_or_default(),
        }
    }

    /// The config key of an agent's entry (`agents.list[2]`,
    /// `agents.entries.ops`), when it is configured.
    pub fn agent_key(&self, agent_id: &str) -> Option<String> {
        let wanted = agent_id.trim().to_lowercase();
        self.agent_refs()
            .into_iter()
            .find(|a| a.id == wanted)
            .map(|a| a.key)
    }

    /// The prune settings of the sandbox serving `scope_key` (see
    /// [`talon_sandbox_core::scope_owner`]): `shared` → the defaults'
    /// `prune` block only; `agent:<id>[:...]` → that agent's resolved
    /// settings (its block over the defaults, ignored when its scope is
    /// `shared`); any other key → the default agent's. An unknown key
    /// (`None`) gets the default agent's too.
    pub fn sandbox_prune_settings(
        &self,
        scope_key: Option<&str>,
    ) -> talon_sandbox_core::PruneSettings {
        use talon_sandbox_core::{PruneSettings, ScopeOwner, scope_owner};
        let defaults = self
            .agents
            .as_ref()
            .and_then(|a| a.defaults.as_ref())
            .and_then(|d| d.sandbox.as_ref())
            .and_then(|s| s.prune.as_ref());
        let agent_id = match scope_key.map(scope_owner) {
            Some(ScopeOwner::Shared) => return PruneSettings::resolve(defaults, None),
            Some(ScopeOwner::Agent(id)) => id,
            Some(ScopeOwner::DefaultAgent) | None => self.default_agent_id(),
        };
        // Only the scope and prune layers matter here; the paths are unused.
        self.resolved_sandbox_config(&agent_id, std::path::Path::new("/"), None)
            .prune
    }

    /// What the session tools may see, as `tools.sessions.visibility` and
    /// `tools.agentToAgent` say (sandboxed sessions always clamped to their
    /// own tree: Talon keeps OpenClaw's default
    /// `agents.defaults.sandbox.sessionToolsVisibility: "spawned"`).
    pub fn session_visibility(&self) -> talon_sessions::VisibilityPolicy {
        let tools = self.tools.as_ref();
        talon_sessions::VisibilityPolicy {
            visibility: tools
                .and_then(|t| t.sessions.as_ref())
                .and_then(|s| s.visibility)
                .unwrap_or_default(),
            sandbox: talon_sessions::SandboxVisibility::Spawned,
            agent_to_agent: tools
                .and_then(|t| t.agent_to_agent.clone())
                .unwrap_or_default(),
        }
    }

    /// The sub-agent limits with defaults (`agents.defaults.subagents`).
    pub fn subagent_limits(&self) -> crate::sections::subagents::SubagentLimits {
        self.subagent_defaults().limits()
    }

    /// `agents.defaults.subagents` (empty when absent).
    pub fn subagent_defaults(&self) -> crate::sections::subagents::SubagentDefaults {
        self.agents
            .as_ref()
            .and_then(|a| a.defaults.as_ref())
            .and_then(|d| d.subagents.clone())
            .unwrap_or_default()
    }

    /// The agents `agent_id`'s sessions may spawn children of besides its
    /// own (lowercased; `*` for any): the agent's `subagents.allowAgents`,
    /// else `agents.defaults.subagents.allowAgents`, else none.
    pub fn subagent_allow_agents(&self, agent_id: &str) -> Vec<String> {
        self.agent(agent_id)
            .and_then(|a| a.subagents.and_then(|s| s.allow_agents))
            .or_else(|| self.subagent_defaults().allow_agents)
            .unwrap_or_default()
            .iter()
            .map(|a| a.trim().to_lowercase())
            .filter(|a| !a.is_empty())
            .collect()
    }

    /// Which session is an agent's main one (`session.mainKey`,
    /// `session.scope`; the defaults when the section is absent).
    pub fn main_session(&self) -> MainSession {
        self.session
            .as_ref()
            .map(SessionSection::main_session)
            .unwrap_or_default()
    }

    /// The full sandbox configuration of `agent_id` (Docker settings, tool
    /// policy, workspace root under `state_dir`, the main session from
    /// [`TalonConfig::main_session`]), resolved by `talon-sandbox-core`
    /// (see [`ResolvedSandboxConfig::resolve`]). `home` expands `~/` in
    /// `workspaceRoot`.
    pub fn resolved_sandbox_config(
        &self,
        agent_id: &str,
        state_dir: &std::path::Path,
        home: Option<&std::path::Path>,
    ) -> ResolvedSandboxConfig {
        let wanted = agent_id.trim().to_lowercase();
        let agent = self.agent_refs().into_iter().find(|a| a.id == wanted);
        let defaults = self
            .agents
            .as_ref()
            .and_then(|a| a.defaults.as_ref())
            .and_then(|d| d.sandbox.as_ref());
        let tools = self
            .tools
            .as_ref()
            .map(ToolsSection::policy)
            .unwrap_or_default();
        let agent_tools = agent
            .as_ref()
            .and_then(|a| a.tools)
            .map(AgentToolsSection::policy);
        ResolvedSandboxConfig::resolve(&SandboxInputs {
            agent_id: &wanted,
            defaults,
            agent: agent.as_ref().and_then(|a| a.sandbox),
            agent_key: agent.as_ref().map(|a| a.key.as_str()),
            state_dir,
            home,
            tools: &tools,
            agent_tools: agent_tools.as_ref(),
        })
        .with_main_session(self.main_session())
    }

    /// The sandbox settings of `agent_id`: the agent's `sandbox` fields
    /// override `agents.defaults.sandbox` field by field, then the built-in
    /// defaults apply (mode `off`, scope `agent`, workspace access `none`,
    /// backend `docker`). The short form of
    /// [`TalonConfig::resolved_sandbox_config`].
    ///
    /// An explicit `scope` (agent's, else the defaults') wins over the
    /// legacy `perSession` (agent's, else the defaults'): `true` means
    /// `session`, `false` means `shared`. An unknown agent id gets the
    /// defaults alone. The backend blocks (`docker`, `ssh`, `browser`,
    /// `prune`) are not resolved here; [`TalonConfig::resolved_sandbox_config`]
    /// resolves `docker` (ignoring an agent's block when the scope is
    /// `shared`, as OpenClaw does).
    pub fn resolved_sandbox(&self, agent_id: &str) -> ResolvedSandbox {
        let wanted = agent_id.trim().to_lowercase();
        let agent = self
            .agent_refs()
            .into_iter()
            .find(|a| a.id == wanted)
            .and_then(|a| a.sandbox);
        let defaults = self
            .agents
            .as_ref()
            .and_then(|a| a.defaults.as_ref())
            .and_then(|d| d.sandbox.as_ref());
        let mode = layered(agent, defaults, |s| s.mode).unwrap_or_default();
        let scope = match (
            layered(agent, defaults, |s| s.scope),
            layered(agent, defaults, |s| s.per_session),
        ) {
            (Some(scope), _) => scope,
            (None, Some(true)) => SandboxScope::Session,
            (None, Some(false)) => SandboxScope::Shared,
            (None, None) => SandboxScope::default(),
        };
        let workspace_access = layered(agent, defaults, |s| s.workspace_access).unwrap_or_default();
        let backend = layered(agent, defaults, |s| {
            s.backend
                .as_ref()
                .map(|b| b.trim().to_owned())
                .filter(|b| !b.is_empty())
        });
        let workspace_root = layered(agent, defaults, |s| s.workspace_root.clone());
        ResolvedSandbox {
            mode,
            scope,
            workspace_access,
            backend: backend.unwrap_or_else(|| DEFAULT_SANDBOX_BACKEND.to_owned()),
            workspace_root,
        }
    }
}

impl TalonConfig {
    /// The `sandbox.browser` settings of `agent_id`: the agent's keys over
    /// `agents.defaults.sandbox.browser`, field by field (the agent's block
    /// is ignored when the scope is `shared`, as OpenClaw does). An error
    /// names the keys Talon cannot honour (load refuses them first).
    pub fn sandbox_browser(
        &self,
        agent_id: &str,
    ) -> Result<
        crate::sections::sandbox_browser::SandboxBrowserSettings,
        crate::sections::sandbox_browser::SandboxBrowserError,
    > {
        let wanted = agent_id.trim().to_lowercase();
        let agent = self
            .agent_refs()
            .into_iter()
            .find(|a| a.id == wanted)
            .and_then(|a| a.sandbox);
        let defaults = self
            .agents
            .as_ref()
            .and_then(|a| a.defaults.as_ref())
            .and_then(|d| d.sandbox.as_ref());
        let agent = agent.filter(|_| self.resolved_sandbox(agent_id).scope != SandboxScope::Shared);
        let merged = crate::sections::sandbox_browser::merge(
            defaults.and_then(|d| d.browser.as_ref()),
            agent.and_then(|a| a.browser.as_ref()),
        );
        crate::sections::sandbox_browser::parse(&merged)
            .map_err(crate::sections::sandbox_browser::SandboxBrowserError)
    }
}

/// The agent's value of a field if set, else the defaults'.
fn layered<T>(
    agent: Option<&SandboxConfig>,
    defaults: Option<&SandboxConfig>,
    field: impl Fn(&SandboxConfig) -> Option<T>,
) -> Option<T> {
    agent.and_then(&field).or_else(|| defaults.and_then(&field))
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;

/// `~/x` → `$HOME/x` (other paths unchanged).
fn expand_home(raw: &str) -> std::path::PathBuf {
    if (raw == "~" || raw.starts_with("~/"))
        && let Some(home) = std::env::var_os("HOME")
    {
        let rest = raw.trim_start_matches('~').trim_start_matches('/');
        return std::path::PathBuf::from(home).join(rest);
    }
    std::path::PathBuf::from(raw)
}
