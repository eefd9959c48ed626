//! Talon's media tools.
//!
//! - [`PdfTool`] (`pdf`): the text of a PDF (`pdftotext`, page ranges,
//!   optional layout) and its pages as PNG (`pdftoppm`), with limits on
//!   input bytes, pages, resolution and output characters
//!   ([`PdfLimits`]). A malformed or encrypted PDF is a
//!   `media.invalid` error. poppler runs in bubblewrap when it works on
//!   the host ([`Isolation`]): no network, a read-only view of the system
//!   dirs, its private directory the only writable place.
//! - [`TtsTool`] (`tts`): speech through a [`TtsProvider`]; the default
//!   [`EspeakProvider`] runs Debian's `espeak-ng` locally (no network). The
//!   WAV is written into the workspace through the run's bridge and its
//!   duration read from the header ([`WavInfo`]).
//! - [`ImageTool`] (`image`): images from the workspace (bridge) or
//!   `http(s)` URLs (the egress guard's client), decoded under
//!   [`ImageLimits`] (a decompression bomb is refused from its header),
//!   scaled and re-encoded to the provider's [`VisionLimits`], then given
//!   to a [`VisionProvider`] ([`OpenAiVision`] for an OpenAI-compatible
//!   endpoint); with none configured a valid call is `media.no_provider`.
//! - [`GenerateTool`] (`image_generate`, `music_generate`,
//!   `video_generate`): over a [`GenerationProvider`]; with none
//!   configured each call is a `media.no_provider` error naming the config
//!   key to set.
//!
//! Files are read and written only through the run's
//! [`FsBridge`](talon_fs_bridge::FsBridge): a PDF's bytes are copied into
//! a private temp directory, the engine runs there and its output is read
//! back. Engines run through [`EngineRunner`]: an exact environment (the
//! caller builds it from the exec-env policy), their own process group, a
//! timeout, capped output and `ulimit`s for memory, CPU time and file
//! size.
//!
//! ```
//! use talon_media::{PageRange, WavInfo};
//!
//! assert_eq!(PageRange::parse("2-5"), Some(PageRange { first: 2, last: Some(5) }));
//! assert_eq!(PageRange::parse("5-2"), None);
//! assert_eq!(WavInfo::parse(b"not audio"), None);
//! ```

#![deny(missing_docs)]

pub use crate::engine::{DEFAULT_BWRAP, EngineLimits, EngineRunner, Isolation};
pub use crate::error::{Error, Result};
pub use crate::generate::{GenerateTool, GenerationKind, GenerationProvider};
pub use crate::pdf::{PageRange, PdfLimits, PdfTool, pdf_spec};
pub use crate::tts::{
    EspeakProvider, MAX_TTS_CHARS, Speech, TtsProvider, TtsTool, WavInfo, tts_spec,
};
pub use crate::vision::{
    IMAGE_MODEL_KEY, ImageLimits, ImageTool, OpenAiVision, PreparedImage, VisionLimits,
    VisionProvider, image_spec, prepare,
};

mod engine;
mod error;
mod generate;
mod pdf;
mod tts;
mod vision;
