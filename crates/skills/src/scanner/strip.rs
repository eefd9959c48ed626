//! Comment stripping before the source heuristics (OpenClaw
//! `stripCommentsForHeuristics`, extended to Python and shell).
//!
//! Every stripper keeps each newline, so line numbers of the stripped text
//! match the original. String, template and regex literal contents are kept
//! verbatim: code hidden in a string may still be executed, and keeping text
//! can only add findings. Where the lexer is unsure whether something is a
//! comment it keeps the text, so that an attacker cannot make code look like a
//! comment (for example `/[//]/` in JavaScript, `f"{d["#"]}"` in Python or
//! `${#x}` in shell).

/// The language of a code file, which selects the stripper and the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    /// JavaScript and TypeScript (`.js .ts .mjs .cjs .mts .cts .jsx .tsx`).
    Js,
    /// Python (`.py`).
    Python,
    /// POSIX shell, bash and zsh (`.sh .bash .zsh`).
    Shell,
}

/// The source with comments removed (newlines kept).
pub(crate) fn strip_comments(lang: Lang, source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    match lang {
        Lang::Js => strip_js(&chars),
        Lang::Python => strip_python(&chars),
        Lang::Shell => strip_shell(&chars),
    }
}

/// Joins continued lines: a line ending in `\` (the `\` dropped), or a
/// pipeline or list left open at the end of a line (`curl … |`, `… &&`,
/// `… ||`; not a Markdown table row, which starts with `|`). Each continued
/// line is appended (after a space) to the line it continues, and the
/// newlines it used are moved after the joined line. The line count is
/// unchanged and a joined command sits on the line where it starts, so a
/// match reports the starting line.
pub(crate) fn join_continued_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut owed = 0usize;
    let mut parts = text.split('\n').peekable();
    let mut in_table = false;
    while let Some(part) = parts.next() {
        let last = parts.peek().is_none();
        let body = part.strip_suffix('\r').unwrap_or(part);
        let trailing = body.len() - body.trim_end_matches('\\').len();
        if !last && trailing % 2 == 1 {
            out.push_str(&body[..body.len() - 1]);
            out.push(' ');
            owed += 1;
            continue;
        }
        // A table row of a continued line keeps the whole join a table row.
        if owed == 0 {
            in_table = body.trim_start().starts_with('|');
        }
        let open = body.trim_end();
        if !last && !in_table && (open.ends_with('|') || open.ends_with("&&")) {
            out.push_str(body);
            out.push(' ');
            owed += 1;
            continue;
        }
        out.push_str(part);
        if !last {
            out.push('\n');
        }
        out.extend(std::iter::repeat_n('\n', owed));
        owed = 0;
    }
    out
}

/// Pushes only the newlines of `chars` (used for removed block comments).
fn push_newlines(out: &mut String, chars: &[char]) {
    out.extend(chars.iter().filter(|c| **c == '\n'));
}

/// Index of the next `\n` at or after `from` (or the end).
fn line_end(chars: &[char], from: usize) -> usize {
    chars[from.min(chars.len())..]
        .iter()
        .position(|c| *c == '\n')
        .map_or(chars.len(), |p| from + p)
}

// ---------------------------------------------------------------------------
// JavaScript / TypeScript
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
enum JsCtx {
    Code { braces: usize },
    Template,
}

/// What came before a `/`, to tell a regex literal from a division.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Prev {
    Start,
    Word,
    Value,
    Punct,
}

/// Keywords after which a `/` starts a regex literal.
const JS_REGEX_KEYWORDS: &[&str] = &[
    "return",
    "typeof",
    "instanceof",
    "in",
    "of",
    "new",
    "delete",
    "void",
    "throw",
    "case",
    "do",
    "else",
    "yield",
    "await",
];

fn is_js_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// End index (exclusive) of a regex literal starting at `start` (a `/`), if
/// one closes on the same line.
fn scan_js_regex(chars: &[char], start: usize) -> Option<usize> {
    let mut j = start + 1;
    let mut in_class = false;
    loop {
        let c = *chars.get(j)?;
        match c {
            '\n' | '\r' => return None,
            '\\' => {
                if matches!(chars.get(j + 1), None | Some('\n' | '\r')) {
                    return None;
                }
                j += 2;
                continue;
            }
            '[' => in_class = true,
            ']' => in_class = false,
            '/' if !in_class => return Some(j + 1),
            _ => {}
        }
        j += 1;
    }
}

