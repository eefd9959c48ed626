//! The `pdf` tool: text (`pdftotext`, page ranges, layout) and page
//! images (`pdftoppm -png`) of a PDF read through the run's file bridge.
//! The bytes are copied into a private temp directory and poppler runs
//! there under the engine limits; nothing is written to the workspace.

use std::sync::Arc;

use base64::Engine as _;
use serde_json::{Value, json};
use talon_fs_bridge::FsBridge;
use talon_tool_catalog::params::{
    NumberOpts, StringOpts, read_bool, read_number, read_string, refuse_unknown_keys,
};
use talon_tool_catalog::{
    CancelExt, CancellationToken, ContentBlock, Section, Tool, ToolCall, ToolContext, ToolError,
    ToolFamily, ToolResult, ToolSpec,
};

use crate::engine::{EngineRunner, exit_text, first_line};
use crate::error::{Error, Result};

const POPPLER: &str = "poppler-utils";

/// Size limits of the `pdf` tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PdfLimits {
    /// Largest PDF read, in bytes.
    pub max_bytes: u64,
    /// Most pages whose text one call returns.
    pub max_text_pages: u32,
    /// Most characters of text one call returns (the rest is cut, and
    /// the result says so).
    pub max_chars: usize,
    /// Most pages rendered to PNG in one call.
    pub max_image_pages: u32,
    /// Highest rendering resolution, in DPI.
    pub max_dpi: u32,
}

impl Default for PdfLimits {
    fn default() -> Self {
        PdfLimits {
            max_bytes: 20 * 1024 * 1024,
            max_text_pages: 200,
            max_chars: 200_000,
            max_image_pages: 5,
            max_dpi: 200,
        }
    }
}

/// The spec of `pdf`.
pub fn pdf_spec() -> ToolSpec {
    ToolSpec::new(
        "pdf",
        ToolFamily::Core {
            section: Section::Media,
        },
    )
    .with_label("PDF")
    .with_description(
        "Extract text from a PDF in the workspace, or render its pages to PNG images; use pages to pick a range.",
    )
    .with_parameters(json!({
        "type": "object",
        "properties": {
            "pdf": {"type": "string", "description": "Workspace path of the PDF."},
            "pages": {"type": "string", "description": "Pages to read: `3`, `2-5` or `4-` (1-based; default all, within the page limit)."},
            "mode": {"type": "string", "enum": ["text", "images", "both"], "description": "What to return: the text (default), page images, or both."},
            "layout": {"type": "boolean", "description": "Keep the physical layout of the text (columns, tables)."},
            "resolution": {"type": "integer", "minimum": 36, "description": "Page image resolution in DPI (default 100, capped)."},
            "maxChars": {"type": "integer", "minimum": 1, "description": "Most characters of text to return."}
        },
        "required": ["pdf"],
        "additionalProperties": false
    }))
}

/// What a parsed `pages` argument asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRange {
    /// First page (1-based).
    pub first: u32,
    /// Last page, when bounded.
    pub last: Option<u32>,
}

impl PageRange {
    /// Parse `3`, `2-5`, `4-`; `None` for anything else.
    pub fn parse(s: &str) -> Option<PageRange> {
        let s = s.trim();
        let num = |t: &str| t.trim().parse::<u32>().ok().filter(|n| *n > 0);
        match s.split_once('-') {
            None => num(s).map(|n| PageRange {
                first: n,
                last: Some(n),
            }),
            Some((a, b)) if b.trim().is_empty() => {
                num(a).map(|first| PageRange { first, last: None })
            }
            Some((a, b)) => {
                let (first, last) = (num(a)?, num(b)?);
                (first <= last).then_some(PageRange {
                    first,
                    last: Some(last),
                })
            }
        }
    }
}

/// The `pdf` tool over a bridge.
#[derive(Debug, Clone)]
pub struct PdfTool {
    spec: ToolSpec,
    bridge: Arc<dyn FsBridge>,
    runner: EngineRunner,
    limits: PdfLimits,
}

/// A PDF's facts from `pdfinfo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PdfInfo {
    pages: u32,
}

impl PdfTool {
    /// The tool reading through `bridge`, running poppler with `runner`.
    pub fn new(bridge: Arc<dyn FsBridge>, runner: EngineRunner, limits: PdfLimits) -> Self {
        PdfTool {
            spec: pdf_spec(),
            bridge,
            runner,
            limits,
        }
    }

