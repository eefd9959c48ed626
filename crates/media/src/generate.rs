//! `image_generate`, `music_generate` and `video_generate`: tools over a
//! [`GenerationProvider`] that refuse with
//! [`media.no_provider`](talon_tool_catalog::ToolErrorCode::MediaNoProvider),
//! naming the config key, until one is configured.

use std::sync::Arc;

use serde_json::{Map, Value};
use talon_tool_catalog::{
    CancelExt, CancellationToken, Section, Tool, ToolCall, ToolContext, ToolError, ToolFamily,
    ToolResult, ToolSpec,
};

use crate::error::{Error, Result};

/// What a generation tool makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GenerationKind {
    /// `image_generate`.
    Image,
    /// `music_generate`.
    Music,
    /// `video_generate`.
    Video,
}

impl GenerationKind {
    /// Every kind.
    pub const ALL: [GenerationKind; 3] = [
        GenerationKind::Image,
        GenerationKind::Music,
        GenerationKind::Video,
    ];

    /// The tool's name.
    pub fn tool(self) -> &'static str {
        match self {
            GenerationKind::Image => "image_generate",
            GenerationKind::Music => "music_generate",
            GenerationKind::Video => "video_generate",
        }
    }

    /// The OpenClaw config key that selects this tool's provider model.
    pub fn config_key(self) -> &'static str {
        match self {
            GenerationKind::Image => "agents.defaults.imageGenerationModel",
            GenerationKind::Music => "agents.defaults.musicGenerationModel",
            GenerationKind::Video => "agents.defaults.videoGenerationModel",
        }
    }
}

/// A provider that generates media from a tool call's parameters.
#[async_trait::async_trait]
pub trait GenerationProvider: Send + Sync + std::fmt::Debug {
    /// Generate for `params` (the tool's catalog parameters).
    async fn generate(
        &self,
        kind: GenerationKind,
        params: &Map<String, Value>,
        abort: &CancellationToken,
    ) -> Result<ToolResult>;
}

/// One generation tool; without a provider every call is refused with
/// [`Error::NoProvider`].
#[derive(Debug, Clone)]
pub struct GenerateTool {
    spec: ToolSpec,
    kind: GenerationKind,
    provider: Option<Arc<dyn GenerationProvider>>,
}

impl GenerateTool {
    /// The tool for `kind`, over `provider` when one is configured.
    pub fn new(kind: GenerationKind, provider: Option<Arc<dyn GenerationProvider>>) -> Self {
        let spec = ToolSpec::core(kind.tool()).unwrap_or_else(|| {
            ToolSpec::new(
                kind.tool(),
                ToolFamily::Core {
                    section: Section::Media,
                },
            )
        });
        GenerateTool {
            spec,
            kind,
            provider,
        }
    }
}

#[async_trait::async_trait]
impl Tool for GenerateTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(
        &self,
        call: &ToolCall,
        _ctx: &ToolContext,
        abort: &CancellationToken,
    ) -> std::result::Result<ToolResult, ToolError> {
        abort.check()?;
        let Some(provider) = &self.provider else {
            return Err(Error::NoProvider {
                tool: self.kind.tool().to_owned(),
                config_key: self.kind.config_key().to_owned(),
            }
            .into_tool_error("prompt"));
        };
        provider
            .generate(self.kind, &call.params, abort)
            .await
            .map_err(|e| e.into_tool_error("prompt"))
    }
}