/// Decodes a `\uXXXX` or `\u{X…}` escape at `i` (the backslash); returns the
/// character and the index after the escape.
fn decode_js_unicode_escape(chars: &[char], i: usize) -> Option<(char, usize)> {
    if chars.get(i + 1) != Some(&'u') {
        return None;
    }
    let (digits, end) = if chars.get(i + 2) == Some(&'{') {
        let close = chars[i + 3..].iter().take(8).position(|c| *c == '}')?;
        (&chars[i + 3..i + 3 + close], i + 4 + close)
    } else {
        (chars.get(i + 2..i + 6)?, i + 6)
    };
    if digits.is_empty() || !digits.iter().all(char::is_ascii_hexdigit) {
        return None;
    }
    let text: String = digits.iter().collect();
    let value = u32::from_str_radix(&text, 16).ok()?;
    char::from_u32(value).map(|c| (c, end))
}

fn strip_js(chars: &[char]) -> String {
    let mut out = String::with_capacity(chars.len());
    let mut stack = vec![JsCtx::Code { braces: 0 }];
    let mut prev = Prev::Start;
    let mut word = String::new();
    let mut in_word = false;
    let mut i = 0;
    while i < chars.len() {
        let ch = chars[i];
        let next = chars.get(i + 1).copied();
        if let Some(JsCtx::Template) = stack.last() {
            match ch {
                '\\' => {
                    out.push(ch);
                    if let Some(n) = next {
                        out.push(n);
                        i += 1;
                    }
                }
                '`' => {
                    out.push(ch);
                    stack.pop();
                    prev = Prev::Value;
                }
                '$' if next == Some('{') => {
                    out.push_str("${");
                    i += 1;
                    stack.push(JsCtx::Code { braces: 0 });
                    prev = Prev::Punct;
                }
                _ => out.push(ch),
            }
            i += 1;
            continue;
        }

        let word_char = is_js_word(ch);
        if !word_char {
            in_word = false;
        }
        match ch {
            '\'' | '"' => {
                let mut j = i + 1;
                while let Some(&c) = chars.get(j) {
                    if c == '\\' {
                        j += 2;
                        continue;
                    }
                    if c == '\n' {
                        break;
                    }
                    j += 1;
                    if c == ch {
                        break;
                    }
                }
                let j = j.min(chars.len());
                out.extend(&chars[i..j]);
                i = j;
                prev = Prev::Value;
                continue;
            }
            '`' => {
                out.push(ch);
                stack.push(JsCtx::Template);
            }
            '/' if next == Some('/') => {
                i = line_end(chars, i);
                continue;
            }
            '/' if next == Some('*') => {
                let body_start = i + 2;
                let close = chars
                    .get(body_start..)
                    .and_then(|rest| rest.windows(2).position(|w| w == ['*', '/']));
                let end = close.map_or(chars.len(), |p| body_start + p);
                push_newlines(&mut out, &chars[i..end]);
                i = close.map_or(chars.len(), |_| end + 2);
                continue;
            }
            '/' => {
                let allowed = match prev {
                    Prev::Start | Prev::Punct => true,
                    Prev::Value => false,
                    Prev::Word => JS_REGEX_KEYWORDS.contains(&word.as_str()),
                };
                if let Some(end) = scan_js_regex(chars, i) {
                    let body = &chars[i + 1..end - 1];
                    // A "division" whose span holds comment openers or quotes
                    // is treated as a regex literal: keeping it verbatim can
                    // only add findings, never hide code.
                    let tricky = body.windows(2).any(|w| w == ['/', '/'] || w == ['/', '*'])
                        || body.iter().any(|c| matches!(c, '\'' | '"' | '`'));
                    if allowed || tricky {
                        out.extend(&chars[i..end]);
                        i = end;
                        prev = Prev::Value;
                        continue;
                    }
                }
                out.push(ch);
                prev = Prev::Punct;
            }
            '\\' => {
                if let Some((decoded, end)) = decode_js_unicode_escape(chars, i) {
                    // Identifier escapes (`\u0065val`) are decoded so that the
                    // rules see the real name.
                    out.push(decoded);
                    if is_js_word(decoded) {
                        if !in_word {
                            word.clear();
                            in_word = true;
                        }
                        word.push(decoded);
                        prev = Prev::Word;
                    }
                    i = end;
                    continue;
                }
                out.push(ch);
                prev = Prev::Punct;
            }
            '{' => {
                out.push(ch);
                if let Some(JsCtx::Code { braces }) = stack.last_mut() {
                    *braces += 1;
                }
                prev = Prev::Punct;
            }
            '}' => {
                out.push(ch);
                let depth = stack.len();
                match stack.last_mut() {
                    Some(JsCtx::Code { braces: 0 }) if depth > 1 => {
                        stack.pop();
                    }
                    Some(JsCtx::Code { braces }) => *braces = braces.saturating_sub(1),
                    _ => {}
                }
                prev = Prev::Punct;
            }
            ')' | ']' => {
                out.push(ch);
                prev = Prev::Value;
            }
            c if c.is_whitespace() => out.push(c),
            c if word_char => {
                out.push(c);
                if !in_word {
                    word.clear();
                    in_word = true;
                }
                word.push(c);
                prev = Prev::Word;
            }
            c => {
                out.push(c);
                prev = Prev::Punct;
            }
        }
        i += 1;
    }
    out
}

