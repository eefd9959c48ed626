//! `Runtime`: compiled once per configuration; `assemble` builds one
//! run's `ToolTable`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use talon_config::TalonConfig;
use talon_hooks::approval::ApprovalBroker;
use talon_hooks::exec_approvals::{ExecApprovals, ExecApprovalsStore, ExecPolicy};
use talon_hooks::loop_detection::{LoopDetectionConfig, LoopDetector};
use talon_hooks::{Diagnostics, Gate, HookContext, HookProblem, Hooks};
use talon_schema_dialects::{Dialect, NormalizeOptions, dialect_for, normalize_schema};
use talon_tool_catalog::normalize_tool_name;
use talon_tool_policy::{PolicyConfig, PolicyEngine, ToolEntry, ToolUniverse, Trigger};

use crate::builtin::Builtins;
use crate::confinement::{ConfinementError, check_child_confinement};
use crate::error::Result;
use crate::family::ToolFamily;
use crate::narrowing::Narrowing;
use crate::provided::ProfileRemovals;
use crate::run::RunSpec;
use crate::sandbox_decision::{RunSandbox, SandboxSource};
use crate::status_family::StatusFamily;
use crate::table::{StageTiming, TableTool, ToolDefinition, ToolTable};

/// Builds a [`Runtime`].
pub struct RuntimeBuilder {
    policy: PolicyConfig,
    hooks: Hooks,
    broker: Option<Arc<dyn ApprovalBroker>>,
    diagnostics: Diagnostics,
    families: Vec<Arc<dyn ToolFamily>>,
    loop_global: LoopDetectionConfig,
    loop_agents: BTreeMap<String, LoopDetectionConfig>,
    approval_timeout: Option<Duration>,
    builtins: Option<Builtins>,
    #[cfg(feature = "mcp")]
    mcp: Arc<talon_mcp::McpManager>,
    exec_approvals: Option<ExecApprovalsSetup>,
    sandbox: SandboxSource,
    hook_problems: Vec<HookProblem>,
}

/// `tools.exec.security` / `ask` per agent and the approvals file.
#[derive(Debug, Clone)]
struct ExecApprovalsSetup {
    store: Arc<ExecApprovalsStore>,
    global: ExecPolicy,
    agents: BTreeMap<String, ExecPolicy>,
}

impl ExecApprovalsSetup {
    fn for_agent(&self, agent_id: &str) -> ExecApprovals {
        let policy = self
            .agents
            .get(&agent_id.trim().to_lowercase())
            .copied()
            .unwrap_or(self.global);
        ExecApprovals::new(policy, Arc::clone(&self.store))
    }
}

