//! Markdown into chunks: a heading starts a chunk, blank lines separate
//! paragraphs, and a section longer than the chunk size is split at
//! paragraph ends, then at line ends. Every chunk keeps the 1-based,
//! inclusive line range it came from, so a hit points into the file.

/// One piece of a memory file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// First line (1-based).
    pub start_line: u32,
    /// Last line (1-based, inclusive).
    pub end_line: u32,
    /// The nearest heading above or at the chunk (without `#`s), indexed
    /// with a lower weight than the text.
    pub heading: String,
    /// The chunk's lines, joined with `\n`.
    pub text: String,
}

/// A heading line's text (`## Title` → `Title`), outside code fences.
fn heading_text(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let hashes = trimmed.bytes().take_while(|b| *b == b'#').count();
    if hashes == 0 || hashes > 6 {
        return None;
    }
    let rest = &trimmed[hashes..];
    if rest.is_empty() {
        return Some("");
    }
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    Some(rest.trim().trim_end_matches('#').trim())
}

fn is_fence(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

/// A block of consecutive lines that belong together: a paragraph, or a
/// whole fenced code block.
struct Block {
    start: usize,
    end: usize,
    bytes: usize,
}

/// Split `text` into chunks of at most about `max_bytes` bytes (a single
/// line longer than that is cut on character boundaries, each piece keeping
/// the line's number).
pub fn chunk_markdown(text: &str, max_bytes: usize) -> Vec<Chunk> {
    let max_bytes = max_bytes.max(64);
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    // A trailing newline does not make an extra (empty) line.
    let line_count = if text.ends_with('\n') {
        lines.len() - 1
    } else {
        lines.len()
    };
    let mut sections: Vec<(String, Vec<Block>)> = Vec::new();
    let mut heading = String::new();
    let mut blocks: Vec<Block> = Vec::new();
    let mut current: Option<Block> = None;
    let mut in_fence = false;
    for (i, line) in lines.iter().take(line_count).enumerate() {
        let fence = is_fence(line);
        if !in_fence && let Some(h) = heading_text(line) {
            if let Some(b) = current.take() {
                blocks.push(b);
            }
            if !blocks.is_empty() {
                sections.push((heading.clone(), std::mem::take(&mut blocks)));
            }
            heading = h.to_owned();
            current = Some(Block {
                start: i,
                end: i,
                bytes: line.len() + 1,
            });
            // A heading sticks to the paragraph after it.
            continue;
        }
        if fence {
            in_fence = !in_fence;
        }
        let blank = line.trim().is_empty();
        if blank && !in_fence && !fence {
            // A blank line right after a heading keeps the heading open.
            if let Some(b) = &current
                && !(b.start == b.end && heading_text(lines[b.start]).is_some())
                && let Some(b) = current.take()
            {
                blocks.push(b);
            }
            continue;
        }
        match &mut current {
            Some(b) => {
                b.end = i;
                b.bytes += line.len() + 1;
            }
            None => {
                current = Some(Block {
                    start: i,
                    end: i,
                    bytes: line.len() + 1,
                })
            }
        }
    }
    if let Some(b) = current.take() {
        blocks.push(b);
    }
    if !blocks.is_empty() {
        sections.push((heading, blocks));
    }

    let mut out = Vec::new();
    for (heading, blocks) in sections {
        let mut group: Option<(usize, usize, usize)> = None;
        for b in blocks {
            match group {
                Some((s, _, bytes)) if bytes + b.bytes <= max_bytes => {
                    group = Some((s, b.end, bytes + b.bytes));
                }
                Some((s, e, _)) => {
                    emit(&lines, s, e, &heading, max_bytes, &mut out);
                    group = Some((b.start, b.end, b.bytes));
                }
                None => group = Some((b.start, b.end, b.bytes)),
            }
        }
        if let Some((s, e, _)) = group {
            emit(&lines, s, e, &heading, max_bytes, &mut out);
        }
    }
    out
}

/// Push lines `s..=e` as chunks of at most `max_bytes`, split at line ends
/// (and inside a line too long on its own).
fn emit(lines: &[&str], s: usize, e: usize, heading: &str, max: usize, out: &mut Vec<Chunk>) {
    let mut start = s;
    let mut text = String::new();
    let push = |start: usize, end: usize, text: &mut String, out: &mut Vec<Chunk>| {
        if !text.trim().is_empty() {
            out.push(Chunk {
                start_line: line_no(start),
                end_line: line_no(end),
                heading: heading.to_owned(),
                text: std::mem::take(text),
            });
        }
        text.clear();
    };
    for (i, line) in lines.iter().enumerate().take(e + 1).skip(s) {
        if line.len() > max {
            if !text.is_empty() {
                push(start, i.saturating_sub(1).max(start), &mut text, out);
            }
            let mut rest: &str = line;
            while !rest.is_empty() {
                let mut cut = rest.len().min(max);
                while !rest.is_char_boundary(cut) {
                    cut -= 1;
                }
                let mut piece = rest[..cut].to_owned();
                push(i, i, &mut piece, out);
                rest = &rest[cut..];
            }
            start = i + 1;
            continue;
        }
        if !text.is_empty() && text.len() + line.len() + 1 > max {
            push(start, i - 1, &mut text, out);
            start = i;
        }
        if text.is_empty() {
            start = i;
        } else {
            text.push('\n');
        }
        text.push_str(line);
    }
    if !text.is_empty() {
        push(start, e, &mut text, out);
    }
}

fn line_no(index: usize) -> u32 {
    u32::try_from(index + 1).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_start_chunks_and_keep_line_ranges() {
        let text =
            "# Title\n\nintro line\n\n## Decisions\nuse sqlite\nfor state\n\n## Todo\n- ship it\n";
        let chunks = chunk_markdown(text, 1000);
        let got: Vec<(u32, u32, &str)> = chunks
            .iter()
            .map(|c| (c.start_line, c.end_line, c.heading.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![(1, 3, "Title"), (5, 7, "Decisions"), (9, 10, "Todo")]
        );
        assert_eq!(chunks[1].text, "## Decisions\nuse sqlite\nfor state");
    }

    #[test]
    fn long_sections_split_at_paragraphs_then_lines() {
        let para = |n: usize| format!("{}\n", "word ".repeat(n));
        let text = format!("# H\n{}\n{}\n{}", para(20), para(20), para(20));
        let chunks = chunk_markdown(&text, 120);
        assert!(chunks.len() >= 3, "{chunks:?}");
        for c in &chunks {
            assert!(c.text.len() <= 120, "{c:?}");
            assert!(c.start_line <= c.end_line);
        }
        // Every non-blank line is in exactly one chunk.
        let covered: usize = chunks
            .iter()
            .map(|c| c.text.lines().filter(|l| !l.trim().is_empty()).count())
            .sum();
        assert_eq!(
            covered,
            text.lines().filter(|l| !l.trim().is_empty()).count()
        );
    }

    #[test]
    fn a_hash_in_a_code_fence_is_not_a_heading() {
        let text = "# A\n```sh\n# comment\necho hi\n```\n";
        let chunks = chunk_markdown(text, 1000);
        assert_eq!(chunks.len(), 1);
        assert_eq!((chunks[0].start_line, chunks[0].end_line), (1, 5));
    }

    #[test]
    fn a_huge_line_is_cut_on_char_boundaries() {
        let text = "é".repeat(200);
        let chunks = chunk_markdown(&text, 64);
        assert!(chunks.len() > 1);
        assert!(
            chunks
                .iter()
                .all(|c| c.start_line == 1 && c.text.len() <= 64)
        );
        let joined: String = chunks.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(joined, text);
    }
}
