//! The built-in tool families: `coding` (read, write, edit, apply_patch),
//! `shell` (exec, process; built on first use), `web` (web_fetch,
//! web_search) and `gateway` (read-only config access).

use std::sync::{Arc, OnceLock};

use serde_json::Value;
use talon_hooks::exec_env::ExecEnvHooks;
use talon_tool_catalog::{Tool, ToolError, ToolSpec};
use talon_tools::{
    ApplyPatchTool, EditTool, ExecConfig, ExecTool, GatewayTool, ProcessRegistry, ProcessTool,
    ReadLimits, ReadTool, WriteTool, apply_patch_spec, edit_spec, exec_spec, process_spec,
    read_spec, write_spec,
};

use super::targets::Targets;
use crate::family::ToolFamily;
use crate::run::RunSpec;

/// The id of the file tools' family.
pub const CODING_FAMILY_ID: &str = "coding";
/// The id of the shell tools' family.
pub const SHELL_FAMILY_ID: &str = "shell";
/// The id of the web tools' family.
pub const WEB_FAMILY_ID: &str = "web";
/// The id of the read-only gateway tool's family.
pub const GATEWAY_FAMILY_ID: &str = "gateway";

/// `read`, `write`, `edit`, `apply_patch` on the run's file bridge.
#[derive(Debug)]
pub(crate) struct CodingFamily {
    pub(crate) targets: Arc<Targets>,
    pub(crate) limits: ReadLimits,
    pub(crate) specs: Vec<ToolSpec>,
}

impl CodingFamily {
    pub(crate) fn new(targets: Arc<Targets>, limits: ReadLimits) -> Self {
        let specs = vec![
            read_spec(&limits),
            write_spec(),
            edit_spec(),
            apply_patch_spec(),
        ];
        CodingFamily {
            targets,
            limits,
            specs,
        }
    }
}

impl ToolFamily for CodingFamily {
    fn id(&self) -> &str {
        CODING_FAMILY_ID
    }

    fn specs(&self, _run: &RunSpec) -> Vec<ToolSpec> {
        self.specs.clone()
    }

    fn construct(&self, name: &str, run: &RunSpec) -> Result<Arc<dyn Tool>, ToolError> {
        let bridge = self.targets.for_run(run)?.bridge;
        Ok(match name {
            "read" => Arc::new(ReadTool::new(bridge, self.limits)),
            // The memory-flush run may only append (facts §3); the policy
            // leaves it read and write, and this makes write append-only.
            "write" if run.context.trigger == talon_tool_policy::Trigger::Memory => {
                Arc::new(WriteTool::new(bridge).append_only())
            }
            "write" => Arc::new(WriteTool::new(bridge)),
            "edit" => Arc::new(EditTool::new(bridge)),
            "apply_patch" => Arc::new(ApplyPatchTool::new(bridge)),
            other => {
                return Err(ToolError::execution(format!(
                    "the coding family has no tool `{other}`"
                )));
            }
        })
    }
}

/// `exec` and `process` on the run's launcher, sharing one process
/// registry (background sessions are scoped to their session key).
/// Constructed lazily: a run that never calls them never builds them.
#[derive(Debug)]
pub(crate) struct ShellFamily {
    pub(crate) targets: Arc<Targets>,
    pub(crate) registry: Arc<ProcessRegistry>,
    pub(crate) config: ExecConfig,
    /// The runtime's `resolve_exec_env` handlers, set when it is built.
    pub(crate) env_hooks: Arc<OnceLock<Arc<ExecEnvHooks>>>,
}

impl ToolFamily for ShellFamily {
    fn id(&self) -> &str {
        SHELL_FAMILY_ID
    }

    fn specs(&self, _run: &RunSpec) -> Vec<ToolSpec> {
        vec![exec_spec(), process_spec()]
    }

