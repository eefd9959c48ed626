//! Turning a fetched body into text the model can read: HTML → Markdown
//! (main content preferred), JSON pretty-printed, text as is.

use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use htmd::element_handler::{HandlerResult, Handlers};
use htmd::{Element, HtmlToMarkdown};
use regex::Regex;

/// What kind of body a response is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyKind {
    Html,
    Json,
    Text,
}

/// A media type `web_fetch` does not read (the type, or what sniffing
/// found).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct UnsupportedMedia(pub(crate) String);

impl BodyKind {
    /// From the `Content-Type` (its media type), sniffing when absent.
    /// `Err` carries the refused media type.
    pub(crate) fn detect(
        content_type: Option<&str>,
        body: &[u8],
    ) -> Result<Self, UnsupportedMedia> {
        let media = content_type
            .map(|ct| {
                ct.split(';')
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_ascii_lowercase()
            })
            .filter(|m| !m.is_empty());
        match media.as_deref() {
            Some("text/html" | "application/xhtml+xml") => Ok(BodyKind::Html),
            Some(m) if m == "application/json" || m.ends_with("+json") => Ok(BodyKind::Json),
            Some(m)
                if m.starts_with("text/")
                    || matches!(
                        m,
                        "application/xml" | "application/javascript" | "application/x-ndjson"
                    )
                    || m.ends_with("+xml") =>
            {
                Ok(BodyKind::Text)
            }
            Some(m) => Err(UnsupportedMedia(m.to_owned())),
            None => {
                let head = String::from_utf8_lossy(&body[..body.len().min(1024)]).to_lowercase();
                if std::str::from_utf8(body).is_err() && body.contains(&0) {
                    Err(UnsupportedMedia(
                        "application/octet-stream (sniffed)".to_owned(),
                    ))
                } else if head.contains("<html") || head.contains("<!doctype html") {
                    Ok(BodyKind::Html)
                } else {
                    Ok(BodyKind::Text)
                }
            }
        }
    }
}

static META_CHARSET_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"(?i)<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)"#).ok());

/// Decode a body: a byte-order mark wins, then the `charset` of the
/// `Content-Type`, then (HTML) a `<meta charset>` in the first 2 KiB, then
/// UTF-8. Undecodable bytes become U+FFFD.
pub(crate) fn decode_body(content_type: Option<&str>, body: &[u8]) -> String {
    let from_header = content_type.and_then(|ct| {
        ct.split(';').skip(1).find_map(|param| {
            let (k, v) = param.split_once('=')?;
            k.trim()
                .eq_ignore_ascii_case("charset")
                .then(|| v.trim().trim_matches(['"', '\'']).to_owned())
        })
    });
    let label = from_header.or_else(|| {
        let head: String = body[..body.len().min(2048)]
            .iter()
            .map(|&b| char::from(b))
            .collect();
        META_CHARSET_RE
            .as_ref()
            .and_then(|re| re.captures(&head))
            .and_then(|c| c.get(1))
            .map(|m| m.as_str().to_owned())
    });
    let encoding = label
        .and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(body);
    text.into_owned()
}

/// Tags never worth reading.
const SKIPPED_TAGS: &[&str] = &[
    "script", "style", "noscript", "nav", "footer", "aside", "iframe", "svg", "template", "button",
    "select", "head", "title",
];

/// The converted page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Extracted {
    pub(crate) title: Option<String>,
    pub(crate) markdown: String,
    /// `main`, `article` or `body`.
    pub(crate) extractor: &'static str,
}

static TITLE_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?is)<title[^>]*>(.*?)</title>").ok());
static BLANK_LINES_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\n[ \t]*\n(?:[ \t]*\n)+").ok());

/// HTML → Markdown. With `readability`, the first `<main>`, else the
/// longest `<article>`, else the body; navigation, scripts, styles,
/// footers and asides are dropped either way. Links are kept.
pub(crate) fn html_to_markdown(html: &str, readability: bool) -> Extracted {
    let captured: Arc<Mutex<Vec<(&'static str, String)>>> = Arc::default();
    let mut builder = HtmlToMarkdown::builder().skip_tags(SKIPPED_TAGS.to_vec());
    if readability {
        for tag in ["main", "article"] {
            let sink = Arc::clone(&captured);
            let label: &'static str = tag;
            builder = builder.add_handler(
                vec![tag],
                move |handlers: &dyn Handlers, element: Element<'_>| -> Option<HandlerResult> {
                    let inner = handlers.walk_children(element.node);
                    sink.lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push((label, inner.content.trim().to_owned()));
                    Some(inner)
                },
            );
        }
    }
    let converter = builder.build();
    let full = converter.convert(html).unwrap_or_default();
    let captured = std::mem::take(&mut *captured.lock().unwrap_or_else(PoisonError::into_inner));
    let main = captured
        .iter()
        .find(|(tag, text)| *tag == "main" && !text.is_empty());
    let article = captured
        .iter()
        .filter(|(tag, text)| *tag == "article" && !text.is_empty())
        .max_by_key(|(_, text)| text.len());
    let (extractor, markdown) = match (main, article) {
        (Some((_, text)), _) => ("main", text.clone()),
        (None, Some((_, text))) => ("article", text.clone()),
        (None, None) => ("body", full),
    };
    let title = TITLE_RE
        .as_ref()
        .and_then(|re| re.captures(html))
        .and_then(|c| c.get(1))
        .map(|m| decode_entities(m.as_str().split_whitespace().collect::<Vec<_>>().join(" ")))
        .filter(|t| !t.is_empty());
    Extracted {
        title,
        markdown: collapse_blank_lines(&markdown),
        extractor,
    }
}

fn decode_entities(s: String) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&")
}

fn collapse_blank_lines(s: &str) -> String {
    match BLANK_LINES_RE.as_ref() {
        Some(re) => re.replace_all(s.trim(), "\n\n").into_owned(),
        None => s.trim().to_owned(),
    }
}

static IMAGE_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"!\[([^\]]*)\]\([^)]*\)").ok());
static LINK_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\[([^\]]*)\]\([^)]*\)").ok());
static HEADING_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?m)^\s{0,3}#{1,6}\s+").ok());
static EMPHASIS_RE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"(\*\*|__|~~|`)").ok());

/// Markdown → plain text: images become their alt text, links their text,
/// heading marks and emphasis go.
pub(crate) fn markdown_to_text(md: &str) -> String {
    let mut out = md.to_owned();
    for re in [&IMAGE_RE, &LINK_RE].into_iter().flat_map(|r| r.as_ref()) {
        out = re.replace_all(&out, "$1").into_owned();
    }
    for re in [&HEADING_RE, &EMPHASIS_RE]
        .into_iter()
        .flat_map(|r| r.as_ref())
    {
        out = re.replace_all(&out, "").into_owned();
    }
    collapse_blank_lines(&out)
}

/// JSON pretty-printed, or the text as is when it does not parse.
pub(crate) fn pretty_json(text: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) => serde_json::to_string_pretty(&v).unwrap_or_else(|_| text.to_owned()),
        Err(_) => text.to_owned(),
    }
}

/// At most `max_chars` characters; `true` when something was cut.
pub(crate) fn truncate_chars(text: &str, max_chars: usize) -> (String, bool) {
    match text.char_indices().nth(max_chars) {
        Some((byte, _)) => (text[..byte].to_owned(), true),
        None => (text.to_owned(), false),
    }
}

#[cfg(test)]
#[path = "extract_tests.rs"]
mod tests;
