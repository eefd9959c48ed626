//! `image`: load images from the workspace (through the run's bridge) or
//! from `http(s)` URLs (through the egress guard), decode them under
//! limits (a decompression bomb is refused from its header), shrink and
//! re-encode them to the provider's limits, and hand them to a
//! [`VisionProvider`]. With none configured, a call that validates is a
//! `media.no_provider` error naming the config key.

use std::io::Cursor;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use futures::StreamExt as _;
use image::{DynamicImage, ImageFormat, ImageReader, Limits};
use serde_json::{Value, json};
use talon_egress::{BlockKind, GuardedClient, blocked_in};
use talon_fs_bridge::FsBridge;
use talon_tool_catalog::params::{
    Bounds, StringOpts, read_finite_number, read_positive_integer, read_string, read_string_array,
    refuse_unknown_keys,
};
use talon_tool_catalog::{
    CancelExt, CancellationToken, ContentBlock, Section, Tool, ToolCall, ToolContext, ToolError,
    ToolErrorCode, ToolFamily, ToolResult, ToolSpec,
};

use crate::error::{Error, Result};

/// The config key that selects the vision provider (Talon's own:
/// OpenClaw's `agents.defaults.imageModel` only names a model ref).
pub const IMAGE_MODEL_KEY: &str = "tools.imageProvider";

/// Limits of loading and preparing images.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageLimits {
    /// The largest input file, in bytes (a call's `maxBytesMb` may lower
    /// it, never raise it).
    pub max_input_bytes: u64,
    /// The widest or tallest image decoded; a larger header is refused
    /// before anything is allocated.
    pub max_dimension: u32,
    /// The most memory the decoder may allocate.
    pub max_alloc_bytes: u64,
    /// The most images in one call.
    pub max_images: usize,
    /// How long fetching one URL may take.
    pub fetch_timeout: Duration,
}

impl Default for ImageLimits {
    fn default() -> Self {
        ImageLimits {
            max_input_bytes: 20 * 1024 * 1024,
            max_dimension: 16_384,
            max_alloc_bytes: 512 * 1024 * 1024,
            max_images: 20,
            fetch_timeout: Duration::from_secs(30),
        }
    }
}

/// What a provider accepts per image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VisionLimits {
    /// The longest side sent, in pixels (larger images are scaled down).
    pub max_side: u32,
    /// The most bytes of one encoded image (`read` refuses images over
    /// 3.75 MiB; this is what the image is compressed to).
    pub max_bytes: usize,
}

impl Default for VisionLimits {
    fn default() -> Self {
        VisionLimits {
            max_side: 2048,
            max_bytes: 3_932_160,
        }
    }
}

/// One image ready for a provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedImage {
    /// Where it came from (the path or URL as given).
    pub source: String,
    /// `image/png` or `image/jpeg`.
    pub mime_type: String,
    /// The encoded bytes.
    pub data: Vec<u8>,
    /// Its size as sent.
    pub width: u32,
    /// Its size as sent.
    pub height: u32,
    /// Its size as loaded.
    pub original: (u32, u32),
}

/// A vision model behind the `image` tool.
#[async_trait::async_trait]
pub trait VisionProvider: Send + Sync + std::fmt::Debug {
    /// A short id (`openai`).
    fn id(&self) -> &str;

    /// What it accepts per image.
    fn limits(&self) -> VisionLimits {
        VisionLimits::default()
    }

    /// Answer `prompt` about `images`, with `model` when the call names
    /// one.
    async fn describe(
        &self,
        prompt: &str,
        images: &[PreparedImage],
        model: Option<&str>,
        abort: &CancellationToken,
    ) -> Result<String>;
}

/// An OpenAI-compatible chat-completions endpoint
/// (`POST {base}/chat/completions` with `image_url` data URLs), reached
/// through the egress guard's client.
#[derive(Debug, Clone)]
pub struct OpenAiVision {
    client: GuardedClient,
    base_url: url::Url,
    api_key: String,
    model: String,
    timeout: Duration,
}

impl OpenAiVision {
    /// A provider at `base_url` (e.g. `https://api.openai.com/v1`) using
    /// `model` by default.
    pub fn new(client: GuardedClient, base_url: url::Url, api_key: String, model: String) -> Self {
        OpenAiVision {
            client,
            base_url,
            api_key,
            model,
            timeout: Duration::from_secs(120),
        }
    }