    fn construct(&self, name: &str, run: &RunSpec) -> Result<Arc<dyn Tool>, ToolError> {
        match name {
            "exec" => {
                let launcher = self.targets.for_run(run)?.launcher;
                let env_policy = self.targets.env_policy(&run.context.agent_id)?;
                let mut tool =
                    ExecTool::new(launcher, Arc::clone(&self.registry), self.config.clone())
                        .map_err(|e| ToolError::execution(format!("tools.exec: {e}")))?
                        .with_env_policy(env_policy)
                        .with_background(run.effective_tools.iter().any(|t| t == "process"));
                if let Some(hooks) = self.env_hooks.get() {
                    tool = tool.with_env_hooks(Arc::clone(hooks));
                }
                Ok(Arc::new(tool))
            }
            "process" => Ok(Arc::new(ProcessTool::new(Arc::clone(&self.registry)))),
            other => Err(ToolError::execution(format!(
                "the shell family has no tool `{other}`"
            ))),
        }
    }

    fn lazy(&self) -> bool {
        true
    }
}

/// `web_fetch` and `web_search`, built once (their caches are shared by
/// every run); a configuration error makes their calls fail with it.
#[cfg(feature = "web")]
pub(crate) struct WebFamily {
    pub(crate) tools: Vec<(ToolSpec, BuiltTool)>,
}

/// A tool built once, or why it could not be.
#[cfg(feature = "web")]
pub(crate) type BuiltTool = Result<Arc<dyn Tool>, ToolError>;

#[cfg(feature = "web")]
impl std::fmt::Debug for WebFamily {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.tools.iter().map(|(s, _)| s.name.as_str()).collect();
        f.debug_struct("WebFamily").field("tools", &names).finish()
    }
}

#[cfg(feature = "web")]
impl ToolFamily for WebFamily {
    fn id(&self) -> &str {
        WEB_FAMILY_ID
    }

    fn specs(&self, _run: &RunSpec) -> Vec<ToolSpec> {
        self.tools.iter().map(|(s, _)| s.clone()).collect()
    }

    fn construct(&self, name: &str, _run: &RunSpec) -> Result<Arc<dyn Tool>, ToolError> {
        self.tools
            .iter()
            .find(|(s, _)| s.name == name)
            .map(|(_, built)| built.clone())
            .unwrap_or_else(|| {
                Err(ToolError::execution(format!(
                    "the web family has no tool `{name}`"
                )))
            })
    }
}

/// The read-only `gateway` tool over a config snapshot.
#[derive(Debug)]
pub(crate) struct GatewayFamily {
    pub(crate) tool: Arc<GatewayTool>,
}

impl GatewayFamily {
    pub(crate) fn new(config: Arc<Value>, schema: Value) -> Self {
        GatewayFamily {
            tool: Arc::new(GatewayTool::new(move || (*config).clone(), schema)),
        }
    }
}

impl ToolFamily for GatewayFamily {
    fn id(&self) -> &str {
        GATEWAY_FAMILY_ID
    }

    fn specs(&self, _run: &RunSpec) -> Vec<ToolSpec> {
        vec![self.tool.spec().clone()]
    }

    fn construct(&self, _name: &str, _run: &RunSpec) -> Result<Arc<dyn Tool>, ToolError> {
        Ok(Arc::clone(&self.tool) as Arc<dyn Tool>)
    }
}

/// The `cron` tool over the embedder's cron service: each run gets a tool
/// scoped to it (its effective tools cap the jobs it creates; a
/// cron-triggered run may only read and remove its own job).
#[cfg(feature = "sqlite-state")]
#[derive(Debug)]
pub(crate) struct CronFamily {
    pub(crate) service: talon_cron::CronService,
    pub(crate) spec: ToolSpec,
}

#[cfg(feature = "sqlite-state")]
impl CronFamily {
    pub(crate) fn new(service: talon_cron::CronService) -> Self {
        let probe = talon_cron::CronTool::new(
            service.clone(),
            talon_cron::CronToolScope::new("", "", Vec::new()),
        );
        CronFamily {
            spec: probe.spec().clone(),
            service,
        }
    }
}

/// The id of the cron tool's family.
pub const CRON_FAMILY_ID: &str = "cron";

#[cfg(feature = "sqlite-state")]
impl ToolFamily for CronFamily {
    fn id(&self) -> &str {
        CRON_FAMILY_ID
    }

    fn specs(&self, _run: &RunSpec) -> Vec<ToolSpec> {
        vec![self.spec.clone()]
    }