// ---------------------------------------------------------------------------
// Python
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
enum PyCtx {
    Code {
        braces: usize,
    },
    Str {
        quote: char,
        triple: bool,
        fmt: bool,
    },
}

/// Whether the quote at `i` opens a formatted string (`f"…"`, `rf'…'`,
/// `t"…"`).
fn python_string_is_formatted(chars: &[char], i: usize) -> bool {
    let mut k = i;
    while k > 0 && i - k < 3 && chars[k - 1].is_ascii_alphabetic() {
        k -= 1;
    }
    let prefix = &chars[k..i];
    let standalone = k == 0 || !(chars[k - 1].is_alphanumeric() || chars[k - 1] == '_');
    standalone
        && prefix.iter().all(|c| "rRbBfFuUtT".contains(*c))
        && prefix.iter().any(|c| "fFtT".contains(*c))
}

fn strip_python(chars: &[char]) -> String {
    let mut out = String::with_capacity(chars.len());
    let mut stack = vec![PyCtx::Code { braces: 0 }];
    let mut i = 0;
    while i < chars.len() {
        let ch = chars[i];
        let next = chars.get(i + 1).copied();
        match stack.last().copied() {
            Some(PyCtx::Str { quote, triple, fmt }) => {
                match ch {
                    '\\' => {
                        out.push(ch);
                        if let Some(n) = next {
                            out.push(n);
                            i += 1;
                        }
                    }
                    c if c == quote => {
                        if !triple {
                            out.push(c);
                            stack.pop();
                        } else if next == Some(quote) && chars.get(i + 2) == Some(&quote) {
                            out.extend([quote; 3]);
                            i += 2;
                            stack.pop();
                        } else {
                            out.push(c);
                        }
                    }
                    '\n' if !triple => {
                        // Unterminated single-line string: end it here.
                        out.push(ch);
                        stack.pop();
                    }
                    '{' if fmt && next == Some('{') => {
                        out.push_str("{{");
                        i += 1;
                    }
                    '}' if fmt && next == Some('}') => {
                        out.push_str("}}");
                        i += 1;
                    }
                    '{' if fmt => {
                        out.push(ch);
                        stack.push(PyCtx::Code { braces: 0 });
                    }
                    c => out.push(c),
                }
            }
            Some(PyCtx::Code { .. }) | None => match ch {
                '#' => {
                    i = line_end(chars, i);
                    continue;
                }
                '\'' | '"' => {
                    let triple = next == Some(ch) && chars.get(i + 2) == Some(&ch);
                    let fmt = python_string_is_formatted(chars, i);
                    if triple {
                        out.extend([ch; 3]);
                        i += 2;
                    } else {
                        out.push(ch);
                    }
                    stack.push(PyCtx::Str {
                        quote: ch,
                        triple,
                        fmt,
                    });
                }
                '\\' => {
                    out.push(ch);
                    if let Some(n) = next {
                        out.push(n);
                        i += 1;
                    }
                }
                '{' => {
                    out.push(ch);
                    if let Some(PyCtx::Code { braces }) = stack.last_mut() {
                        *braces += 1;
                    }
                }
                '}' => {
                    out.push(ch);
                    let depth = stack.len();
                    match stack.last_mut() {
                        Some(PyCtx::Code { braces: 0 }) if depth > 1 => {
                            stack.pop();
                        }
                        Some(PyCtx::Code { braces }) => *braces = braces.saturating_sub(1),
                        _ => {}
                    }
                }
                c => out.push(c),
            },
        }
        i += 1;
    }
    out
}

// ---------------------------------------------------------------------------
// Shell
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
enum ShCtx {
    Code { parens: usize },
    Dq,
}