    /// A provider at the configured `base_url` text, which must be an
    /// `http`/`https` URL (`media.invalid` naming `key` otherwise).
    pub fn from_base_url(
        client: GuardedClient,
        base_url: &str,
        key: &str,
        api_key: String,
        model: String,
    ) -> Result<Self> {
        let invalid = |reason: String| Error::Invalid {
            path: key.to_owned(),
            reason,
        };
        let url = url::Url::parse(base_url).map_err(|e| {
            invalid(format!(
                "`{base_url}` is not a URL ({e}); give the API base, e.g. https://api.openai.com/v1"
            ))
        })?;
        if url.scheme() != "http" && url.scheme() != "https" {
            return Err(invalid(format!(
                "`{base_url}` must be an http or https URL"
            )));
        }
        Ok(OpenAiVision::new(client, url, api_key, model))
    }
}

#[async_trait::async_trait]
impl VisionProvider for OpenAiVision {
    fn id(&self) -> &str {
        "openai"
    }

    async fn describe(
        &self,
        prompt: &str,
        images: &[PreparedImage],
        model: Option<&str>,
        abort: &CancellationToken,
    ) -> Result<String> {
        let failed = |message: String| Error::EngineFailed {
            program: "openai".to_owned(),
            message,
        };
        let mut content = vec![json!({ "type": "text", "text": prompt })];
        for img in images {
            let b64 = base64::engine::general_purpose::STANDARD.encode(&img.data);
            content.push(json!({
                "type": "image_url",
                "image_url": { "url": format!("data:{};base64,{b64}", img.mime_type) },
            }));
        }
        let body = json!({
            "model": model.unwrap_or(&self.model),
            "messages": [{ "role": "user", "content": content }],
        });
        let base = self.base_url.as_str().trim_end_matches('/');
        let url = url::Url::parse(&format!("{base}/chat/completions"))
            .map_err(|e| failed(format!("bad base URL: {e}")))?;
        let request = self
            .client
            .post(url)
            .map_err(|b| failed(b.to_string()))?
            .bearer_auth(&self.api_key)
            .header("content-type", "application/json")
            .body(body.to_string())
            .timeout(self.timeout);
        let response = tokio::select! {
            _ = abort.cancelled() => return Err(Error::Aborted),
            r = request.send() => r.map_err(|e| failed(e.to_string()))?,
        };
        let status = response.status();
        let bytes = response.bytes().await.map_err(|e| failed(e.to_string()))?;
        if !status.is_success() {
            let text: String = String::from_utf8_lossy(&bytes).chars().take(300).collect();
            return Err(failed(format!("HTTP {status}: {text}")));
        }
        let v: Value = serde_json::from_slice(&bytes)
            .map_err(|e| failed(format!("the answer is not JSON: {e}")))?;
        v.pointer("/choices/0/message/content")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| failed("the answer has no choices[0].message.content".to_owned()))
    }
}

/// The spec of `image` (the catalog row).
pub fn image_spec() -> ToolSpec {
    ToolSpec::core("image").unwrap_or_else(|| {
        ToolSpec::new(
            "image",
            ToolFamily::Core {
                section: Section::Media,
            },
        )
    })
}

/// The `image` tool.
#[derive(Debug, Clone)]
pub struct ImageTool {
    spec: ToolSpec,
    bridge: Arc<dyn FsBridge>,
    fetcher: Option<GuardedClient>,
    provider: Option<Arc<dyn VisionProvider>>,
    limits: ImageLimits,
}

impl ImageTool {
    /// The tool reading files through `bridge`, URLs through `fetcher`
    /// (none: URLs are refused), answering with `provider` (none: every
    /// valid call is `media.no_provider`).
    pub fn new(
        bridge: Arc<dyn FsBridge>,
        fetcher: Option<GuardedClient>,
        provider: Option<Arc<dyn VisionProvider>>,
        limits: ImageLimits,
    ) -> Self {
        ImageTool {
            spec: image_spec(),
            bridge,
            fetcher,
            provider,
            limits,
        }
    }