    async fn info(
        &self,
        path: &str,
        dir: &std::path::Path,
        encrypted: bool,
        abort: &CancellationToken,
    ) -> Result<PdfInfo> {
        let out = self
            .runner
            .run_isolated(
                "pdfinfo",
                POPPLER,
                &["in.pdf".to_owned()],
                dir,
                Vec::new(),
                abort,
            )
            .await?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        // Killed by a signal (an allocation failure under the memory limit
        // aborts), or not started at all (127: the loader could not map
        // the engine under its limits): the engine's limits, not the
        // file's fault as far as anyone can tell.
        let starved = out.code.is_none() || out.code == Some(127);
        if out.code != Some(0) && starved {
            return Err(Error::EngineFailed {
                program: "pdfinfo".to_owned(),
                message: format!(
                    "{} (the engine hit its memory or CPU limit, or could not start)",
                    exit_text(&out)
                ),
            });
        }
        if out.code != Some(0) {
            // Whether the file is encrypted is read from the file (its
            // trailer's `/Encrypt` entry), not from the engine's message.
            let reason = if encrypted {
                "the PDF is encrypted and needs a password; decrypt it first (e.g. `qpdf --decrypt`)".to_owned()
            } else {
                format!(
                    "not a readable PDF (malformed or truncated): {}",
                    first_line(&out.stderr)
                )
            };
            return Err(Error::Invalid {
                path: path.to_owned(),
                reason,
            });
        }
        let pages = stdout
            .lines()
            .find_map(|l| l.strip_prefix("Pages:"))
            .and_then(|v| v.trim().parse::<u32>().ok())
            .ok_or_else(|| Error::Invalid {
                path: path.to_owned(),
                reason: "not a readable PDF: poppler found no page count".to_owned(),
            })?;
        if pages == 0 {
            return Err(Error::Invalid {
                path: path.to_owned(),
                reason: "the PDF has no pages".to_owned(),
            });
        }
        Ok(PdfInfo { pages })
    }

    async fn text(
        &self,
        dir: &std::path::Path,
        first: u32,
        last: u32,
        layout: bool,
        abort: &CancellationToken,
    ) -> Result<Vec<String>> {
        let mut args = vec![
            "-f".to_owned(),
            first.to_string(),
            "-l".to_owned(),
            last.to_string(),
            "-enc".to_owned(),
            "UTF-8".to_owned(),
        ];
        if layout {
            args.push("-layout".to_owned());
        }
        args.extend(["in.pdf".to_owned(), "-".to_owned()]);
        let out = self
            .runner
            .run_isolated("pdftotext", POPPLER, &args, dir, Vec::new(), abort)
            .await?;
        if out.code != Some(0) {
            return Err(Error::EngineFailed {
                program: "pdftotext".to_owned(),
                message: exit_text(&out),
            });
        }
        let text = String::from_utf8_lossy(&out.stdout);
        // pdftotext ends every page with a form feed.
        let mut pages: Vec<String> = text.split('\u{c}').map(str::to_owned).collect();
        if pages.last().is_some_and(|p| p.trim().is_empty()) {
            pages.pop();
        }
        Ok(pages)
    }