/// Whether a `#` at `i` starts a comment: only at the start of a word.
fn shell_word_start(chars: &[char], i: usize) -> bool {
    i == 0 || {
        let p = chars[i - 1];
        p.is_whitespace() || matches!(p, ';' | '&' | '|' | '(' | ')' | '<' | '>')
    }
}

/// Parses a here-document operator at `i` (`<<`): the delimiter
/// and whether leading tabs are stripped (`<<-`).
fn parse_heredoc(chars: &[char], i: usize) -> Option<(String, bool)> {
    let mut j = i + 2;
    let strip_tabs = chars.get(j) == Some(&'-');
    if strip_tabs {
        j += 1;
    }
    while matches!(chars.get(j), Some(' ' | '\t')) {
        j += 1;
    }
    if matches!(chars.get(j), Some('\'' | '"' | '\\')) {
        j += 1;
    }
    let delim: String = chars[j.min(chars.len())..]
        .iter()
        .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
        .collect();
    (!delim.is_empty()).then_some((delim, strip_tabs))
}

fn strip_shell(chars: &[char]) -> String {
    let mut out = String::with_capacity(chars.len());
    let mut stack = vec![ShCtx::Code { parens: 0 }];
    let mut heredocs: Vec<(String, bool)> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let ch = chars[i];
        let next = chars.get(i + 1).copied();
        if let Some(ShCtx::Dq) = stack.last() {
            match ch {
                '\\' => {
                    out.push(ch);
                    if let Some(n) = next {
                        out.push(n);
                        i += 1;
                    }
                }
                '"' => {
                    out.push(ch);
                    stack.pop();
                }
                '$' if next == Some('(') => {
                    out.push_str("$(");
                    i += 1;
                    stack.push(ShCtx::Code { parens: 0 });
                }
                c => out.push(c),
            }
            i += 1;
            continue;
        }
        match ch {
            '\n' => {
                out.push(ch);
                i += 1;
                // Here-document bodies are data: copied verbatim.
                for (delim, strip_tabs) in heredocs.drain(..) {
                    while i < chars.len() {
                        let end = line_end(chars, i);
                        let line: String = chars[i..end].iter().collect();
                        out.push_str(&line);
                        if end < chars.len() {
                            out.push('\n');
                        }
                        i = end + 1;
                        let cmp = if strip_tabs {
                            line.trim_start_matches('\t')
                        } else {
                            &line
                        };
                        if cmp.trim_end_matches('\r') == delim {
                            break;
                        }
                    }
                }
                continue;
            }
            '#' if shell_word_start(chars, i) => {
                i = line_end(chars, i);
                continue;
            }
            '\'' => {
                let ansi = i > 0 && chars[i - 1] == '$';
                let mut j = i + 1;
                while let Some(&c) = chars.get(j) {
                    if ansi && c == '\\' {
                        j += 2;
                        continue;
                    }
                    j += 1;
                    if c == '\'' {
                        break;
                    }
                }
                let j = j.min(chars.len());
                out.extend(&chars[i..j]);
                i = j;
                continue;
            }
            '"' => {
                out.push(ch);
                stack.push(ShCtx::Dq);
            }
            '\\' => {
                out.push(ch);
                if let Some(n) = next {
                    out.push(n);
                    i += 1;
                }
            }
            '$' if next == Some('(') => {
                out.push_str("$(");
                i += 1;
                stack.push(ShCtx::Code { parens: 0 });
            }
            '(' => {
                out.push(ch);
                if let Some(ShCtx::Code { parens }) = stack.last_mut() {
                    *parens += 1;
                }
            }
            ')' => {
                out.push(ch);
                let depth = stack.len();
                match stack.last_mut() {
                    Some(ShCtx::Code { parens: 0 }) if depth > 1 => {
                        stack.pop();
                    }
                    Some(ShCtx::Code { parens }) => *parens = parens.saturating_sub(1),
                    _ => {}
                }
            }
            '<' if next == Some('<') => {
                if chars.get(i + 2) == Some(&'<') {
                    // A here-string (`<<<`), not a here-document.
                    out.push_str("<<<");
                    i += 3;
                    continue;
                }
                if let Some(heredoc) = parse_heredoc(chars, i) {
                    heredocs.push(heredoc);
                }
                out.push_str("<<");
                i += 2;
                continue;
            }
            c => out.push(c),
        }
        i += 1;
    }
    out
}

#[cfg(test)]
#[path = "strip_tests.rs"]
mod tests;
