//! The `tts` tool: text to a WAV file in the workspace, through a
//! [`TtsProvider`]; the default provider is local `espeak-ng` (no
//! network).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;
use talon_fs_bridge::{FsBridge, WriteOptions};
use talon_tool_catalog::params::{
    NumberOpts, StringOpts, read_number, read_string, refuse_unknown_keys,
};
use talon_tool_catalog::{
    CancelExt, CancellationToken, ContentBlock, ResultStatus, Section, Tool, ToolCall, ToolContext,
    ToolError, ToolFamily, ToolResult, ToolSpec,
};

use crate::engine::{EngineLimits, EngineRunner, exit_text};
use crate::error::{Error, Result};

/// Most characters one `tts` call speaks.
pub const MAX_TTS_CHARS: usize = 4_000;

/// Speech audio a provider made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Speech {
    /// The audio bytes.
    pub audio: Vec<u8>,
    /// The file extension of the format (`wav`).
    pub extension: &'static str,
}

/// Something that turns text into speech.
#[async_trait::async_trait]
pub trait TtsProvider: Send + Sync + std::fmt::Debug {
    /// The provider's id, reported in results (`espeak-ng`).
    fn id(&self) -> &str;

    /// Speak `text` within `timeout`.
    async fn synthesize(
        &self,
        text: &str,
        timeout: Duration,
        abort: &CancellationToken,
    ) -> Result<Speech>;
}

/// Local speech with Debian's `espeak-ng` (WAV, no network).
#[derive(Debug, Clone)]
pub struct EspeakProvider {
    runner: EngineRunner,
}

impl EspeakProvider {
    /// The provider running `espeak-ng` with `runner`.
    pub fn new(runner: EngineRunner) -> Self {
        EspeakProvider { runner }
    }
}

#[async_trait::async_trait]
impl TtsProvider for EspeakProvider {
    fn id(&self) -> &str {
        "espeak-ng"
    }

    async fn synthesize(
        &self,
        text: &str,
        timeout: Duration,
        abort: &CancellationToken,
    ) -> Result<Speech> {
        let dir = tempfile::Builder::new()
            .prefix("talon-tts-")
            .tempdir()
            .map_err(|e| Error::Io(e.to_string()))?;
        let limits = EngineLimits {
            timeout,
            ..self.runner.limits()
        };
        // The text goes in on stdin, never as an argument.
        let out = self
            .runner
            .clone()
            .with_limits(limits)
            .run(
                "espeak-ng",
                "espeak-ng",
                &["--stdout".to_owned()],
                dir.path(),
                text.as_bytes().to_vec(),
                abort,
            )
            .await?;
        if out.code != Some(0) || out.stdout_truncated {
            return Err(Error::EngineFailed {
                program: "espeak-ng".to_owned(),
                message: if out.stdout_truncated {
                    "the audio was longer than the output limit".to_owned()
                } else {
                    exit_text(&out)
                },
            });
        }
        Ok(Speech {
            audio: out.stdout,
            extension: "wav",
        })
    }
}

/// The format of a WAV file, from its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WavInfo {
    /// Samples per second.
    pub sample_rate: u32,
    /// Channels.
    pub channels: u16,
    /// Bits per sample.
    pub bits_per_sample: u16,
    /// Bytes of sample data present.
    pub data_bytes: u64,
}

impl WavInfo {
    /// Parse a RIFF/WAVE header; `None` when `bytes` is not one. A data
    /// chunk that declares more than is present (a streamed header)
    /// counts what is present.
    pub fn parse(bytes: &[u8]) -> Option<WavInfo> {
        if bytes.len() < 12 || &bytes[0..4] != b"RIFF" || &bytes[8..12] != b"WAVE" {
            return None;
        }
        let u16_at = |i: usize| Some(u16::from_le_bytes(bytes.get(i..i + 2)?.try_into().ok()?));
        let u32_at = |i: usize| Some(u32::from_le_bytes(bytes.get(i..i + 4)?.try_into().ok()?));
        let mut at = 12;
        let mut fmt = None;
        while at + 8 <= bytes.len() {
            let id = &bytes[at..at + 4];
            let size = u64::from(u32_at(at + 4)?);
            let body = at + 8;
            if id == b"fmt " {
                fmt = Some((u16_at(body + 2)?, u32_at(body + 4)?, u16_at(body + 14)?));
            } else if id == b"data" {
                let (channels, sample_rate, bits_per_sample) = fmt?;
                let present = (bytes.len() - body) as u64;
                return Some(WavInfo {
                    sample_rate,
                    channels,
                    bits_per_sample,
                    data_bytes: size.min(present),
                });
            }
            at = body
                .checked_add(usize::try_from(size).ok()?)?
                .checked_add((size % 2) as usize)?;
        }
        None
    }

