//! A bounded output buffer that keeps the head and the tail of a stream
//! and counts what it dropped in between.

use std::collections::VecDeque;

/// Keeps the first `head_cap` bytes and the last `tail_cap` bytes written.
#[derive(Debug, Clone)]
pub(crate) struct OutputBuffer {
    head_cap: usize,
    tail_cap: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

/// A slice read from the buffer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct OutputSlice {
    /// The retained bytes before the gap (empty when there is no gap).
    pub(crate) before: Vec<u8>,
    /// Bytes dropped between `before` and `after` (0: no gap).
    pub(crate) omitted: u64,
    /// The retained bytes after the gap (everything when there is none).
    pub(crate) after: Vec<u8>,
}

impl OutputSlice {
    /// Whether the slice holds no bytes and no gap.
    pub(crate) fn is_empty(&self) -> bool {
        self.before.is_empty() && self.after.is_empty() && self.omitted == 0
    }

    /// The slice as display text: lossy UTF-8 with control characters made
    /// visible, and a marker line where bytes were omitted.
    pub(crate) fn render(&self) -> String {
        let mut out = render_visible(&self.before);
        if self.omitted > 0 {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&format!("[... {} bytes omitted ...]\n", self.omitted));
        }
        out.push_str(&render_visible(&self.after));
        out
    }
}

impl OutputBuffer {
    /// A buffer keeping at most `cap` bytes (half head, half tail).
    pub(crate) fn new(cap: usize) -> Self {
        let head_cap = cap / 2;
        OutputBuffer {
            head_cap,
            tail_cap: cap - head_cap,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
        }
    }

    /// Appends bytes, dropping the middle once the cap is reached.
    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.head.len() < self.head_cap {
            let take = (self.head_cap - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.len() >= self.tail_cap {
            self.tail.clear();
            self.tail
                .extend(bytes[bytes.len() - self.tail_cap..].iter().copied());
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
        self.tail.drain(..overflow);
        self.tail.extend(bytes.iter().copied());
    }

    /// Every byte ever written.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// Bytes dropped from the middle so far.
    pub(crate) fn omitted(&self) -> u64 {
        self.total - self.head.len() as u64 - self.tail.len() as u64
    }

    /// What is retained from stream position `from` on.
    pub(crate) fn read_from(&self, from: u64) -> OutputSlice {
        let head_len = self.head.len() as u64;
        let tail_start = self.total - self.tail.len() as u64;
        let mut slice = OutputSlice::default();
        let mut pos = from.min(self.total);
        if pos < head_len {
            let before = self.head[pos as usize..].to_vec();
            pos = head_len;
            if tail_start > head_len {
                slice.before = before;
            } else {
                slice.after = before;
            }
        }
        if pos < tail_start {
            slice.omitted = tail_start - pos;
            pos = tail_start;
        }
        let skip = (pos - tail_start) as usize;
        slice.after.extend(self.tail.iter().skip(skip).copied());
        slice
    }

    /// Everything retained.
    pub(crate) fn all(&self) -> OutputSlice {
        self.read_from(0)
    }

    /// At most the last `max` retained bytes, without a gap marker (a
    /// short "what it printed last" view).
    pub(crate) fn tail(&self, max: usize) -> OutputSlice {
        let slice = self.read_from(self.total.saturating_sub(max as u64));
        if slice.omitted > 0 {
            return OutputSlice {
                after: slice.after,
                ..OutputSlice::default()
            };
        }
        slice
    }
}

/// Lossy UTF-8 with control characters made visible: C0 controls other
/// than tab, newline and carriage return, DEL, C1 controls and the bidi
/// override and isolate characters become `\u{..}` escapes, so terminal
/// escapes and direction tricks in output cannot hide text from a reader.
pub(crate) fn render_visible(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    if !text.chars().any(needs_escape) {
        return text.into_owned();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if needs_escape(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

fn needs_escape(c: char) -> bool {
    match c {
        '\t' | '\n' | '\r' => false,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' => true,
        _ => false,
    }
}

#[cfg(test)]
#[path = "output_tests.rs"]
mod tests;
