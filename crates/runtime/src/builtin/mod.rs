//! The built-in tools of a configured runtime, and where they act.

#[cfg(feature = "docker")]
mod docker;
mod families;
mod local;
mod sandbox_skills;
#[cfg(feature = "ssh")]
mod ssh;
mod targets;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use talon_config::TalonConfig;
use talon_hooks::exec_env::ExecEnvHooks;
use talon_sandbox_core::SandboxBackendRegistry;
#[cfg(feature = "web")]
use talon_tool_catalog::{Tool, ToolSpec};
use talon_tools::{ExecConfig, ProcessRegistry, ReadLimits, RegistryOptions, WebToolsConfig};
#[cfg(feature = "web")]
use talon_tools::{WebError, WebFetchTool, WebSearchTool};

#[cfg(feature = "sqlite-state")]
pub(crate) use families::CronFamily;
pub use families::{
    BROWSER_FAMILY_ID, CODING_FAMILY_ID, CRON_FAMILY_ID, GATEWAY_FAMILY_ID, MEDIA_FAMILY_ID,
    MEMORY_FAMILY_ID, MESSAGE_FAMILY_ID, SHELL_FAMILY_ID, WEB_FAMILY_ID,
};

use crate::error::Result;
use crate::family::ToolFamily;
#[cfg(feature = "web")]
use families::WebFamily;
use families::{CodingFamily, GatewayFamily, ShellFamily};
pub(crate) use targets::{HostWorkdir, Targets};

/// What `RuntimeBuilder::from_config` adds: the families, plus the parts
/// the builder completes later (the `resolve_exec_env` handlers, frozen
/// at build; the sandbox backends an embedder registers).
pub(crate) struct Builtins {
    pub(crate) families: Vec<Arc<dyn ToolFamily>>,
    pub(crate) env_hooks: Arc<OnceLock<Arc<ExecEnvHooks>>>,
    pub(crate) backends: Arc<SandboxBackendRegistry>,
    pub(crate) registry: Arc<ProcessRegistry>,
    /// Where sandbox state (workspaces, the usage file) lives.
    pub(crate) state_dir: PathBuf,
    /// The config file, set by `RuntimeBuilder::config_file` (shared with
    /// the sandbox targets).
    pub(crate) config_file: Arc<OnceLock<PathBuf>>,
    /// Where each run's tools act (the exec approval pin resolves a host
    /// run's working directory through the same launcher).
    pub(crate) targets: Arc<Targets>,
    /// Where the built-in Docker backend reports its sandbox events, set
    /// by `RuntimeBuilder::sandbox_events`.
    pub(crate) sandbox_events: Arc<OnceLock<talon_sandbox_core::SharedEventSink>>,
}