    fn construct(&self, _name: &str, run: &RunSpec) -> Result<Arc<dyn Tool>, ToolError> {
        let mut scope = talon_cron::CronToolScope::new(
            run.context.agent_id.clone(),
            run.context.session_key.clone(),
            run.effective_tools.clone(),
        );
        if run.context.trigger == talon_tool_policy::Trigger::Cron {
            scope = scope.cron_triggered(run.cron_job_id.clone());
        }
        Ok(Arc::new(talon_cron::CronTool::new(
            self.service.clone(),
            scope,
        )))
    }
}

/// The id of the memory tools' family.
pub const MEMORY_FAMILY_ID: &str = "memory";

/// `memory_search` and `memory_get` over the run's memory index (the
/// host workspace's, watched; or the sandbox's, read through its bridge
/// and checked for changes before each search). Built on first use.
#[cfg(feature = "sqlite-state")]
#[derive(Debug)]
pub(crate) struct MemoryFamily {
    pub(crate) targets: Arc<Targets>,
    /// The service of agents without their own `memorySearch` (`None`:
    /// memory search is off for them), or why the configuration cannot
    /// make it (calls fail with that error).
    pub(crate) default: Option<MemoryServiceResult>,
    /// Per agent id with its own `memorySearch` (merged over the
    /// defaults): its service, `None` when it turns memory search off.
    pub(crate) agents: std::collections::HashMap<String, Option<MemoryServiceResult>>,
}

#[cfg(feature = "sqlite-state")]
pub(crate) type MemoryServiceResult = Result<Arc<talon_memory::MemoryService>, ToolError>;

#[cfg(feature = "sqlite-state")]
impl MemoryFamily {
    /// The run's agent's service; `None` when its memory search is off.
    fn service(&self, run: &RunSpec) -> Option<&MemoryServiceResult> {
        let agent = run.context.agent_id.trim().to_lowercase();
        match self.agents.get(&agent) {
            Some(own) => own.as_ref(),
            None => self.default.as_ref(),
        }
    }
}

#[cfg(feature = "sqlite-state")]
impl ToolFamily for MemoryFamily {
    fn id(&self) -> &str {
        MEMORY_FAMILY_ID
    }

    fn specs(&self, run: &RunSpec) -> Vec<ToolSpec> {
        if self.service(run).is_none() {
            return Vec::new();
        }
        vec![
            talon_memory::memory_search_spec(),
            talon_memory::memory_get_spec(),
        ]
    }

    fn construct(&self, name: &str, run: &RunSpec) -> Result<Arc<dyn Tool>, ToolError> {
        let service = self.service(run).cloned().ok_or_else(|| {
            ToolError::execution(format!(
                "memory search is off for agent `{}` (its memorySearch.enabled, or agents.defaults.memorySearch.enabled)",
                run.context.agent_id
            ))
        })??;
        let bridge = self.targets.for_run(run)?.bridge;
        match name {
            "memory_search" => {
                let scope = if self.targets.sandboxed(run) {
                    talon_memory::MemoryScope::Sandbox(run.context.session_key.clone())
                } else {
                    talon_memory::MemoryScope::Host(self.targets.workspace(run))
                };
                let index = service
                    .index(&run.context.agent_id, &scope)
                    .map_err(|e| e.into_tool_error("query"))?;
                Ok(Arc::new(talon_memory::MemorySearchTool::new(
                    index,
                    bridge,
                    service.search_defaults(),
                )))
            }
            "memory_get" => Ok(Arc::new(talon_memory::MemoryGetTool::new(
                bridge,
                service.extra_paths(),
                service.settings().max_file_bytes,
            ))),
            other => Err(ToolError::execution(format!(
                "the memory family has no tool `{other}`"
            ))),
        }
    }

    fn lazy(&self) -> bool {
        true
    }
}

/// The guarded client `image` loads URLs with: web_fetch's rules.
#[cfg(feature = "media")]
pub(crate) fn image_fetch_client(
    allowlist: Option<&talon_egress::SsrfAllowlistConfig>,
) -> Result<talon_egress::GuardedClient, ToolError> {
    let policy = match allowlist {
        Some(allow) => {
            talon_egress::SsrfPolicy::from_config_at(allow, "tools.web.fetch.ssrfAllowlist")
                .map_err(|e| ToolError::execution(e.to_string()))?
        }
        None => talon_egress::SsrfPolicy::strict(),
    };
    talon_egress::EgressGuard::new(Arc::new(policy), Arc::new(talon_egress::SystemResolver))
        .with_opt_in("add its host to `tools.web.fetch.ssrfAllowlist.hosts` or its network to `.cidrs` (image uses web_fetch's rules)")
        .http_client(talon_egress::HttpOptions {
            redirects: talon_egress::Redirects::SameOrigin { max: 5 },
            ..talon_egress::HttpOptions::default()
        })
        .map_err(|e| ToolError::execution(format!("cannot build the image fetcher: {e}")))
}

