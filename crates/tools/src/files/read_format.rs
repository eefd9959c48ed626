//! Pure logic of `read`: what kind of bytes a file holds, and which lines
//! of a text file to show within the caps, with the note that says what
//! was cut and how to read on.

use std::fmt::Write as _;

/// How much of a file's start is examined for NUL bytes and invalid UTF-8.
pub(crate) const SNIFF_BYTES: usize = 8 * 1024;

/// The caps of the `read` tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    /// Most lines one call returns (default 2000).
    pub max_lines: usize,
    /// Most bytes of text one call returns (default 50 KiB).
    pub max_bytes: usize,
    /// Most bytes of a text file read looks at (default 16 MiB); lines past
    /// it are not reachable with `read`, and the note says so.
    pub max_scan_bytes: u64,
    /// Largest image returned as an image (default 3.75 MiB, which is 5 MiB
    /// once base64-encoded); larger ones are refused.
    pub max_image_bytes: u64,
}

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits {
            max_lines: 2000,
            max_bytes: 50 * 1024,
            max_scan_bytes: 16 * 1024 * 1024,
            max_image_bytes: 3 * 1024 * 1024 + 768 * 1024,
        }
    }
}

/// An image format `read` returns as image content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ImageKind {
    Png,
    Jpeg,
    Gif,
    WebP,
}

impl ImageKind {
    /// The MIME type.
    pub(crate) fn mime_type(self) -> &'static str {
        match self {
            ImageKind::Png => "image/png",
            ImageKind::Jpeg => "image/jpeg",
            ImageKind::Gif => "image/gif",
            ImageKind::WebP => "image/webp",
        }
    }
}

/// The image format of `bytes`, by its magic bytes (not by the file name).
pub(crate) fn sniff_image(bytes: &[u8]) -> Option<ImageKind> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(ImageKind::Png)
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(ImageKind::Jpeg)
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some(ImageKind::Gif)
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some(ImageKind::WebP)
    } else {
        None
    }
}

/// Why the start of `bytes` does not look like text: a NUL byte, or a
/// byte sequence that is not UTF-8 within the first [`SNIFF_BYTES`]. A
/// character cut by the window's end is not held against the file.
pub(crate) fn binary_reason(bytes: &[u8]) -> Option<String> {
    let window = &bytes[..bytes.len().min(SNIFF_BYTES)];
    if let Some(at) = window.iter().position(|b| *b == 0) {
        return Some(format!("it contains a NUL byte at offset {at}"));
    }
    match std::str::from_utf8(window) {
        Ok(_) => None,
        Err(e) if e.error_len().is_none() => None,
        Err(e) => Some(format!(
            "it is not UTF-8 text (invalid byte sequence at offset {})",
            e.valid_up_to()
        )),
    }
}

/// Why a page stops before the end of the (scanned) text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// The caller's `limit` was reached.
    Limit,
    /// The line cap was reached.
    MaxLines,
    /// The byte cap was reached.
    MaxBytes,
    /// The first line of the page alone is longer than the byte cap; only
    /// its start is shown.
    LongLine {
        /// The line's length in bytes.
        len: usize,
        /// How many of its bytes are shown.
        shown: usize,
    },
}

impl Cut {
    /// The name used in `details.truncatedBy`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Cut::Limit => "limit",
            Cut::MaxLines => "lines",
            Cut::MaxBytes => "bytes",
            Cut::LongLine { .. } => "longLine",
        }
    }
}

/// The lines of a text shown by one `read` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Page<'a> {
    /// The shown text: a slice of the file, without its final line break.
    pub(crate) text: &'a str,
    /// The first line shown (1-based).
    pub(crate) start_line: usize,
    /// The last line shown (1-based, inclusive).
    pub(crate) end_line: usize,
    /// Lines in the (scanned) text.
    pub(crate) total_lines: usize,
    /// Why the page stops early, if it does.
    pub(crate) cut: Option<Cut>,
}

impl Page<'_> {
    /// The `offset` that continues after this page, when lines remain.
    pub(crate) fn next_offset(&self) -> Option<usize> {
        match self.cut {
            Some(_) if self.end_line < self.total_lines => Some(self.end_line + 1),
            _ => None,
        }
    }
}

/// A requested window that does not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OffsetPastEnd {
    /// The requested offset.
    pub(crate) offset: usize,
    /// Lines in the (scanned) text.
    pub(crate) total_lines: usize,
}

/// Byte ranges of the lines of `text`: each ends after its `\n`; a final
/// `\n` does not start another line.
fn line_ranges(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= text.len() {
            return None;
        }
        let end = match text[start..].find('\n') {
            Some(i) => start + i + 1,
            None => text.len(),
        };
        let range = (start, end);
        start = end;
        Some(range)
    })
}

