//! `McpManager`: every agent's servers, started on first use.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use talon_config::secrets::SecretStore;

use serde::Serialize;
use talon_egress::{HostResolver, SystemResolver};
use talon_exec_env::EnvPolicy;
use talon_tool_catalog::Tool;

use crate::config::{McpConfig, McpServerConfig};
use crate::error::StartError;
use crate::materialize::{Materialized, materialize};
use crate::names::safe_server_names;
use crate::server::Server;
use crate::status::{McpStatus, ServerStatus};
use crate::tool::McpToolHandle;

/// One agent's servers, in declaration order.
struct AgentServers {
    servers: Vec<Arc<Server>>,
    /// The last materialisation and the generation it was made at.
    cache: Mutex<Option<(u64, Arc<Materialized>)>>,
}

/// The result of starting one server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StartReport {
    /// The configured server name.
    pub server: String,
    /// `None` when it is ready (or disabled), else why it is not.
    pub error: Option<StartError>,
}

/// Every agent's MCP servers. Servers of an agent are the global
/// `mcp.servers` followed by the agent's own `mcp.servers` (an agent entry
/// with a global entry's name replaces it in place). Each agent gets its
/// own server processes; they start on first use ([`McpManager::ensure_agent`]
/// or a call) and stop on [`McpManager::shutdown`] or drop (a stdio
/// server's whole process tree is killed). A stdio server's environment
/// is built by its agent's exec environment policy
/// ([`McpManager::with_env_policies`]; the default policy otherwise).
pub struct McpManager {
    global: Vec<(String, McpServerConfig)>,
    agents: BTreeMap<String, Vec<(String, McpServerConfig)>>,
    env_global: Arc<EnvPolicy>,
    env_agents: BTreeMap<String, Arc<EnvPolicy>>,
    secrets: Arc<SecretStore>,
    instances: Mutex<BTreeMap<String, Arc<AgentServers>>>,
    generation: Arc<AtomicU64>,
    resolver: Arc<dyn HostResolver>,
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpManager")
            .field(
                "global",
                &self.global.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field("agents", &self.agents.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Default for McpManager {
    fn default() -> Self {
        McpManager::new(McpConfig::default(), Vec::new())
    }
}

impl McpManager {
    /// A manager over the global section and each agent's section (agent
    /// ids are matched case-insensitively).
    pub fn new(global: McpConfig, agents: Vec<(String, McpConfig)>) -> Self {
        McpManager {
            global: global.servers.0,
            agents: agents
                .into_iter()
                .map(|(id, c)| (id.trim().to_lowercase(), c.servers.0))
                .collect(),
            env_global: Arc::new(EnvPolicy::default()),
            env_agents: BTreeMap::new(),
            secrets: Arc::new(SecretStore::default()),
            instances: Mutex::new(BTreeMap::new()),
            generation: Arc::new(AtomicU64::new(0)),
            resolver: Arc::new(SystemResolver),
        }
    }

    /// Build stdio servers' environments from these exec environment
    /// policies: `global` (`tools.exec.env`) for an agent without its own,
    /// else the agent's (ids matched case-insensitively). Set before any
    /// server starts; servers already started keep their environment.
    #[must_use]
    pub fn with_env_policies(
        mut self,
        global: EnvPolicy,
        agents: impl IntoIterator<Item = (String, EnvPolicy)>,
    ) -> Self {
        self.env_global = Arc::new(global);
        self.env_agents = agents
            .into_iter()
            .map(|(id, p)| (id.trim().to_lowercase(), Arc::new(p)))
            .collect();
        self
    }

    /// Resolve `${secret:NAME}` references in servers' `env` and
    /// `headers` from `secrets` (the state directory's `secrets.json`,
    /// see [`talon_config::secrets`]); without it such a reference fails
    /// the server's start naming the key. Set before any server starts.
    #[must_use]
    pub fn with_secrets(mut self, secrets: SecretStore) -> Self {
        self.secrets = Arc::new(secrets);
        self
    }

    fn env_policy(&self, agent: &str) -> Arc<EnvPolicy> {
        Arc::clone(
            self.env_agents
                .get(&agent.trim().to_lowercase())
                .unwrap_or(&self.env_global),
        )
    }

    /// Builder: resolve HTTP servers' host names with `resolver` instead of
    /// the system resolver (every answer is still vetted by the egress
    /// guard; tests make a name resolve to a private address).
    pub fn with_resolver(mut self, resolver: Arc<dyn HostResolver>) -> Self {
        self.resolver = resolver;
        self
    }

    /// A counter that moves whenever some server's tool list changes (a
    /// start, a re-list after `tools/list_changed`, a restart): a caller
    /// that caches tables keyed by it rebuilds exactly when MCP tools
    /// changed.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Whether any server is configured for `agent`.
    pub fn has_servers(&self, agent: &str) -> bool {
        !self.configured(agent).is_empty()
    }

    fn configured(&self, agent: &str) -> Vec<(String, McpServerConfig)> {
        let mut out = self.global.clone();
        if let Some(own) = self.agents.get(&agent.trim().to_lowercase()) {
            for (name, cfg) in own {
                match out.iter_mut().find(|(n, _)| n == name) {
                    Some(slot) => slot.1 = cfg.clone(),
                    None => out.push((name.clone(), cfg.clone())),
                }
            }
        }
        out
    }

    fn agent(&self, agent: &str) -> Arc<AgentServers> {
        let key = agent.trim().to_lowercase();
        let mut instances = match self.instances.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        Arc::clone(instances.entry(key.clone()).or_insert_with(|| {
            let configured = self.configured(&key);
            let names: Vec<&str> = configured.iter().map(|(n, _)| n.as_str()).collect();
            let safe = safe_server_names(&names, &mut HashSet::new());
            let env_policy = self.env_policy(&key);
            let servers = configured
                .iter()
                .zip(safe)
                .map(|((name, cfg), safe)| {
                    if safe != *name {
                        tracing::warn!(target: "talon::mcp", server = %name, safe = %safe, "mcp server name changed to a safe form");
                    }
                    Arc::new(Server::new(
                        name.clone(),
                        safe,
                        cfg.clone(),
                        Arc::clone(&env_policy),
                        Arc::clone(&self.secrets),
                        Arc::clone(&self.generation),
                        Arc::clone(&self.resolver),
                    ))
                })
                .collect();
            Arc::new(AgentServers {
                servers,
                cache: Mutex::new(None),
            })
        }))
    }

    /// Start every enabled server of `agent` (concurrently) that is not
    /// running, and list its tools. A server that fails is reported (and
    /// shows in [`McpManager::status`]); the others still start.
    pub async fn ensure_agent(&self, agent: &str) -> Vec<StartReport> {
        let servers = self.agent(agent);
        let starts = servers.servers.iter().map(|s| async move {
            let error = if s.config.is_enabled() {
                s.ensure().await.err()
            } else {
                None
            };
            StartReport {
                server: s.name.clone(),
                error,
            }
        });
        futures::future::join_all(starts).await
    }

    /// The agent's MCP tools from the servers' current lists (servers not
    /// started yet contribute nothing). Cheap when nothing changed.
    pub fn materialize(&self, agent: &str) -> Arc<Materialized> {
        let servers = self.agent(agent);
        let generation = self.generation.load(Ordering::SeqCst);
        let mut cache = match servers.cache.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if let Some((g, m)) = cache.as_ref()
            && *g == generation
        {
            return Arc::clone(m);
        }
        let m = Arc::new(materialize(&servers.servers));
        for line in &m.renamed {
            tracing::warn!(target: "talon::mcp", agent = %agent, "{line}");
        }
        *cache = Some((generation, Arc::clone(&m)));
        m
    }

    /// The callable tool `name` of `agent` (names compare
    /// case-insensitively).
    pub fn tool(&self, agent: &str, name: &str) -> Option<Arc<dyn Tool>> {
        let materialized = self.materialize(agent);
        let entry = materialized.get(name)?;
        let servers = self.agent(agent);
        let server = servers
            .servers
            .iter()
            .find(|s| s.safe_name == entry.safe_server)?;
        Some(Arc::new(McpToolHandle {
            spec: entry.spec.clone(),
            server: Arc::clone(server),
            original_name: entry.original_name.clone(),
        }))
    }

    /// Every instantiated server's state.
    pub fn status(&self) -> McpStatus {
        let instances = match self.instances.lock() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        };
        let mut servers = Vec::new();
        for (agent, set) in instances {
            for s in &set.servers {
                let snap = s.shared.get();
                servers.push(ServerStatus {
                    agent: agent.clone(),
                    name: s.name.clone(),
                    safe_name: s.safe_name.clone(),
                    transport: s.transport(),
                    state: snap.state,
                    tool_count: snap.tools.len(),
                    last_error: snap.last_error,
                    restarts: snap.restarts,
                    list_requests: snap.list_requests,
                });
            }
        }
        McpStatus { servers }
    }

    /// Stop every server (stdio servers' process trees are killed). A
    /// later use starts them again.
    pub async fn shutdown(&self) {
        let instances: Vec<Arc<AgentServers>> = match self.instances.lock() {
            Ok(g) => g.values().cloned().collect(),
            Err(p) => p.into_inner().values().cloned().collect(),
        };
        let stops = instances
            .iter()
            .flat_map(|a| a.servers.iter().map(|s| s.stop()));
        futures::future::join_all(stops).await;
    }
}
