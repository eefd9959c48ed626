//! Bounding what a stdio server sends while it is read, before any of it
//! is buffered whole or parsed.
//!
//! [`FrameGuard`] sits between the child's stdout and rmcp's line reader.
//! It scans each line (one JSON-RPC message) as a byte stream and cuts
//! every JSON string value longer than the frame's string budget at a safe
//! point (outside an escape, on a character boundary, never between the
//! two halves of a surrogate pair), appending a marker that says how much
//! was cut. The line stays valid JSON, so a 100 MB text block or a 200 MB
//! base64 image arrives as a cut string that the output cap then reports
//! as truncated (an image cut this way is always over the cap and is
//! omitted, never passed on corrupted). After the line has reached its soft
//! budget every further long string is cut to nothing, and a line whose
//! remaining structure (numbers, brackets, keys) passes the hard budget
//! ends the session with [`FrameError`], recorded so the call in flight
//! fails naming the limit instead of timing out.
//!
//! Memory per session is therefore the hard budget plus a read buffer,
//! whatever the server sends.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// Longest string kept once a line has passed its soft budget (enough for
/// JSON-RPC keys, content types, MIME types and short ids).
const SHORT_STRING: usize = 64;

/// The marker appended to a cut string: `…[<n> more bytes cut by talon]`.
const MARKER_START: &str = "…[";
const MARKER_END: &str = " more bytes cut by talon]";

/// For a string the guard cut: the bytes kept and the bytes dropped (read
/// back from the guard's own marker, so the output cap can report the size
/// the server sent).
pub(crate) fn cut_sizes(s: &str) -> Option<(usize, usize)> {
    let rest = s.strip_suffix(MARKER_END)?;
    let start = rest.rfind(MARKER_START)?;
    let dropped: usize = rest[start + MARKER_START.len()..].parse().ok()?;
    Some((start, dropped))
}

/// Bytes read from the server per poll.
const CHUNK: usize = 16 * 1024;

/// The budgets of one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FrameLimits {
    /// Longest JSON string value passed on whole.
    pub(crate) max_string: usize,
    /// Once a line is this long, longer strings are cut to
    /// [`SHORT_STRING`] bytes.
    pub(crate) soft_line: usize,
    /// A line longer than this (after cutting) ends the session.
    pub(crate) hard_line: usize,
}

impl FrameLimits {
    /// The budgets for a server whose results are capped at `cap` bytes:
    /// a string one byte over the cap (so a cut string is always reported
    /// as truncated), a soft line budget of two caps plus 256 KiB, and a
    /// hard one 4 MiB above that.
    pub(crate) fn for_output_cap(cap: usize) -> Self {
        let max_string = cap.saturating_add(1);
        let soft_line = cap.saturating_mul(2).saturating_add(256 * 1024);
        FrameLimits {
            max_string,
            soft_line,
            hard_line: soft_line.saturating_add(4 * 1024 * 1024),
        }
    }
}

/// Why a server's session was ended by the guard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "a message from the server passed {limit} bytes after its long strings were cut (its structure alone is too large); the session was closed"
)]
pub(crate) struct FrameError {
    /// The hard line budget.
    pub(crate) limit: usize,
}

/// Where the guard records the reason it ended a session (read by the
/// server when the transport closes under a call).
pub(crate) type FrameVerdict = Arc<Mutex<Option<FrameError>>>;

#[derive(Debug, Default)]
struct Scan {
    /// Bytes of the current line passed on.
    line: usize,
    in_string: bool,
    /// Bytes of the current string passed on.
    string_len: usize,
    /// Whether the rest of the current string is being dropped.
    cutting: bool,
    /// Bytes of the current string dropped.
    dropped: usize,
    /// The byte after a backslash is pending.
    escape: bool,
    /// Hex digits of a `\u` escape still to come.
    hex_left: u8,
    /// The hex digits of the current `\u` escape.
    hex: u16,
    /// The last thing passed on was a high-surrogate `\u` escape (its low
    /// half must follow it).
    after_high_surrogate: bool,
}

/// An `AsyncRead` over a stdio server's stdout that enforces
/// [`FrameLimits`] on every line (see the module docs).
pub(crate) struct FrameGuard<R> {
    inner: R,
    limits: FrameLimits,
    scan: Scan,
    out: Vec<u8>,
    out_pos: usize,
    chunk: Box<[u8]>,
    verdict: FrameVerdict,
    failed: bool,
}