/// `image`'s OpenAI-compatible vision provider from `tools.imageProvider`:
/// the key resolved from `${secret:NAME}` / `${VAR}`, the endpoint reached
/// only through an egress guard with the block's own `ssrfAllowlist`.
#[cfg(feature = "media")]
pub(crate) fn vision_provider(
    cfg: &talon_config::sections::media::VisionProviderConfig,
    secrets: &talon_config::secrets::SecretStore,
) -> Result<Arc<dyn talon_media::VisionProvider>, ToolError> {
    const KEY: &str = "tools.imageProvider";
    let bad = |what: String| ToolError::execution(format!("{KEY}: {what}"));
    let api_key = match &cfg.api_key {
        Some(raw) => talon_config::sections::mcp::expand_env_refs(
            raw,
            secrets.lookup(|n| std::env::var(n).ok()),
        )
        .map_err(|e| bad(format!("apiKey: {e} (write `${{secret:NAME}}` with NAME in <state dir>/secrets.json, or `${{ENV_VAR}}`)")))?,
        None => String::new(),
    };
    let policy = match &cfg.ssrf_allowlist {
        Some(allow) => {
            talon_egress::SsrfPolicy::from_config_at(allow, "tools.imageProvider.ssrfAllowlist")
                .map_err(|e| ToolError::execution(e.to_string()))?
        }
        None => talon_egress::SsrfPolicy::strict(),
    };
    let client = talon_egress::EgressGuard::new(
        Arc::new(policy),
        Arc::new(talon_egress::SystemResolver),
    )
    .with_opt_in(
        "add its host or network to `tools.imageProvider.ssrfAllowlist` (a self-hosted model)",
    )
    .http_client(talon_egress::HttpOptions {
        redirects: talon_egress::Redirects::None,
        ..talon_egress::HttpOptions::default()
    })
    .map_err(|e| bad(format!("cannot build the HTTP client: {e}")))?;
    talon_media::OpenAiVision::from_base_url(
        client,
        &cfg.base_url,
        "tools.imageProvider.baseUrl",
        api_key,
        cfg.model.clone(),
    )
    .map(|v| Arc::new(v) as Arc<dyn talon_media::VisionProvider>)
    .map_err(|e| e.into_tool_error("image"))
}

/// The id of the media tools' family.
pub const MEDIA_FAMILY_ID: &str = "media";

/// `pdf`, `tts` (local espeak-ng) and the generation tools (no provider
/// yet: they refuse with `media.no_provider`). Engines get the agent's
/// exec-env policy applied to this process's environment; files go
/// through the run's bridge. Built on first use.
#[cfg(feature = "media")]
#[derive(Debug)]
pub(crate) struct MediaFamily {
    pub(crate) targets: Arc<Targets>,
    /// How `image` fetches URLs: web_fetch's guard
    /// (`tools.web.fetch.ssrfAllowlist`), or the config error its URL
    /// loads fail with.
    pub(crate) image_fetch: Result<talon_egress::GuardedClient, ToolError>,
    /// `image`'s vision provider (`tools.imageProvider`), or why it cannot
    /// be built; `None` when not configured.
    pub(crate) vision: Option<Result<Arc<dyn talon_media::VisionProvider>, ToolError>>,
}

#[cfg(feature = "media")]
impl MediaFamily {
    fn runner(&self, run: &RunSpec) -> Result<talon_media::EngineRunner, ToolError> {
        let policy = self.targets.env_policy(&run.context.agent_id)?;
        let env = policy.host_env(talon_exec_env::process_env());
        Ok(talon_media::EngineRunner::new(
            env,
            talon_media::EngineLimits::default(),
        ))
    }
}

#[cfg(feature = "media")]
impl ToolFamily for MediaFamily {
    fn id(&self) -> &str {
        MEDIA_FAMILY_ID
    }

