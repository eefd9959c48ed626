//! `config.*` and the configuration's generations: the active one, how a
//! reload compiles the next, and what the last reload did.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, RwLock};

use serde_json::{Value, json};
use talon_config::ConfigLocation;
use talon_gateway_protocol::{
    ConfigGetResponse, ConfigSchemaLookupParams, ConfigSchemaLookupResponse, ReloadReport,
};
use talon_hooks::approval::DynApprovalBroker;
use talon_tool_catalog::{CancellationToken, Tool as _, ToolCall, ToolContext};

use crate::error::GatewayError;
use crate::gateway::{GatewayOptions, Generation, Link, Parts, build_generation, load_config};
use crate::rpc::RpcError;
use crate::settings::GatewaySection;

/// Where the configuration comes from, the active generation, and the
/// start-time facts a reload is checked against (listen address, the
/// generated token).
pub(crate) struct ConfigHandler {
    pub(crate) options: GatewayOptions,
    pub(crate) location: ConfigLocation,
    current: RwLock<Arc<Generation>>,
    next_generation: AtomicU64,
    last_reload: RwLock<Option<ReloadReport>>,
    /// The generated token's SHA-256 (its text is not kept).
    generated_token: crate::auth::TokenHash,
    pub(crate) token_path: PathBuf,
    link: Link,
    sandbox_events: talon_sandbox_core::SharedEventSink,
    /// The address the gateway listens on (fixed at start).
    pub(crate) listen: std::net::SocketAddr,
}

/// What a [`ConfigHandler`] starts from.
pub(crate) struct ConfigStart {
    pub(crate) options: GatewayOptions,
    pub(crate) location: ConfigLocation,
    pub(crate) first: Generation,
    pub(crate) next_generation: AtomicU64,
    pub(crate) generated_token: crate::auth::TokenHash,
    pub(crate) token_path: PathBuf,
    pub(crate) link: Link,
    pub(crate) sandbox_events: talon_sandbox_core::SharedEventSink,
    pub(crate) listen: std::net::SocketAddr,
}

impl ConfigHandler {
    pub(crate) fn new(start: ConfigStart) -> Self {
        ConfigHandler {
            options: start.options,
            location: start.location,
            current: RwLock::new(Arc::new(start.first)),
            next_generation: start.next_generation,
            last_reload: RwLock::new(None),
            generated_token: start.generated_token,
            token_path: start.token_path,
            link: start.link,
            sandbox_events: start.sandbox_events,
            listen: start.listen,
        }
    }

    /// The active generation.
    pub(crate) fn generation(&self) -> Arc<Generation> {
        match self.current.read() {
            Ok(g) => Arc::clone(&g),
            Err(p) => Arc::clone(&p.into_inner()),
        }
    }

    /// `config.get`: the running config, secrets redacted.
    pub(crate) fn get(&self) -> ConfigGetResponse {
        let g = self.generation();
        let raw = serde_json::to_value(&*g.config).unwrap_or(Value::Null);
        ConfigGetResponse {
            origin: g.origin.clone(),
            generation: g.id,
            loaded_at_ms: g.loaded_at_ms,
            config: talon_tools::redact_secrets(&raw),
            last_reload: self.last_reload.read().ok().and_then(|r| r.clone()),
        }
    }

    /// `config.schema.lookup`: the `gateway` tool's lookup, over the
    /// active config.
    pub(crate) async fn schema_lookup(
        &self,
        p: ConfigSchemaLookupParams,
    ) -> Result<ConfigSchemaLookupResponse, RpcError> {
        let g = self.generation();
        let config = Arc::clone(&g.config);
        let tool = talon_tools::GatewayTool::new(
            move || serde_json::to_value(&*config).unwrap_or(Value::Null),
            talon_config::config_schema(),
        );
        let mut params = serde_json::Map::new();
        params.insert("action".into(), json!("config.schema.lookup"));
        if let Some(path) = p.path {
            params.insert("path".into(), json!(path));
        }
        let call = ToolCall {
            id: "config.schema.lookup".into(),
            name: "gateway".into(),
            params,
        };
        let ctx = ToolContext::new("gateway", "gateway");
        match tool.execute(&call, &ctx, &CancellationToken::new()).await {
            Ok(r) => Ok(ConfigSchemaLookupResponse(if r.details.is_null() {
                json!({"text": r.text()})
            } else {
                r.details
            })),
            Err(e) => Err(RpcError::params(e.to_string())),
        }
    }

    /// The directory relative config paths are resolved against.
    pub(crate) fn config_dir(&self) -> PathBuf {
        match self.location.path() {
            Some(p) => p
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| PathBuf::from(".")),
            None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        }
    }

    /// Load and compile the next generation (not installed yet). A
    /// non-loopback listener without a configured token is refused.
    pub(crate) fn compile_next(
        &self,
        broker: &Arc<DynApprovalBroker>,
        cron: Option<&talon_cron::CronService>,
    ) -> Result<Generation, GatewayError> {
        let loaded = load_config(&self.location)?;
        let section = GatewaySection::from_config(&loaded.config.gateway_config());
        let addr = section.listen_addr(self.options.bind);
        let listening = self.listen;
        if !listening.ip().is_loopback() && section.tokens.is_empty() {
            return Err(GatewayError::Config {
                origin: loaded.origin.clone(),
                message: format!(
                    "the gateway listens on {listening}, a non-loopback address; a config without gateway.auth tokens is refused"
                ),
            });
        }
        if addr != listening {
            tracing::warn!(%addr, %listening, "the listen address changed in the config; it applies after a restart");
        }
        build_generation(
            &Parts {
                broker,
                sandbox_events: &self.sandbox_events,
                cron,
                link: &self.link,
                generated_token: &self.generated_token,
                location: &self.location,
                next_generation: &self.next_generation,
                previous: Some(self.generation()),
            },
            loaded,
            section,
        )
    }

    /// Make `generation` the active one (calls already running keep the
    /// table they started with).
    pub(crate) fn install(&self, generation: Generation) {
        let generation = Arc::new(generation);
        let old = match self.current.write() {
            Ok(mut g) => std::mem::replace(&mut *g, generation),
            Err(p) => std::mem::replace(&mut *p.into_inner(), generation),
        };
        drop(old);
    }

    /// Remember what the last reload did (`config.get` shows it).
    pub(crate) fn record_reload(&self, report: &ReloadReport) {
        if let Ok(mut last) = self.last_reload.write() {
            *last = Some(report.clone());
        }
    }
}