    async fn load(
        &self,
        source: &str,
        max_bytes: u64,
        abort: &CancellationToken,
    ) -> std::result::Result<Vec<u8>, ToolError> {
        let too_large = |actual: u64| {
            Error::TooLarge {
                what: source.to_owned(),
                actual,
                limit: max_bytes,
                hint: "bytes; give a smaller image or raise maxBytesMb (up to the tool's limit)"
                    .to_owned(),
            }
            .into_tool_error("image")
        };
        if source.starts_with("http://") || source.starts_with("https://") {
            let url = url::Url::parse(source)
                .map_err(|e| ToolError::input("image", format!("`{source}` is not a URL: {e}")))?;
            let Some(client) = &self.fetcher else {
                return Err(ToolError::input(
                    "image",
                    "this tool loads no URLs here; give a workspace path",
                ));
            };
            let refusal = |b: talon_egress::SsrfBlocked| {
                let code = match b.kind {
                    BlockKind::Metadata => ToolErrorCode::WebMetadataBlocked,
                    _ => ToolErrorCode::WebSsrfBlocked,
                };
                ToolError::new(code, b.to_string())
                    .with_detail("egressCode", b.code())
                    .with_param("image")
            };
            let request = client.get(url).map_err(refusal)?;
            let send = tokio::time::timeout(self.limits.fetch_timeout, request.send());
            let response = tokio::select! {
                _ = abort.cancelled() => return Err(Error::Aborted.into_tool_error("image")),
                r = send => match r {
                    Err(_) => return Err(ToolError::new(ToolErrorCode::WebTimeout, format!("fetching {source} took over {} s", self.limits.fetch_timeout.as_secs()))),
                    Ok(Err(e)) => return Err(match blocked_in(&e) {
                        Some(b) => refusal(b),
                        None => ToolError::new(ToolErrorCode::WebRequestFailed, format!("fetching {source}: {e}")),
                    }),
                    Ok(Ok(r)) => r,
                },
            };
            if !response.status().is_success() {
                return Err(ToolError::new(
                    ToolErrorCode::WebHttpStatus,
                    format!("fetching {source}: HTTP {}", response.status()),
                ));
            }
            if let Some(len) = response.content_length()
                && len > max_bytes
            {
                return Err(too_large(len));
            }
            let mut body = Vec::new();
            let mut stream = response.bytes_stream();
            while let Some(chunk) = stream.next().await {
                abort.check()?;
                let chunk = chunk.map_err(|e| {
                    ToolError::new(
                        ToolErrorCode::WebRequestFailed,
                        format!("fetching {source}: {e}"),
                    )
                })?;
                body.extend_from_slice(&chunk);
                if body.len() as u64 > max_bytes {
                    return Err(too_large(body.len() as u64));
                }
            }
            return Ok(body);
        }
        let file = self
            .bridge
            .read(source, Some(max_bytes + 1))
            .await
            .map_err(|e| talon_tools::fs_error("image", e))?;
        if file.truncated || file.total_size > max_bytes {
            return Err(too_large(file.total_size));
        }
        Ok(file.bytes)
    }
}

/// Decode `bytes` under `limits` and prepare them for `vision`.
pub fn prepare(
    source: &str,
    bytes: &[u8],
    limits: &ImageLimits,
    vision: VisionLimits,
) -> Result<PreparedImage> {
    let invalid = |reason: String| Error::Invalid {
        path: source.to_owned(),
        reason,
    };
    let mut reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| invalid(format!("cannot read: {e}")))?;
    let format = reader
        .format()
        .ok_or_else(|| invalid("not an image (PNG, JPEG, GIF or WebP)".to_owned()))?;
    if !matches!(
        format,
        ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::Gif | ImageFormat::WebP
    ) {
        return Err(invalid(format!(
            "{format:?} images are not taken; give PNG, JPEG, GIF or WebP"
        )));
    }
    let mut l = Limits::default();
    l.max_image_width = Some(limits.max_dimension);
    l.max_image_height = Some(limits.max_dimension);
    l.max_alloc = Some(limits.max_alloc_bytes);
    reader.limits(l);
    let img = reader.decode().map_err(|e| match e {
        image::ImageError::Limits(_) => Error::TooLarge {
            what: source.to_owned(),
            actual: 0,
            limit: u64::from(limits.max_dimension),
            hint: format!(
                "pixels per side (or more than {} MiB to decode): a decompression bomb or a huge image; give a smaller one ({e})",
                limits.max_alloc_bytes / (1024 * 1024)
            ),
        },
        other => invalid(format!("cannot decode: {other}")),
    })?;
    let original = (img.width(), img.height());
    let mut img = if img.width().max(img.height()) > vision.max_side {
        img.resize(
            vision.max_side,
            vision.max_side,
            image::imageops::FilterType::Triangle,
        )
    } else {
        img
    };
    // PNG keeps transparency; otherwise JPEG, lowering quality then size
    // until it fits.
    let alpha = img.color().has_alpha();
    loop {
        let (mime, data) = if alpha {
            ("image/png", encode(&img, ImageFormat::Png, 0)?)
        } else {
            let mut out = Vec::new();
            for q in [85u8, 70, 55, 40] {
                out = encode(&img, ImageFormat::Jpeg, q)?;
                if out.len() <= vision.max_bytes {
                    break;
                }
            }
            ("image/jpeg", out)
        };
        if data.len() <= vision.max_bytes {
            return Ok(PreparedImage {
                source: source.to_owned(),
                mime_type: mime.to_owned(),
                data,
                width: img.width(),
                height: img.height(),
                original,
            });
        }
        if img.width().max(img.height()) <= 64 {
            return Err(Error::TooLarge {
                what: source.to_owned(),
                actual: data.len() as u64,
                limit: vision.max_bytes as u64,
                hint: "bytes even at 64 pixels; give another image".to_owned(),
            });
        }
        let side = (img.width().max(img.height()) * 3 / 4).max(64);
        img = img.resize(side, side, image::imageops::FilterType::Triangle);
    }
}