    fn specs(&self, _run: &RunSpec) -> Vec<ToolSpec> {
        let mut specs = vec![
            talon_media::pdf_spec(),
            talon_media::tts_spec(),
            talon_media::image_spec(),
        ];
        specs.extend(
            talon_media::GenerationKind::ALL
                .iter()
                .map(|k| talon_media::GenerateTool::new(*k, None).spec().clone()),
        );
        specs
    }

    fn construct(&self, name: &str, run: &RunSpec) -> Result<Arc<dyn Tool>, ToolError> {
        if let Some(kind) = talon_media::GenerationKind::ALL
            .into_iter()
            .find(|k| k.tool() == name)
        {
            return Ok(Arc::new(talon_media::GenerateTool::new(kind, None)));
        }
        let bridge = self.targets.for_run(run)?.bridge;
        match name {
            "pdf" => Ok(Arc::new(talon_media::PdfTool::new(
                bridge,
                self.runner(run)?,
                talon_media::PdfLimits::default(),
            ))),
            // Without `tools.imageProvider` a valid call is
            // `media.no_provider` naming that key; a provider block that
            // cannot be built fails every call with its error.
            "image" => Ok(Arc::new(talon_media::ImageTool::new(
                bridge,
                Some(self.image_fetch.clone()?),
                match &self.vision {
                    Some(v) => Some(v.clone()?),
                    None => None,
                },
                talon_media::ImageLimits::default(),
            ))),
            "tts" => Ok(Arc::new(talon_media::TtsTool::new(
                bridge,
                Arc::new(talon_media::EspeakProvider::new(self.runner(run)?)),
            ))),
            other => Err(ToolError::execution(format!(
                "the media family has no tool `{other}`"
            ))),
        }
    }

    fn lazy(&self) -> bool {
        true
    }
}

/// The id of the `message` tool's family.
pub const MESSAGE_FAMILY_ID: &str = "message";

/// `message` over the configured channels (`channels.webhook`,
/// `channels.irc`), built once and shared by every run: the caller (agent,
/// session, whether it is the owner) comes with each call. Sends are
/// written ahead in the send ledger (`<state dir>/channels-sends.sqlite`);
/// when that cannot be opened, calls fail with its error rather than send
/// without it.
#[cfg(feature = "channels")]
#[derive(Debug)]
pub(crate) struct MessageFamily {
    /// `None` when no channel is configured: the tool is then not offered
    /// (it could not send anywhere).
    pub(crate) spec: Option<ToolSpec>,
    pub(crate) tool: Result<Arc<talon_channels::MessageTool>, ToolError>,
}

#[cfg(feature = "channels")]
impl MessageFamily {
    pub(crate) fn new(channels: talon_channels::ChannelSet, state_dir: &std::path::Path) -> Self {
        let spec = (!channels.is_empty()).then(|| talon_channels::message_spec(&channels));
        let tool = talon_channels::SendLedger::open(&state_dir.join(talon_channels::LEDGER_FILE))
            .map(|ledger| {
                Arc::new(talon_channels::MessageTool::new(
                    Arc::new(channels),
                    Some(Arc::new(ledger)),
                ))
            })
            .map_err(talon_channels::ChannelError::into_tool_error);
        MessageFamily { spec, tool }
    }
}

#[cfg(feature = "channels")]
impl ToolFamily for MessageFamily {
    fn id(&self) -> &str {
        MESSAGE_FAMILY_ID
    }

    fn specs(&self, _run: &RunSpec) -> Vec<ToolSpec> {
        self.spec.iter().cloned().collect()
    }

    fn construct(&self, _name: &str, _run: &RunSpec) -> Result<Arc<dyn Tool>, ToolError> {
        self.tool.clone().map(|t| t as Arc<dyn Tool>)
    }
}

/// The id of the browser tool's family.
pub const BROWSER_FAMILY_ID: &str = "browser";

