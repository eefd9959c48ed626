//! Provider dialects and how a provider/model pair maps onto one.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;
use crate::gemini::GEMINI_STRIPPED_KEYWORDS;

/// Keywords xAI rejects in tool schemas.
pub(crate) const XAI_STRIPPED_KEYWORDS: &[&str] = &["minContains", "maxContains"];

/// A provider's flavour of JSON Schema for tool parameters.
///
/// Every dialect gets the generic normalisation (local `$ref`s inlined,
/// OpenAPI keywords rewritten, a top-level object guaranteed); the
/// dialect adds its own rules on top.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// OpenAI function tools (non-strict): the generic pass, which
    /// guarantees the top-level `type: "object"` OpenAI insists on.
    OpenAi,
    /// OpenAI with `strict: true`: additionally `required: []` on
    /// empty-property objects and `additionalProperties: false` at the
    /// root. See [`openai_strict_compatible`](crate::openai_strict_compatible).
    OpenAiStrict,
    /// Anthropic: full draft 2020-12 accepted, so the generic pass only.
    Anthropic,
    /// Google Gemini: keyword stripping, string enums, unions flattened.
    Gemini,
    /// xAI: `minContains` and `maxContains` stripped.
    Xai,
    /// Any other provider: the generic pass only.
    Permissive,
}

impl Dialect {
    /// Every dialect, in declaration order.
    pub const ALL: [Dialect; 6] = [
        Dialect::OpenAi,
        Dialect::OpenAiStrict,
        Dialect::Anthropic,
        Dialect::Gemini,
        Dialect::Xai,
        Dialect::Permissive,
    ];

    /// The dialect's stable name, as accepted by [`FromStr`].
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::OpenAi => "openai",
            Dialect::OpenAiStrict => "openai-strict",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
            Dialect::Xai => "xai",
            Dialect::Permissive => "permissive",
        }
    }

    /// The keywords this dialect removes from every subschema (before
    /// [`NormalizeOptions::unsupported_keywords`](crate::NormalizeOptions)).
    pub fn stripped_keywords(self) -> &'static [&'static str] {
        match self {
            Dialect::Gemini => GEMINI_STRIPPED_KEYWORDS,
            Dialect::Xai => XAI_STRIPPED_KEYWORDS,
            Dialect::OpenAi | Dialect::OpenAiStrict | Dialect::Anthropic | Dialect::Permissive => {
                &[]
            }
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Dialect {
    type Err = Error;

    /// Parses a name from [`Dialect::as_str`], ignoring case and
    /// surrounding whitespace; `_` is accepted for `-`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase().replace('_', "-");
        Dialect::ALL
            .into_iter()
            .find(|d| d.as_str() == wanted)
            .ok_or_else(|| Error::UnknownDialect { name: s.to_owned() })
    }
}

/// Picks the dialect for a provider id and optional model id, the way
/// OpenClaw does.
///
/// Both ids are trimmed and compared case-insensitively, in this order:
/// 1. a provider containing `anthropic` is [`Dialect::Anthropic`] (even
///    for a Gemini-looking model);
/// 2. a provider containing `google` or `gemini`, or a model id matching
///    `(^|[/:])gemini($|[-/:.])` (such as `google/gemini-2.5-pro` behind a
///    router) is [`Dialect::Gemini`];
/// 3. a provider containing `xai`, `x-ai` or `grok` is [`Dialect::Xai`];
/// 4. `openai`, `azure-openai` and `openai-codex` are [`Dialect::OpenAi`]
///    (never [`Dialect::OpenAiStrict`]: strict mode is the caller's
///    choice);
/// 5. anything else is [`Dialect::Permissive`].
///
/// ```
/// use talon_schema_dialects::{Dialect, dialect_for};
///
/// assert_eq!(dialect_for("openrouter", Some("google/gemini-2.5-pro")), Dialect::Gemini);
/// assert_eq!(dialect_for(" OpenAI ", None), Dialect::OpenAi);
/// assert_eq!(dialect_for("ollama", Some("gemini2")), Dialect::Permissive);
/// ```
pub fn dialect_for(provider: &str, model: Option<&str>) -> Dialect {
    let provider = provider.trim().to_ascii_lowercase();
    let model = model
        .map(|m| m.trim().to_ascii_lowercase())
        .unwrap_or_default();
    if provider.contains("anthropic") {
        return Dialect::Anthropic;
    }
    if provider.contains("google") || provider.contains("gemini") || is_gemini_model(&model) {
        return Dialect::Gemini;
    }
    if ["xai", "x-ai", "grok"].iter().any(|n| provider.contains(n)) {
        return Dialect::Xai;
    }
    if ["openai", "azure-openai", "openai-codex"].contains(&provider.as_str()) {
        return Dialect::OpenAi;
    }
    Dialect::Permissive
}

/// Hand-written `(^|[/:])gemini($|[-/:.])` over an already-lowercased id.
fn is_gemini_model(model: &str) -> bool {
    const NEEDLE: &str = "gemini";
    let bytes = model.as_bytes();
    model.match_indices(NEEDLE).any(|(start, _)| {
        let before_ok = start == 0 || matches!(bytes[start - 1], b'/' | b':');
        let end = start + NEEDLE.len();
        let after_ok = end == bytes.len() || matches!(bytes[end], b'-' | b'/' | b':' | b'.');
        before_ok && after_ok
    })
}

#[cfg(test)]
#[path = "dialect_tests.rs"]
mod tests;