/// The lines to show from `offset` (1-based, default 1) for at most
/// `limit` lines, within the line and byte caps.
pub(crate) fn page<'a>(
    text: &'a str,
    offset: Option<usize>,
    limit: Option<usize>,
    limits: &ReadLimits,
) -> Result<Page<'a>, OffsetPastEnd> {
    let newlines = text.as_bytes().iter().filter(|b| **b == b'\n').count();
    let total_lines = newlines + usize::from(!text.is_empty() && !text.ends_with('\n'));
    let start_line = offset.unwrap_or(1).max(1);
    if total_lines == 0 && start_line == 1 {
        return Ok(Page {
            text: "",
            start_line: 1,
            end_line: 0,
            total_lines: 0,
            cut: None,
        });
    }
    if start_line > total_lines {
        return Err(OffsetPastEnd {
            offset: start_line,
            total_lines,
        });
    }
    let max_lines = limits.max_lines.max(1);
    let (want, want_cut) = match limit {
        Some(l) if l < max_lines => (l.max(1), Cut::Limit),
        _ => (max_lines, Cut::MaxLines),
    };
    let mut ranges = line_ranges(text).skip(start_line - 1);
    let Some((first_start, first_end)) = ranges.next() else {
        return Err(OffsetPastEnd {
            offset: start_line,
            total_lines,
        });
    };
    let first = strip_line_break(&text[first_start..first_end]);
    if first.len() > limits.max_bytes {
        let shown = super::common::cut_at_char_boundary(first, limits.max_bytes);
        return Ok(Page {
            text: shown,
            start_line,
            end_line: start_line,
            total_lines,
            cut: Some(Cut::LongLine {
                len: first.len(),
                shown: shown.len(),
            }),
        });
    }
    let mut end = first_end;
    let mut count = 1;
    let mut cut = None;
    for (_, e) in ranges {
        if count >= want {
            cut = Some(want_cut);
            break;
        }
        if strip_line_break(&text[first_start..e]).len() > limits.max_bytes {
            cut = Some(Cut::MaxBytes);
            break;
        }
        end = e;
        count += 1;
    }
    Ok(Page {
        text: strip_line_break(&text[first_start..end]),
        start_line,
        end_line: start_line + count - 1,
        total_lines,
        cut,
    })
}

fn strip_line_break(s: &str) -> &str {
    s.strip_suffix("\r\n")
        .or_else(|| s.strip_suffix('\n'))
        .unwrap_or(s)
}

/// What was scanned of a file whose start only was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ScanCut {
    /// The file's whole size.
    pub(crate) total_size: u64,
    /// The bytes looked at (whole lines only).
    pub(crate) scanned: usize,
}

/// The text the model sees: the page, then a bracketed note when anything
/// was cut, saying what and how to read on.
pub(crate) fn render(page: &Page<'_>, limits: &ReadLimits, scan: Option<ScanCut>) -> String {
    let mut out = String::with_capacity(page.text.len() + 160);
    if page.total_lines == 0 && scan.is_none() {
        out.push_str("[The file is empty.]");
        return out;
    }
    out.push_str(page.text);
    let mut note = String::new();
    let (s, e, total) = (page.start_line, page.end_line, page.total_lines);
    let of_total = if scan.is_some() {
        format!("{total}+")
    } else {
        total.to_string()
    };
    match (page.cut, page.next_offset()) {
        (Some(Cut::LongLine { len, shown }), next) => {
            let _ = write!(
                note,
                "[Line {s} is {len} bytes, longer than the {} byte cap; showing its first {shown} bytes. Read the rest of that line with exec (e.g. cut or head -c)",
                limits.max_bytes
            );
            match next {
                Some(n) => {
                    let _ = write!(note, ", or use offset={n} to go on.]");
                }
                None => note.push_str(".]"),
            }
        }
        (Some(Cut::Limit), Some(n)) => {
            let more = total - e;
            let _ = write!(
                note,
                "[{more}{} more lines in the file. Use offset={n} to continue.]",
                if scan.is_some() { "+" } else { "" }
            );
        }
        (Some(Cut::MaxLines), Some(n)) => {
            let _ = write!(
                note,
                "[Showing lines {s}-{e} of {of_total} ({} line cap). Use offset={n} to continue.]",
                limits.max_lines
            );
        }
        (Some(Cut::MaxBytes), Some(n)) => {
            let _ = write!(
                note,
                "[Showing lines {s}-{e} of {of_total} ({} byte cap). Use offset={n} to continue.]",
                limits.max_bytes
            );
        }
        _ => {}
    }
    if let Some(scan) = scan
        && page.next_offset().is_none()
    {
        if !note.is_empty() {
            note.push(' ');
        }
        let _ = write!(
            note,
            "[The file is {} bytes; read looks at its first {} bytes only (lines 1-{total}). Use exec (e.g. sed -n or tail) for the lines after {total}.]",
            scan.total_size, scan.scanned
        );
    }
    if !note.is_empty() {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(&note);
    }
    out
}

#[cfg(test)]
#[path = "read_format_tests.rs"]
mod tests;