/// `browser`: one headless Chromium per agent (profiles under
/// `<state dir>/browser`), every request vetted with web_fetch's rules
/// (`tools.web.fetch.ssrfAllowlist`). Chromium gets the agent's exec-env
/// policy applied to this process's environment. A sandboxed run gets
/// the browser inside its sandbox (`sandbox.browser`; the local backend
/// only, see `talon_browser`), never the host's. Built on first use.
#[cfg(feature = "browser")]
#[derive(Debug)]
pub(crate) struct BrowserFamily {
    pub(crate) targets: Arc<Targets>,
    /// The guard, or the config error every call fails with.
    pub(crate) guard: Result<talon_browser::EgressGuard, ToolError>,
    pub(crate) root: std::path::PathBuf,
    /// `browser.maxDownloadBytes`.
    pub(crate) max_download_bytes: u64,
    pub(crate) managers:
        std::sync::Mutex<std::collections::HashMap<String, Arc<talon_browser::BrowserManager>>>,
}

#[cfg(feature = "browser")]
impl BrowserFamily {
    pub(crate) fn new(
        targets: Arc<Targets>,
        allowlist: Option<&talon_egress::SsrfAllowlistConfig>,
        state_dir: &std::path::Path,
        max_download_bytes: u64,
    ) -> Self {
        const KEY: &str = "tools.web.fetch.ssrfAllowlist";
        let guard = match allowlist {
            Some(allow) => talon_egress::SsrfPolicy::from_config_at(allow, KEY)
                .map_err(|e| ToolError::execution(e.to_string())),
            None => Ok(talon_egress::SsrfPolicy::strict()),
        }
        .map(|policy| {
            talon_browser::EgressGuard::new(
                Arc::new(policy),
                Arc::new(talon_egress::SystemResolver),
            )
            .with_opt_in(
                "add its host to `tools.web.fetch.ssrfAllowlist.hosts` or its network to `tools.web.fetch.ssrfAllowlist.cidrs` (the browser uses web_fetch's rules)",
            )
        });
        BrowserFamily {
            targets,
            guard,
            root: state_dir.join("browser"),
            max_download_bytes,
            managers: std::sync::Mutex::new(std::collections::HashMap::new()),
        }
    }

    fn manager(&self, run: &RunSpec) -> Result<Arc<talon_browser::BrowserManager>, ToolError> {
        let agent = run.context.agent_id.clone();
        let mut managers = self
            .managers
            .lock()
            .map_err(|_| ToolError::execution("browser managers lock poisoned"))?;
        if let Some(m) = managers.get(&agent) {
            return Ok(Arc::clone(m));
        }
        let guard = self.guard.clone()?;
        let policy = self.targets.env_policy(&agent)?;
        let settings = talon_browser::BrowserSettings {
            env: policy.host_env(talon_exec_env::process_env()),
            max_download_bytes: self.max_download_bytes,
            ..talon_browser::BrowserSettings::default()
        };
        let m = Arc::new(talon_browser::BrowserManager::new(
            guard,
            settings,
            self.root.clone(),
        ));
        managers.insert(agent, Arc::clone(&m));
        Ok(m)
    }
}

#[cfg(feature = "browser")]
impl ToolFamily for BrowserFamily {
    fn id(&self) -> &str {
        BROWSER_FAMILY_ID
    }

    fn specs(&self, _run: &RunSpec) -> Vec<ToolSpec> {
        vec![talon_browser::browser_spec()]
    }

    fn construct(&self, name: &str, run: &RunSpec) -> Result<Arc<dyn Tool>, ToolError> {
        if name != "browser" {
            return Err(ToolError::execution(format!(
                "the browser family has no tool `{name}`"
            )));
        }
        let target = self.targets.for_run(run)?;
        let manager = self.manager(run)?;
        // A sandboxed run gets the browser inside its sandbox (per
        // `sandbox.browser`), never the host's.
        let Some(name) = target.sandbox_name else {
            return Ok(Arc::new(talon_browser::BrowserTool::new(
                manager,
                target.bridge,
            )));
        };
        let settings = self
            .targets
            .sandbox_browser(&run.context.agent_id)
            .map_err(|e| ToolError::execution(e.to_string()))?;
        Ok(Arc::new(talon_browser::BrowserTool::sandboxed(
            manager,
            talon_browser::SandboxBrowser {
                target: talon_browser::SandboxTarget {
                    launcher: target.launcher,
                    bridge: target.bridge,
                    name,
                },
                config: talon_browser::SandboxBrowserConfig {
                    enabled: settings.enabled,
                    auto_start: settings.auto_start,
                    start_timeout: settings.start_timeout,
                },
            },
        )))
    }

    fn lazy(&self) -> bool {
        true
    }
}