impl<R> FrameGuard<R> {
    pub(crate) fn new(inner: R, limits: FrameLimits, verdict: FrameVerdict) -> Self {
        FrameGuard {
            inner,
            limits,
            scan: Scan::default(),
            out: Vec::with_capacity(CHUNK),
            out_pos: 0,
            chunk: vec![0u8; CHUNK].into_boxed_slice(),
            verdict,
            failed: false,
        }
    }

    fn string_budget(&self) -> usize {
        if self.scan.line >= self.limits.soft_line {
            SHORT_STRING.min(self.limits.max_string)
        } else {
            self.limits.max_string
        }
    }

    fn emit(&mut self, b: u8) {
        self.out.push(b);
        self.scan.line += 1;
    }

    /// Scan `input` into `self.out`; `Err` when the line passed the hard
    /// budget.
    fn process(&mut self, input: &[u8]) -> Result<(), FrameError> {
        for &b in input {
            // A newline ends the message whatever came before it: JSON has
            // no raw newline inside a string, and the stdio transport
            // frames by line, so an unterminated (cut) string in a broken
            // line never swallows the next message.
            if b == b'\n' {
                self.out.push(b);
                self.scan = Scan::default();
                continue;
            }
            if !self.scan.in_string {
                if b == b'"' {
                    self.scan.in_string = true;
                    self.scan.string_len = 0;
                    self.scan.cutting = false;
                    self.scan.dropped = 0;
                }
                self.emit(b);
            } else if self.scan.escape {
                self.scan.escape = false;
                if b == b'u' {
                    self.scan.hex_left = 4;
                    self.scan.hex = 0;
                }
                self.pass_string_byte(b);
            } else if self.scan.hex_left > 0 {
                self.scan.hex_left -= 1;
                let digit = char::from(b).to_digit(16).unwrap_or(0);
                self.scan.hex = (self.scan.hex << 4) | u16::try_from(digit).unwrap_or(0);
                self.pass_string_byte(b);
                if self.scan.hex_left == 0 && !self.scan.cutting {
                    self.scan.after_high_surrogate = (0xD800..0xDC00).contains(&self.scan.hex);
                }
            } else if b == b'"' {
                if self.scan.cutting {
                    let marker = format!("{MARKER_START}{}{MARKER_END}", self.scan.dropped);
                    for m in marker.into_bytes() {
                        self.emit(m);
                    }
                }
                self.scan.in_string = false;
                self.emit(b);
            } else {
                if !self.scan.cutting
                    && self.scan.string_len >= self.string_budget()
                    && (b & 0xC0) != 0x80
                    && !self.scan.after_high_surrogate
                {
                    self.scan.cutting = true;
                }
                if b == b'\\' {
                    self.scan.escape = true;
                }
                if !self.scan.cutting {
                    self.scan.after_high_surrogate = false;
                }
                self.pass_string_byte(b);
            }
            if self.scan.line > self.limits.hard_line {
                return Err(FrameError {
                    limit: self.limits.hard_line,
                });
            }
        }
        Ok(())
    }

    fn pass_string_byte(&mut self, b: u8) {
        if self.scan.cutting {
            self.scan.dropped += 1;
        } else {
            self.scan.string_len += 1;
            self.emit(b);
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for FrameGuard<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.out_pos < this.out.len() {
                let n = (this.out.len() - this.out_pos).min(buf.remaining());
                buf.put_slice(&this.out[this.out_pos..this.out_pos + n]);
                this.out_pos += n;
                if this.out_pos == this.out.len() {
                    this.out.clear();
                    this.out_pos = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.failed {
                return Poll::Ready(Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "mcp frame limit exceeded",
                )));
            }
            let mut chunk = ReadBuf::new(&mut this.chunk);
            match Pin::new(&mut this.inner).poll_read(cx, &mut chunk) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) => {}
            }
            let filled = chunk.filled().len();
            if filled == 0 {
                return Poll::Ready(Ok(()));
            }
            let input = std::mem::take(&mut this.chunk);
            let processed = this.process(&input[..filled]);
            this.chunk = input;
            if let Err(e) = processed {
                tracing::warn!(target: "talon::mcp", limit = e.limit, "mcp server sent an oversized message; closing its session");
                match this.verdict.lock() {
                    Ok(mut v) => *v = Some(e),
                    Err(p) => *p.into_inner() = Some(e),
                }
                // Drop the partial line: rmcp never sees a newline for it.
                this.out.clear();
                this.out_pos = 0;
                this.failed = true;
            }
        }
    }
}

#[cfg(test)]
#[path = "frame_tests.rs"]
mod tests;