fn encode(img: &DynamicImage, format: ImageFormat, quality: u8) -> Result<Vec<u8>> {
    let mut out = Cursor::new(Vec::new());
    let r = match format {
        ImageFormat::Jpeg => {
            let rgb = img.to_rgb8();
            image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality).encode_image(&rgb)
        }
        _ => img.write_to(&mut out, format),
    };
    r.map_err(|e| Error::Io(format!("cannot encode the image: {e}")))?;
    Ok(out.into_inner())
}

#[async_trait::async_trait]
impl Tool for ImageTool {
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
        let p = &call.params;
        refuse_unknown_keys::<&str>(
            "image",
            p,
            &[
                "prompt",
                "image",
                "images",
                "model",
                "maxBytesMb",
                "maxImages",
            ],
            &[],
        )?;
        let mut sources = Vec::new();
        if let Some(one) = read_string(p, "image", StringOpts::default())? {
            sources.push(one);
        }
        sources.extend(read_string_array(p, "images", false, None)?.unwrap_or_default());
        if sources.is_empty() {
            return Err(ToolError::input(
                "image",
                "image required: a workspace path or an http(s) URL (or images: a list)",
            ));
        }
        let max_images = read_positive_integer(p, "maxImages", Bounds::default())?
            .map(|n| (n as usize).min(self.limits.max_images))
            .unwrap_or(self.limits.max_images);
        if sources.len() > max_images {
            return Err(Error::TooLarge {
                what: "images".to_owned(),
                actual: sources.len() as u64,
                limit: max_images as u64,
                hint: "images in one call; split the call".to_owned(),
            }
            .into_tool_error("images"));
        }
        let max_bytes = match read_finite_number(p, "maxBytesMb", Bounds::inclusive(0.001, 1e6))? {
            Some(mb) => ((mb * 1024.0 * 1024.0) as u64).min(self.limits.max_input_bytes),
            None => self.limits.max_input_bytes,
        };
        let prompt = read_string(p, "prompt", StringOpts::default())?
            .unwrap_or_else(|| "Describe the image.".to_owned());
        let model = read_string(p, "model", StringOpts::default())?;
        let vision = self
            .provider
            .as_ref()
            .map(|v| v.limits())
            .unwrap_or_default();
        let mut prepared = Vec::new();
        for source in &sources {
            let bytes = self.load(source, max_bytes, abort).await?;
            let limits = self.limits;
            let src = source.clone();
            let img = tokio::task::spawn_blocking(move || prepare(&src, &bytes, &limits, vision))
                .await
                .map_err(|e| ToolError::execution(format!("image preparation panicked: {e}")))?
                .map_err(|e| e.into_tool_error("image"))?;
            prepared.push(img);
        }
        let Some(provider) = &self.provider else {
            return Err(Error::NoProvider {
                tool: "image".to_owned(),
                config_key: IMAGE_MODEL_KEY.to_owned(),
            }
            .into_tool_error("image"));
        };
        let answer = provider
            .describe(&prompt, &prepared, model.as_deref(), abort)
            .await
            .map_err(|e| e.into_tool_error("image"))?;
        Ok(ToolResult {
            content: vec![ContentBlock::Text { text: answer }],
            details: json!({
                "provider": provider.id(),
                "images": prepared.iter().map(|i| json!({
                    "source": i.source,
                    "mimeType": i.mime_type,
                    "bytes": i.data.len(),
                    "width": i.width,
                    "height": i.height,
                    "originalWidth": i.original.0,
                    "originalHeight": i.original.1,
                })).collect::<Vec<_>>(),
            }),
            status: Default::default(),
        })
    }
}