impl std::fmt::Debug for Builtins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builtins")
            .field(
                "families",
                &self
                    .families
                    .iter()
                    .map(|f| f.id().to_owned())
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Builtins {
    /// The built-in families for `config`, with state under `state_dir`.
    pub(crate) fn from_config(
        config: &TalonConfig,
        config_dir: &std::path::Path,
        state_dir: PathBuf,
    ) -> Result<Self> {
        let tools = config.tools.as_ref();
        let exec: ExecConfig = config.exec_config();
        let web: WebToolsConfig = tools.and_then(|t| t.web.clone()).unwrap_or_default();
        let backends = Arc::new(SandboxBackendRegistry::new());
        // A backend compiled out is not registered: a sandboxed run that
        // selects it fails closed, naming the cargo feature.
        let sandbox_events = Arc::new(OnceLock::new());
        #[cfg(feature = "docker")]
        backends.register(
            "docker",
            Arc::new(docker::LazyDockerBackend::new(Arc::clone(&sandbox_events))),
        );
        let fetch_allowlist = web.fetch.as_ref().and_then(|f| f.ssrf_allowlist.as_ref());
        backends.register(
            "local",
            Arc::new(local::LazyLocalBackend::new(fetch_allowlist)),
        );
        #[cfg(feature = "ssh")]
        backends.register("ssh", ssh::backend(talon_config::home_dir()));
        // `${secret:NAME}` and `${VAR}` in `tools.exec.env.set`: the file
        // is read only when a value holds a reference, and every policy
        // (global, each agent's) must expand now, so a reference that does
        // not resolve stops the build instead of the first exec.
        let exec_secrets = if config.exec_env_has_refs() {
            talon_config::secrets::SecretStore::load(&state_dir)?
        } else {
            talon_config::secrets::SecretStore::default()
        };
        config.exec_env_policy_expanded(None, &exec_secrets)?;
        for id in config.agent_ids() {
            config.exec_env_policy_expanded(Some(&id), &exec_secrets)?;
        }
        let targets = Arc::new(Targets::new(
            Arc::new(config.clone()),
            config_dir.to_path_buf(),
            state_dir.clone(),
            talon_config::home_dir(),
            Arc::clone(&backends),
            exec_secrets,
        ));
        let config_file = Arc::clone(&targets.config_file);
        let registry = Arc::new(ProcessRegistry::new(RegistryOptions::from_config(&exec)));
        let env_hooks = Arc::new(OnceLock::new());

        #[cfg(not(feature = "web"))]
        warn_web_compiled_out(&web);

        let snapshot = Arc::new(serde_json::to_value(config).unwrap_or_default());
        let mut families: Vec<Arc<dyn ToolFamily>> = vec![
            Arc::new(CodingFamily::new(
                Arc::clone(&targets),
                ReadLimits::default(),
            )),
            Arc::new(ShellFamily {
                targets: Arc::clone(&targets),
                registry: Arc::clone(&registry),
                config: exec,
                env_hooks: Arc::clone(&env_hooks),
            }),
        ];
        #[cfg(feature = "web")]
        families.push(Arc::new(web_family(&web)));
        families.push(Arc::new(GatewayFamily::new(
            snapshot,
            talon_config::config_schema(),
        )));
        #[cfg(feature = "sqlite-state")]
        {
            // One service per distinct setting: the defaults, and each agent
            // with its own `memorySearch` merged over them. An agent whose
            // memory search is off gets no memory tools.
            let make = |c: talon_memory::MemorySearchConfig| {
                c.is_enabled().then(|| {
                    talon_memory::MemoryService::new(Some(&c), state_dir.clone())
                        .map(Arc::new)
                        .map_err(|e| e.into_tool_error("query"))
                })
            };
            let default = make(config.memory_search().cloned().unwrap_or_default());
            let agents: std::collections::HashMap<_, _> = config
                .agents_with_memory_search()
                .into_iter()
                .map(|id| {
                    let service = make(config.agent_memory_search(&id));
                    (id, service)
                })
                .collect();
            if default.is_some() || agents.values().any(Option::is_some) {
                families.push(Arc::new(families::MemoryFamily {
                    targets: Arc::clone(&targets),
                    default,
                    agents,
                }));
            }
        }
        #[cfg(feature = "media")]
        families.push(Arc::new(families::MediaFamily {
            targets: Arc::clone(&targets),
            image_fetch: families::image_fetch_client(
                web.fetch.as_ref().and_then(|f| f.ssrf_allowlist.as_ref()),
            ),
            // The secrets file is read only when a provider is configured.
            vision: tools.and_then(|t| t.image_provider.as_ref()).map(|p| {
                let secrets =
                    talon_config::secrets::SecretStore::load(&state_dir).map_err(|e| {
                        talon_tool_catalog::ToolError::execution(format!(
                            "tools.imageProvider: {e}"
                        ))
                    })?;
                families::vision_provider(p, &secrets)
            }),
        }));
        #[cfg(feature = "channels")]
        {
            // `${secret:NAME}` in a channel's secret or password; the file
            // is read only when a channel is configured.
            let connections = config.channel_connections.clone().unwrap_or_default();
            let secrets = if connections.webhook.is_some() || connections.irc.is_some() {
                talon_config::secrets::SecretStore::load(&state_dir)?
            } else {
                talon_config::secrets::SecretStore::default()
            };
            families.push(Arc::new(families::MessageFamily::new(
                talon_channels::ChannelSet::from_config(&connections, &secrets),
                &state_dir,
            )));
        }
        #[cfg(feature = "browser")]
        families.push(Arc::new(families::BrowserFamily::new(
            Arc::clone(&targets),
            web.fetch.as_ref().and_then(|f| f.ssrf_allowlist.as_ref()),
            &state_dir,
            config
                .browser
                .as_ref()
                .map(talon_config::sections::browser::BrowserConfig::max_download_bytes)
                .unwrap_or(talon_config::sections::browser::DEFAULT_MAX_DOWNLOAD_BYTES),
        )));
        Ok(Builtins {
            families,
            env_hooks,
            backends,
            registry,
            state_dir,
            config_file,
            targets,
            sandbox_events,
        })
    }
}

/// `web_fetch` and `web_search` as `tools.web` configures them.
#[cfg(feature = "web")]
fn web_family(web: &WebToolsConfig) -> WebFamily {
    // `tools.web.*.enabled: false` removes the tool from every run; a
    // configuration error keeps it listed and makes its calls fail with it.
    let fetch_config = web.fetch.clone().unwrap_or_default();
    let search_config = web.search.clone().unwrap_or_default();
    let fetch = fetch_config.is_enabled().then(|| {
        WebFetchTool::new(&fetch_config)
            .map(|t| Arc::new(t) as Arc<dyn Tool>)
            .map_err(WebError::into_tool_error)
    });
    let search = search_config.is_enabled().then(|| {
        WebSearchTool::new(&search_config)
            .map(|t| Arc::new(t) as Arc<dyn Tool>)
            .map_err(WebError::into_tool_error)
    });
    let mut web_tools = Vec::new();
    for (name, built) in [("web_fetch", fetch), ("web_search", search)] {
        let Some(built) = built else { continue };
        let spec = match &built {
            Ok(t) => Some(t.spec().clone()),
            Err(_) => ToolSpec::core(name),
        };
        if let Some(spec) = spec {
            web_tools.push((spec, built));
        }
    }
    WebFamily { tools: web_tools }
}

/// Without the `web` feature the web tools are not offered, and a call of
/// one says which feature brings it; a config that sets them up is told
/// so once, at startup.
#[cfg(not(feature = "web"))]
fn warn_web_compiled_out(web: &WebToolsConfig) {
    let configured = [
        ("web_fetch", web.fetch.as_ref().map(|f| f.is_enabled())),
        ("web_search", web.search.as_ref().map(|s| s.is_enabled())),
    ];
    for (tool, enabled) in configured {
        if enabled == Some(true) {
            tracing::warn!(
                target: "talon::runtime",
                tool,
                "tools.web configures {tool}, but this build does not offer it; to add it, {}",
                crate::cargo_features::enable_hint("web")
            );
        }
    }
}