impl std::fmt::Debug for RuntimeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeBuilder")
            .field("hooks", &self.hooks)
            .field(
                "families",
                &self
                    .families
                    .iter()
                    .map(|f| f.id().to_owned())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl RuntimeBuilder {
    /// A builder over a policy configuration, with the built-in families
    /// of this build, no hooks and loop detection off.
    ///
    /// It has no configuration file, so no sandbox configuration either:
    /// a run is sandboxed only when its `RunContext.sandboxed` forces it
    /// (the policy's `sandbox` layer then applies). Use
    /// [`RuntimeBuilder::from_config`] for the configured sandbox modes.
    pub fn new(policy: PolicyConfig) -> Self {
        RuntimeBuilder {
            policy,
            hooks: Hooks::new(),
            broker: None,
            diagnostics: Diagnostics::default(),
            families: vec![Arc::new(StatusFamily::default())],
            loop_global: LoopDetectionConfig::default(),
            loop_agents: BTreeMap::new(),
            approval_timeout: None,
            builtins: None,
            #[cfg(feature = "mcp")]
            mcp: Arc::new(talon_mcp::McpManager::default()),
            exec_approvals: None,
            sandbox: SandboxSource {
                config: Arc::new(TalonConfig::default()),
                state_dir: talon_config::state_dir(),
                home: talon_config::home_dir(),
            },
            hook_problems: Vec::new(),
        }
    }

    /// A builder from a loaded configuration file: the tool policy,
    /// `tools.loopDetection` (with each agent's overlay), the command hooks
    /// of `tools.hooks` (relative paths against `config_dir`), and the
    /// built-in tools (`read`, `write`, `edit`, `apply_patch` on the
    /// agent's workspace; `exec`, `process`; `web_fetch`, `web_search`;
    /// the read-only `gateway`) configured by `tools.fs`, `tools.exec` and
    /// `tools.web`, with state under [`talon_config::state_dir`]. A
    /// sandboxed run's file and shell tools act in its sandbox, through the
    /// backend its `sandbox.backend` names. This registers the configured
    /// backends itself: `local`, and `docker` and `ssh` when their cargo
    /// features are on (the default); [`RuntimeBuilder::sandbox_backend`]
    /// adds others. The MCP servers of `mcp.servers` (and each agent's)
    /// are set up for `Runtime::mcp_manager` (cargo feature `mcp`; without
    /// it, enabled servers are a [`crate::Error::FeatureDisabled`]). See the
    /// crate docs for what each cargo feature registers.
    ///
    /// `tools.exec.security` / `ask` (and each agent's) are enforced with
    /// the allowlist in `<state dir>/exec-approvals.json`
    /// ([`RuntimeBuilder::exec_approvals`]).
    /// Whether a run is sandboxed is decided from this configuration by
    /// [`crate::resolve_run_sandbox`] when the run is assembled
    /// (`agents.*.sandbox.mode`, `session.mainKey`, `session.scope`); a
    /// caller's `RunContext.sandboxed = true` can only add a sandbox.
    pub fn from_config(config: &TalonConfig, config_dir: &Path) -> Result<Self> {
        Self::from_config_in(config, config_dir, talon_config::state_dir())
    }

    /// [`RuntimeBuilder::from_config`] with state (sandbox workspaces, the
    /// sandbox usage file, the exec approvals file) under `state_dir`
    /// instead of [`talon_config::state_dir`].
    pub fn from_config_in(
        config: &TalonConfig,
        config_dir: &Path,
        state_dir: std::path::PathBuf,
    ) -> Result<Self> {
        let mut builder = RuntimeBuilder::new(config.policy_config());
        let agents = config
            .agent_ids()
            .into_iter()
            .map(|id| {
                let policy = config.exec_policy(&id);
                (id, policy)
            })
            .collect();
        builder = builder.exec_approvals(
            Arc::new(ExecApprovalsStore::in_state_dir(&state_dir)),
            config.exec_policy(""),
            agents,
        );
        builder.sandbox.config = Arc::new(config.clone());
        builder.sandbox.state_dir = state_dir.clone();
        // `${secret:NAME}` references in MCP servers' env and headers, and
        // in `tools.exec.env.set` (which stdio MCP servers and command
        // hooks get as exec children do).
        let secrets = talon_config::secrets::SecretStore::load(&state_dir)?;
        let builtins = Builtins::from_config(config, config_dir, state_dir)?;
        builder.families.extend(builtins.families.iter().cloned());
        builder.builtins = Some(builtins);
        #[cfg(feature = "mcp")]
        {
            let agent_mcp = config
                .agent_mcp_sections()
                .into_iter()
                .map(|(id, mcp)| (id, mcp.clone()))
                .collect();
            // A stdio MCP server's environment follows its agent's exec
            // environment policy, as the agent's exec children do.
            let agent_env = config
                .agent_ids()
                .into_iter()
                .map(|id| {
                    config
                        .exec_env_policy_expanded(Some(&id), &secrets)
                        .map(|p| (id, p))
                })
                .collect::<Result<Vec<_>, _>>()?;
            builder.mcp = Arc::new(
                talon_mcp::McpManager::new(config.mcp.clone().unwrap_or_default(), agent_mcp)
                    .with_env_policies(config.exec_env_policy_expanded(None, &secrets)?, agent_env)
                    .with_secrets(secrets.clone()),
            );
        }
        // Without the `mcp` feature, configured MCP servers are an error:
        // their tools would otherwise be missing without a word.
        #[cfg(not(feature = "mcp"))]
        refuse_mcp_servers(config)?;
        let tools = config.tools.as_ref();
        if let Some(global) = tools.and_then(|t| t.loop_detection.as_ref()) {
            builder.loop_global = global.clone();
        }
        for agent_id in config.agent_ids() {
            let overlay = config
                .agent(&agent_id)
                .and_then(|a| a.tools)
                .and_then(|t| t.loop_detection);
            if let Some(overlay) = overlay {
                builder.loop_agents.insert(agent_id, overlay);
            }
        }
        if let Some(hooks) = tools.and_then(|t| t.hooks.as_ref()) {
            // Hook programs get the global exec environment policy (hooks
            // are not per agent).
            let env_policy = config.exec_env_policy_expanded(None, &secrets)?;
            builder
                .hooks
                .add_command_hooks_with_env(hooks, config_dir, &env_policy);
            // A hook that cannot run stays registered (a `before_tool_call`
            // one blocks every call it matches), and is reported now.
            builder.hook_problems = hooks.check(config_dir, &env_policy);
            for p in &builder.hook_problems {
                log_hook_problem(p);
            }
        }
        Ok(builder)
    }

    /// Register hooks (Rust handlers, trusted policies) on top of the
    /// configured ones.
    pub fn hooks_mut(&mut self) -> &mut Hooks {
        &mut self.hooks
    }

    /// Builder: enforce exec approvals (`tools.exec.security` / `ask` and the
    /// allowlist in `store`) in every agent's gate: `agents` by lower-case
    /// agent id, `global` for the others. [`RuntimeBuilder::from_config`]
    /// sets this from the configuration and
    /// `<state dir>/exec-approvals.json`.
    pub fn exec_approvals(
        mut self,
        store: Arc<ExecApprovalsStore>,
        global: ExecPolicy,
        agents: BTreeMap<String, ExecPolicy>,
    ) -> Self {
        self.exec_approvals = Some(ExecApprovalsSetup {
            store,
            global,
            agents,
        });
        self
    }

    /// Builder: the approval broker (without one, every approval request
    /// denies as unresolved).
    pub fn broker(mut self, broker: Arc<dyn ApprovalBroker>) -> Self {
        self.broker = Some(broker);
        self
    }

    /// Builder: where diagnostic events go.
    pub fn diagnostics(mut self, diagnostics: Diagnostics) -> Self {
        self.diagnostics = diagnostics;
        self
    }

    /// Builder: register a sandbox backend under its id, for the built-in
    /// tools of sandboxed runs ([`RuntimeBuilder::from_config`] has already
    /// registered `local`, `docker` and `ssh` as this build has them; a
    /// backend of the same id replaces that one). Without the configured
    /// backend, a sandboxed run's file and shell tools fail with an error
    /// saying which backend is missing; they never fall back to the host.
    /// Only a builder made by [`RuntimeBuilder::from_config`] has built-in
    /// tools; on others this does nothing.
    pub fn sandbox_backend(self, backend: Arc<dyn talon_sandbox_core::SandboxBackend>) -> Self {
        if let Some(b) = &self.builtins {
            let id = backend.id().to_owned();
            b.backends.register(&id, backend);
        }
        self
    }

    /// Builder: where the built-in sandbox backends report their
    /// [`SandboxEvent`](talon_sandbox_core::SandboxEvent)s (a Docker
    /// container removed after an OOM kill or repeated engine kills, so the
    /// next use gets a fresh one). The gateway writes each into its call
    /// journal. Only the first call counts, and only on a builder made by
    /// [`RuntimeBuilder::from_config`]; a backend an embedder registers
    /// itself takes its own sink (`DockerBackend::with_event_sink`).
    pub fn sandbox_events(self, sink: talon_sandbox_core::SharedEventSink) -> Self {
        if let Some(b) = &self.builtins {
            let _ = b.sandbox_events.set(sink);
        }
        self
    }

    /// Builder: offer the `cron` tool over `service` (the embedder opens the
    /// service on its store and runner). Each run gets a tool scoped to it:
    /// jobs it creates are capped by the run's effective tools, and a
    /// `trigger: cron` run may only read and remove its own job. Cargo
    /// feature `sqlite-state`.
    #[cfg(feature = "sqlite-state")]
    pub fn cron_service(mut self, service: talon_cron::CronService) -> Self {
        self.families
            .push(Arc::new(crate::builtin::CronFamily::new(service)));
        self
    }

    /// Builder: `session_status` also reports `source`'s fields (a host's
    /// own facts about the session: the gateway adds its parent, depth,
    /// label, origin and tasks).
    pub fn status_source(mut self, source: Arc<dyn talon_tools::StatusSource>) -> Self {
        let family: Arc<dyn ToolFamily> = Arc::new(StatusFamily::with_source(source));
        match self
            .families
            .iter_mut()
            .find(|f| f.id() == crate::status_family::STATUS_FAMILY_ID)
        {
            Some(slot) => *slot = family,
            None => self.families.insert(0, family),
        }
        self
    }

    /// Builder: add a tool family (families are asked in registration
    /// order; the first family to offer a name wins).
    pub fn family(mut self, family: Arc<dyn ToolFamily>) -> Self {
        self.families.push(family);
        self
    }

    /// Builder: the MCP servers (replaces the ones
    /// [`RuntimeBuilder::from_config`] configured). Their tools are offered
    /// by the `mcp` family, after every other family. Cargo feature `mcp`.
    #[cfg(feature = "mcp")]
    pub fn mcp_manager(mut self, manager: Arc<talon_mcp::McpManager>) -> Self {
        self.mcp = manager;
        self
    }

    /// Builder: loop detection for every agent (the agents' overlays from
    /// the config still apply on top).
    pub fn loop_detection(mut self, config: LoopDetectionConfig) -> Self {
        self.loop_global = config;
        self
    }

    /// Builder: the timeout of approvals that set none.
    pub fn approval_timeout(mut self, timeout: Duration) -> Self {
        self.approval_timeout = Some(timeout);
        self
    }

    /// Builder: the config file this runtime was configured from. Every
    /// sandbox it creates refuses a mount that is, covers or lies in it
    /// (and in the state dir), so a sandboxed run can never read or
    /// rewrite the policy that confines it. The CLI and the gateway set
    /// it; without it the file Talon's front ends would load by default
    /// (`TALON_CONFIG`, else `talon.json` in the state directory) is protected. Only the first
    /// call counts; a relative path is taken from the current directory.
    pub fn config_file(self, path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let path = std::path::absolute(&path).unwrap_or(path);
        if let Some(b) = &self.builtins {
            let _ = b.config_file.set(path);
        }
        self
    }

    /// Compile the policy and freeze the hooks.
    #[cfg_attr(not(feature = "mcp"), allow(unused_mut))]
    pub fn build(mut self) -> Result<Runtime> {
        #[cfg(feature = "mcp")]
        self.families.push(Arc::new(crate::mcp_family::McpFamily {
            manager: Arc::clone(&self.mcp),
        }));
        let engine = PolicyEngine::new(&self.policy)?;
        if let Some(b) = &self.builtins {
            // The exec tool sees the resolve_exec_env handlers as frozen now.
            let _ = b.env_hooks.set(Arc::new(self.hooks.exec_env().clone()));
        }
        // What policy needs of each core tool (name, owner-only), computed
        // once: building the specs means building 42 JSON schemas.
        let core_entries = talon_tool_catalog::core_tool_specs()
            .iter()
            .map(ToolEntry::from_spec)
            .collect();
        Ok(Runtime {
            engine,
            core_entries,
            hooks: Arc::new(self.hooks),
            broker: self.broker,
            diagnostics: self.diagnostics,
            families: self.families,
            loop_global: self.loop_global,
            loop_agents: self.loop_agents,
            approval_timeout: self.approval_timeout,
            gates: Mutex::new(HashMap::new()),
            profile_removals: ProfileRemovals::default(),
            builtins: self.builtins,
            #[cfg(feature = "mcp")]
            mcp: self.mcp,
            exec_approvals: self.exec_approvals,
            sandbox: self.sandbox,
            hook_problems: self.hook_problems,
        })
    }
}

/// The compiled policy, hooks, families and per-agent gates. Share it
/// (`Arc`) and call [`Runtime::assemble`] for each run.
pub struct Runtime {
    engine: PolicyEngine,
    core_entries: Vec<ToolEntry>,
    hooks: Arc<Hooks>,
    broker: Option<Arc<dyn ApprovalBroker>>,
    diagnostics: Diagnostics,
    families: Vec<Arc<dyn ToolFamily>>,
    loop_global: LoopDetectionConfig,
    loop_agents: BTreeMap<String, LoopDetectionConfig>,
    approval_timeout: Option<Duration>,
    gates: Mutex<HashMap<String, Gate>>,
    /// Embedder tools a profile removed, each warned about once.
    profile_removals: ProfileRemovals,
    builtins: Option<Builtins>,
    #[cfg(feature = "mcp")]
    mcp: Arc<talon_mcp::McpManager>,
    exec_approvals: Option<ExecApprovalsSetup>,
    sandbox: SandboxSource,
    hook_problems: Vec<HookProblem>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("hooks", &self.hooks)
            .field(
                "families",
                &self
                    .families
                    .iter()
                    .map(|f| f.id().to_owned())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Runtime {
    /// The hooks.
    pub fn hooks(&self) -> &Arc<Hooks> {
        &self.hooks
    }

    /// The configured command hooks that cannot run, found by
    /// [`check_hooks`] when [`RuntimeBuilder::from_config`] built this
    /// runtime (and logged then, at error level). They stay registered
    /// and fail as they always do: a `before_tool_call` hook among them
    /// blocks every call it matches.
    pub fn hook_problems(&self) -> &[HookProblem] {
        &self.hook_problems
    }

    /// The policy engine.
    pub fn policy_engine(&self) -> &PolicyEngine {
        &self.engine
    }

    /// The gate of one agent (its loop detector keeps per-session history
    /// across that agent's runs).
    pub fn gate_for(&self, agent_id: &str) -> Gate {
        let mut gates = match self.gates.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        gates
            .entry(agent_id.to_owned())
            .or_insert_with(|| {
                let config = match self.loop_agents.get(agent_id) {
                    Some(overlay) => self.loop_global.overlay(overlay),
                    None => self.loop_global.clone(),
                };
                let mut gate = Gate::new(Arc::clone(&self.hooks))
                    .with_diagnostics(self.diagnostics.clone())
                    .with_loop_detector(Arc::new(LoopDetector::new(config.resolve())));
                if let Some(b) = &self.broker {
                    gate = gate.with_broker(Arc::clone(b));
                }
                if let Some(t) = self.approval_timeout {
                    gate = gate.with_approval_timeout(t);
                }
                if let Some(setup) = &self.exec_approvals {
                    gate = gate.with_exec_approvals(Arc::new(setup.for_agent(agent_id)));
                }
                gate
            })
            .clone()
    }

    /// The MCP servers of every agent. Start an agent's servers with
    /// [`talon_mcp::McpManager::ensure_agent`] before
    /// [`Runtime::assemble`] so the run's table includes their tools;
    /// [`talon_mcp::McpManager::status`] is what `mcp.status` reports.
    /// Cargo feature `mcp`.
    #[cfg(feature = "mcp")]
    pub fn mcp_manager(&self) -> &Arc<talon_mcp::McpManager> {
        &self.mcp
    }

    /// The sandbox backends the built-in tools use (only for a runtime
    /// made with [`RuntimeBuilder::from_config`]).
    pub fn sandbox_backends(&self) -> Option<&talon_sandbox_core::SandboxBackendRegistry> {
        self.builtins.as_ref().map(|b| b.backends.as_ref())
    }

    /// The state dir the built-in tools keep sandbox state under (their
    /// workspaces and the usage file pruning reads; only for a runtime made
    /// with [`RuntimeBuilder::from_config`]).
    pub fn sandbox_state_dir(&self) -> Option<&Path> {
        self.builtins.as_ref().map(|b| b.state_dir.as_path())
    }

    /// The background sessions of the `exec` / `process` tools (only for a
    /// runtime made with [`RuntimeBuilder::from_config`]). Dropping the
    /// runtime kills every live one.
    pub fn process_registry(&self) -> Option<&Arc<talon_tools::ProcessRegistry>> {
        self.builtins.as_ref().map(|b| &b.registry)
    }

    /// The sandbox decision of a run with this context, from this
    /// runtime's configuration ([`crate::resolve_run_sandbox`]): what
    /// [`Runtime::assemble`] uses for the policy's `sandbox` layer and for
    /// where the file and shell tools act.
    pub fn run_sandbox(&self, ctx: &talon_tool_policy::RunContext) -> RunSandbox {
        self.sandbox.decide(ctx)
    }

    /// The sandbox decision for a child run of `parent`, refused when it
    /// would be wider than the parent's (see
    /// [`crate::check_child_confinement`]). Every front end that creates a
    /// child run (the gateway's `sessions.create` with a parent,
    /// `sessions_spawn`) asks this first; [`Runtime::assemble`] checks again
    /// for a [`RunSpec`] whose `parent_context` is set.
    pub fn child_sandbox(
        &self,
        parent: &talon_tool_policy::RunContext,
        child: &talon_tool_policy::RunContext,
    ) -> Result<RunSandbox, ConfinementError> {
        let child = self.run_sandbox(child);
        check_child_confinement(&self.run_sandbox(parent), &child)?;
        Ok(child)
    }

    /// Build the tool table for one run: families → policy → trigger
    /// narrowing → provider schemas → construction of eager tools → the
    /// gate. Tool order is deterministic (family order, then each family's
    /// order).
    pub fn assemble(&self, run: RunSpec) -> ToolTable {
        let mut run = run;
        // The sandbox decision, once per run: the policy's `sandbox` layer
        // reads `context.sandboxed`, the tools' targets read `run.sandbox`,
        // so the table and where its tools act always agree. A caller's
        // `sandboxed: true` only tightens.
        let sandbox = Arc::new(self.run_sandbox(&run.context));
        if let Some(parent) = &run.parent_context
            && let Err(e) = check_child_confinement(&self.run_sandbox(parent), &sandbox)
        {
            // Fail closed: a child that would widen its parent's sandbox
            // gets no tools (front ends refuse it earlier, with the error).
            tracing::error!(code = e.code(), "{e}; the run gets no tools");
            run.context.inherited = Some(Vec::new());
        }
        run.context.sandboxed = sandbox.sandboxed;
        run.sandbox = Some(Arc::clone(&sandbox));
        let mut timings = Vec::with_capacity(6);
        let mut clock = Instant::now();
        let mut lap = |stage: &'static str, timings: &mut Vec<StageTiming>| {
            let now = Instant::now();
            timings.push(StageTiming {
                stage,
                micros: u64::try_from(now.duration_since(clock).as_micros()).unwrap_or(u64::MAX),
            });
            clock = now;
        };

        // 1. Families (schemas only).
        let mut candidates: Vec<(talon_tool_catalog::ToolSpec, Arc<dyn ToolFamily>)> = Vec::new();
        for family in &self.families {
            if let Some(plan) = &run.families
                && !plan.iter().any(|id| id == family.id())
            {
                continue;
            }
            for mut spec in family.specs(&run) {
                spec.name = normalize_tool_name(&spec.name);
                if candidates.iter().any(|(s, _)| s.name == spec.name) {
                    tracing::warn!(
                        target: "talon::runtime",
                        tool = %spec.name,
                        family = family.id(),
                        "tool name conflict: an earlier family already offers this tool; ignoring this one"
                    );
                    continue;
                }
                candidates.push((spec, Arc::clone(family)));
            }
        }
        lap("tool-families", &mut timings);

        // 2. Policy.
        // The audit covers every core tool, offered by a family or not, so
        // a call of a removed core tool can say which layer removed it.
        let mut universe = ToolUniverse::new();
        for core in &self.core_entries {
            match candidates.iter().find(|(s, _)| s.name == core.name) {
                Some((offered, _)) => universe.push(ToolEntry::from_spec(offered)),
                None => universe.push(core.clone()),
            }
        }
        for (spec, _) in &candidates {
            if universe.get(&spec.name).is_none() {
                universe.push(ToolEntry::from_spec(spec));
            }
        }
        let policy = self.engine.evaluate(&run.context, &universe);
        self.profile_removals.report(
            &run.context.agent_id,
            candidates.iter().map(|(s, f)| (s.name.as_str(), f.id())),
            &policy,
        );
        let survivors: Vec<(talon_tool_catalog::ToolSpec, Arc<dyn ToolFamily>)> = candidates
            .into_iter()
            .filter(|(s, _)| policy.allows(&s.name))
            .collect();
        run.effective_tools = survivors.iter().map(|(s, _)| s.name.clone()).collect();
        lap("tool-policy", &mut timings);

        // 3. Trigger narrowing (workspace policy).
        let wrap_for = |name: &str| -> Option<Narrowing> {
            match (run.context.trigger, name) {
                (Trigger::Memory, "write") => {
                    Some(Narrowing::MemoryAppend(run.memory_flush_path.clone()))
                }
                (Trigger::Cron, "cron") => Some(Narrowing::CronSelf(run.cron_job_id.clone())),
                _ => None,
            }
        };
        let wraps: Vec<Option<Narrowing>> =
            survivors.iter().map(|(s, _)| wrap_for(&s.name)).collect();
        lap("workspace-policy", &mut timings);

        // 4. Provider schemas.
        let dialect = match run.context.model_provider.as_deref() {
            Some(p) => {
                let d = dialect_for(p, run.context.model.as_deref());
                if d == Dialect::OpenAi && run.openai_strict {
                    Dialect::OpenAiStrict
                } else {
                    d
                }
            }
            None => Dialect::Permissive,
        };
        let opts = NormalizeOptions::default();
        let mut tools: Vec<TableTool> = survivors
            .into_iter()
            .zip(wraps)
            .map(|((spec, family), narrowing)| {
                let normalized = normalize_schema(&spec.parameters, dialect, &opts);
                TableTool {
                    definition: ToolDefinition {
                        name: spec.name.clone(),
                        description: spec.description.clone(),
                        parameters: normalized.schema,
                    },
                    empty_object_args: normalized.empty_object_args,
                    spec,
                    family,
                    built: OnceLock::new(),
                    narrowing,
                }
            })
            .collect();
        lap("schema-normalize", &mut timings);

        // 5. Construct eager tools (lazy families build on first use).
        for tool in &mut tools {
            if !tool.family.lazy()
                && let Err(e) = tool.instance(&run)
            {
                tracing::warn!(
                    target: "talon::runtime",
                    tool = %tool.spec.name,
                    error = %e,
                    "tool construction failed; calls will report it"
                );
            }
        }
        lap("tool-construct", &mut timings);

        // 6. The gate.
        let gate = self.gate_for(&run.context.agent_id);
        let mut ctx = HookContext::new(
            run.context.agent_id.clone(),
            run.context.session_key.clone(),
        );
        ctx.session_id = run.session_id.clone();
        ctx.run_id = run.run_id.clone();
        ctx.requester = run.requester.clone();
        ctx.message_provider
            .clone_from(&run.context.message_provider);
        ctx.channel_id.clone_from(&run.context.group_id);
        // An exec approval of a host run is pinned to the directory the
        // command would start in (a sandboxed run's files live in its
        // sandbox and are not pinned).
        if !sandbox.sandboxed
            && let Some(builtins) = &self.builtins
        {
            ctx.exec_workdir = Some(Arc::new(crate::builtin::HostWorkdir {
                targets: Arc::clone(&builtins.targets),
                run: run.clone(),
            }));
        }
        lap("hook-wrap", &mut timings);

        let unavailable: Vec<String> = policy
            .tools
            .iter()
            .filter(|t| !run.effective_tools.contains(t))
            .cloned()
            .collect();
        ToolTable {
            run,
            sandbox,
            tools,
            policy,
            gate,
            ctx,
            timings,
            unavailable,
            observers: std::sync::Mutex::new(Vec::new()),
        }
    }
}

/// Every command hook of `config` (`tools.hooks`) that cannot run:
/// [`talon_hooks::HooksConfig::check`] with the hooks resolved exactly as
/// [`RuntimeBuilder::from_config`] registers them (relative paths against
/// `config_dir`, the global `tools.exec.env` policy building the
/// environment and so the `PATH` a program is looked up on). `talon config
/// validate` and the gateway's health report these.
pub fn check_hooks(config: &TalonConfig, config_dir: &Path) -> Result<Vec<HookProblem>> {
    let Some(hooks) = config.tools.as_ref().and_then(|t| t.hooks.as_ref()) else {
        return Ok(Vec::new());
    };
    // `${VAR}` references in `set` (a `PATH` built from the environment)
    // as the runtime expands them; with a `${secret:NAME}` one, which needs
    // the state directory, the values as written (the runtime's own build
    // reports a reference that does not resolve).
    let env_policy = config
        .exec_env_policy_expanded(None, &talon_config::secrets::SecretStore::default())
        .or_else(|_| config.exec_config().env_policy(None))?;
    Ok(hooks.check(config_dir, &env_policy))
}

/// One hook problem at error level: ids, codes, key and message (paths
/// and config keys, never environment values).
fn log_hook_problem(p: &HookProblem) {
    tracing::error!(
        target: "talon::hooks",
        hook = %p.hook_id,
        event = p.event.as_str(),
        code = p.code(),
        key = %p.key_path,
        "command hook `{}` cannot run: {}",
        p.hook_id,
        p.message
    );
}

/// The MCP servers `config` enables (globally and per agent), refused in a
/// build without the `mcp` feature.
#[cfg(not(feature = "mcp"))]
fn refuse_mcp_servers(config: &TalonConfig) -> Result<()> {
    let enabled = |mcp: &talon_config::sections::mcp::McpConfig| -> Vec<String> {
        mcp.servers
            .0
            .iter()
            .filter(|(_, server)| server.enabled != Some(false))
            .map(|(name, _)| name.clone())
            .collect()
    };
    let mut asked: Vec<(String, Vec<String>)> = Vec::new();
    if let Some(mcp) = &config.mcp {
        asked.push(("mcp.servers".to_owned(), enabled(mcp)));
    }
    for (agent, mcp) in config.agent_mcp_sections() {
        asked.push((format!("the mcp.servers of agent `{agent}`"), enabled(mcp)));
    }
    match asked.into_iter().find(|(_, servers)| !servers.is_empty()) {
        Some((key, servers)) => Err(crate::Error::FeatureDisabled {
            feature: "mcp",
            key,
            what: format!("MCP servers ({})", servers.join(", ")),
        }),
        None => Ok(()),
    }
}