    /// The duration of the sample data.
    pub fn duration(&self) -> Duration {
        let frame = u64::from(self.channels) * u64::from(self.bits_per_sample).div_ceil(8);
        let per_second = frame * u64::from(self.sample_rate);
        if per_second == 0 {
            return Duration::ZERO;
        }
        Duration::from_micros(self.data_bytes.saturating_mul(1_000_000) / per_second)
    }
}

/// The spec of `tts` (the catalog row).
pub fn tts_spec() -> ToolSpec {
    ToolSpec::core("tts").unwrap_or_else(|| {
        ToolSpec::new(
            "tts",
            ToolFamily::Core {
                section: Section::Media,
            },
        )
    })
}

/// The `tts` tool: speaks through its provider and writes the audio into
/// the workspace (`tts/`) through the run's bridge.
#[derive(Debug, Clone)]
pub struct TtsTool {
    spec: ToolSpec,
    bridge: Arc<dyn FsBridge>,
    provider: Arc<dyn TtsProvider>,
    default_timeout: Duration,
}

impl TtsTool {
    /// The tool writing through `bridge`, speaking with `provider`.
    pub fn new(bridge: Arc<dyn FsBridge>, provider: Arc<dyn TtsProvider>) -> Self {
        TtsTool {
            spec: tts_spec(),
            bridge,
            provider,
            default_timeout: Duration::from_secs(30),
        }
    }
}

#[async_trait::async_trait]
impl Tool for TtsTool {
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
        refuse_unknown_keys::<&str>("tts", p, &["text", "channel", "timeoutMs"], &[])?;
        let text = read_string(p, "text", StringOpts::required())?.unwrap_or_default();
        if text.is_empty() {
            return Err(ToolError::input(
                "text",
                "text is empty; give the words to speak",
            ));
        }
        let chars = text.chars().count();
        if chars > MAX_TTS_CHARS {
            return Err(Error::TooLarge {
                what: "text".to_owned(),
                actual: chars as u64,
                limit: MAX_TTS_CHARS as u64,
                hint: "characters; speak it in parts".to_owned(),
            }
            .into_tool_error("text"));
        }
        let timeout = read_number(
            p,
            "timeoutMs",
            NumberOpts {
                integer: true,
                ..NumberOpts::default()
            },
        )?
        .map_or(self.default_timeout, |ms| {
            Duration::from_millis(ms.clamp(1.0, 120_000.0) as u64)
        });
        let speech = self
            .provider
            .synthesize(&text, timeout, abort)
            .await
            .map_err(|e| e.into_tool_error("text"))?;
        let wav = WavInfo::parse(&speech.audio).ok_or_else(|| {
            Error::EngineFailed {
                program: self.provider.id().to_owned(),
                message: "the audio is not a WAV file".to_owned(),
            }
            .into_tool_error("text")
        })?;
        let duration = wav.duration();
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        let path = format!(
            "tts/tts-{stamp}-{}.{}",
            std::process::id(),
            speech.extension
        );
        let report = self
            .bridge
            .write(
                &path,
                &speech.audio,
                WriteOptions {
                    create_parents: true,
                    create_new: true,
                },
            )
            .await
            .map_err(|e| talon_tools::fs_error("text", e))?;
        let duration_ms = duration.as_millis() as u64;
        Ok(ToolResult {
            content: vec![ContentBlock::Text {
                text: format!(
                    "MEDIA:{}\nSpoke {chars} characters with {} ({:.1} s of audio).",
                    report.container_path,
                    self.provider.id(),
                    duration.as_secs_f64()
                ),
            }],
            details: json!({
                "audioPath": report.container_path,
                "provider": self.provider.id(),
                "format": speech.extension,
                "durationMs": duration_ms,
                "sampleRate": wav.sample_rate,
                "channels": wav.channels,
                "bytes": report.bytes,
            }),
            status: ResultStatus::Ok,
        })
    }
}