    async fn images(
        &self,
        dir: &std::path::Path,
        first: u32,
        last: u32,
        dpi: u32,
        abort: &CancellationToken,
    ) -> Result<Vec<(u32, Vec<u8>)>> {
        let args: Vec<String> = [
            "-f",
            &first.to_string(),
            "-l",
            &last.to_string(),
            "-r",
            &dpi.to_string(),
            "-png",
            "in.pdf",
            "page",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let out = self
            .runner
            .run_isolated("pdftoppm", POPPLER, &args, dir, Vec::new(), abort)
            .await?;
        if out.code != Some(0) {
            return Err(Error::EngineFailed {
                program: "pdftoppm".to_owned(),
                message: exit_text(&out),
            });
        }
        let mut files: Vec<(u32, std::path::PathBuf)> = std::fs::read_dir(dir)
            .map_err(|e| Error::Io(e.to_string()))?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter_map(|p| {
                let name = p.file_name()?.to_str()?.to_owned();
                let n = name
                    .strip_prefix("page-")?
                    .strip_suffix(".png")?
                    .parse()
                    .ok()?;
                Some((n, p))
            })
            .collect();
        files.sort();
        let mut pages = Vec::new();
        for (n, p) in files {
            pages.push((n, std::fs::read(&p).map_err(|e| Error::Io(e.to_string()))?));
        }
        Ok(pages)
    }

    async fn run(
        &self,
        call: &ToolCall,
        abort: &CancellationToken,
    ) -> std::result::Result<ToolResult, ToolError> {
        let p = &call.params;
        refuse_unknown_keys::<&str>(
            "pdf",
            p,
            &["pdf", "pages", "mode", "layout", "resolution", "maxChars"],
            &[],
        )?;
        let path = read_string(p, "pdf", StringOpts::required())?.unwrap_or_default();
        let mode =
            read_string(p, "mode", StringOpts::default())?.unwrap_or_else(|| "text".to_owned());
        let (want_text, want_images) = match mode.as_str() {
            "text" => (true, false),
            "images" => (false, true),
            "both" => (true, true),
            other => {
                return Err(ToolError::input(
                    "mode",
                    format!("mode must be text, images or both, not `{other}`"),
                ));
            }
        };
        let range = match read_string(p, "pages", StringOpts::default())? {
            None => None,
            Some(s) => Some(PageRange::parse(&s).ok_or_else(|| {
                ToolError::input(
                    "pages",
                    format!("pages `{s}` is not a page range; write `3`, `2-5` or `4-` (1-based)"),
                )
            })?),
        };
        let layout = read_bool(p, "layout")?.unwrap_or(false);
        let int = NumberOpts {
            integer: true,
            ..NumberOpts::default()
        };
        let dpi = read_number(p, "resolution", int)?.map_or(100, |n| n.max(36.0) as u32);
        let dpi = dpi.min(self.limits.max_dpi);
        let max_chars = read_number(p, "maxChars", int)?.map_or(self.limits.max_chars, |n| {
            (n.max(1.0) as usize).min(self.limits.max_chars)
        });

        let input = self
            .bridge
            .read(&path, Some(self.limits.max_bytes.saturating_add(1)))
            .await
            .map_err(|e| talon_tools::fs_error("pdf", e))?;
        if input.truncated || input.bytes.len() as u64 > self.limits.max_bytes {
            return Err(Error::TooLarge {
                what: path.clone(),
                actual: input.total_size,
                limit: self.limits.max_bytes,
                hint: "bytes; split the PDF (e.g. `qpdf --split-pages`) and read a part".to_owned(),
            }
            .into_tool_error("pdf"));
        }
        if !input.bytes.starts_with(b"%PDF-") {
            return Err(Error::Invalid {
                path: path.clone(),
                reason: "not a PDF (it does not start with `%PDF-`)".to_owned(),
            }
            .into_tool_error("pdf"));
        }
        let dir = tempfile::Builder::new()
            .prefix("talon-pdf-")
            .tempdir()
            .map_err(|e| Error::Io(e.to_string()).into_tool_error("pdf"))?;
        std::fs::write(dir.path().join("in.pdf"), &input.bytes)
            .map_err(|e| Error::Io(e.to_string()).into_tool_error("pdf"))?;
        abort.check()?;
        let info = self
            .info(&path, dir.path(), declares_encryption(&input.bytes), abort)
            .await
            .map_err(|e| e.into_tool_error("pdf"))?;
        let range = range.unwrap_or(PageRange {
            first: 1,
            last: None,
        });
        if range.first > info.pages {
            return Err(ToolError::input(
                "pages",
                format!(
                    "{path} has {} pages; page {} does not exist",
                    info.pages, range.first
                ),
            ));
        }
        let cap = if want_images {
            self.limits.max_image_pages
        } else {
            self.limits.max_text_pages
        };
        // An explicit range over the cap is refused (even past the end).
        let asked = range.last.map_or(0, |l| l - range.first + 1);
        let last = range.last.unwrap_or(info.pages).min(info.pages);
        if asked > cap {
            return Err(Error::TooLarge {
                what: "the page range".to_owned(),
                actual: u64::from(asked),
                limit: u64::from(cap),
                hint: "pages; ask for a smaller range with `pages`".to_owned(),
            }
            .into_tool_error("pages"));
        }
        // An open range is cut at the cap, and the result says so.
        let last = last.min(range.first + cap - 1);

        let mut content = Vec::new();
        let mut details = json!({
            "pdf": path,
            "pageCount": info.pages,
            "pages": {"from": range.first, "to": last},
            "morePages": last < info.pages,
        });
        if want_text {
            let pages = self
                .text(dir.path(), range.first, last, layout, abort)
                .await
                .map_err(|e| e.into_tool_error("pdf"))?;
            let mut text = String::new();
            for (i, page) in pages.iter().enumerate() {
                text.push_str(&format!("--- page {} ---\n", range.first as usize + i));
                text.push_str(page.trim_end());
                text.push('\n');
            }
            let total_chars = text.chars().count();
            let truncated = total_chars > max_chars;
            if truncated {
                text = text.chars().take(max_chars).collect();
                text.push_str(&format!(
                    "\n[text cut at {max_chars} of {total_chars} characters; read fewer pages]"
                ));
            }
            details["text"] = json!({"chars": total_chars, "truncated": truncated});
            content.push(ContentBlock::Text { text });
        }
        if want_images {
            let images = self
                .images(dir.path(), range.first, last, dpi, abort)
                .await
                .map_err(|e| e.into_tool_error("pdf"))?;
            let mut listed = Vec::new();
            for (page, png) in images {
                listed.push(json!({"page": page, "bytes": png.len(), "mimeType": "image/png"}));
                content.push(ContentBlock::Image {
                    data: base64::engine::general_purpose::STANDARD.encode(&png),
                    mime_type: "image/png".to_owned(),
                });
            }
            details["images"] = Value::Array(listed);
            details["resolution"] = json!(dpi);
        }
        Ok(ToolResult {
            content,
            details,
            status: talon_tool_catalog::ResultStatus::Ok,
        })
    }
}

#[async_trait::async_trait]
impl Tool for PdfTool {
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
        self.run(call, abort).await
    }
}

/// Whether a PDF's bytes declare encryption (an `/Encrypt` entry, which
/// only an encrypted file's trailer carries).
fn declares_encryption(bytes: &[u8]) -> bool {
    const KEY: &[u8] = b"/Encrypt";
    bytes.windows(KEY.len()).any(|w| w == KEY)
}
