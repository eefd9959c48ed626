//! A JSON5 parser that records where every key and value is.
//!
//! It implements the whole JSON5 grammar (<https://spec.json5.org/>):
//! `//` and `/* */` comments, trailing commas, unquoted (ECMAScript
//! identifier) keys, single- and double-quoted strings with every JSON5
//! escape (including `\x`, `\u` surrogate pairs and line continuations),
//! hexadecimal numbers, leading and trailing decimal points, an explicit
//! `+`, `Infinity`, `NaN`, and a leading byte-order mark.
//!
//! Two things parse but are reported as problems instead of being accepted,
//! so that a caller can list them together with its other findings:
//!
//! * a key repeated inside one object (a duplicate silently replacing a
//!   `deny` list is a security bug; the first occurrence is kept);
//! * a non-finite number (`Infinity`, `NaN`, or a literal like `1e400` that
//!   overflows), which `serde_json` cannot represent (it becomes `null`).
//!
//! Nesting deeper than [`MAX_DEPTH`] is a syntax error, so hostile input
//! cannot exhaust the stack.

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

use crate::spans::{Pos, Seg, SpanChildren, SpanNode, quote};

/// The deepest nesting of objects and arrays accepted.
pub(crate) const MAX_DEPTH: usize = 128;

/// A parsed document: the value, where its parts are, and the problems that
/// did not stop parsing.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Parsed {
    pub(crate) value: Value,
    pub(crate) spans: SpanNode,
    pub(crate) problems: Vec<Problem>,
}

/// A duplicate key or a non-finite number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    pub(crate) path: Vec<Seg>,
    pub(crate) pos: Pos,
    pub(crate) message: String,
}

/// Input that is not JSON5.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    pub(crate) pos: Pos,
    pub(crate) message: String,
}

/// Parse one JSON5 document.
pub(crate) fn parse(text: &str) -> Result<Parsed, SyntaxError> {
    let mut p = Parser {
        src: text,
        i: 0,
        line: 1,
        col: 1,
        depth: 0,
        path: Vec::new(),
        problems: Vec::new(),
    };
    if p.src.starts_with('\u{FEFF}') {
        // A byte-order mark is not part of the text an editor shows.
        p.i = '\u{FEFF}'.len_utf8();
    }
    p.skip_trivia()?;
    let (value, spans) = p.value(None)?;
    p.skip_trivia()?;
    if let Some(c) = p.peek() {
        return Err(p.err_here(format!(
            "unexpected {} after the end of the document (a file holds exactly one value)",
            describe_char(c)
        )));
    }
    Ok(Parsed {
        value,
        spans,
        problems: p.problems,
    })
}

/// Whether `text` holds nothing but whitespace and comments (an
/// unterminated block comment is not nothing).
pub(crate) fn only_trivia(text: &str) -> bool {
    let mut p = Parser {
        src: text,
        i: 0,
        line: 1,
        col: 1,
        depth: 0,
        path: Vec::new(),
        problems: Vec::new(),
    };
    if p.src.starts_with('\u{FEFF}') {
        p.i = '\u{FEFF}'.len_utf8();
    }
    p.skip_trivia().is_ok() && p.peek().is_none()
}

struct Parser<'a> {
    src: &'a str,
    i: usize,
    line: u32,
    col: u32,
    depth: usize,
    path: Vec<Seg>,
    problems: Vec<Problem>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.src[self.i..].chars().next()
    }

    fn peek2(&self) -> Option<char> {
        let mut it = self.src[self.i..].chars();
        it.next();
        it.next()
    }

    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            column: self.col,
        }
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += c.len_utf8();
        match c {
            '\n' => self.newline(),
            // CR LF counts once, at the LF.
            '\r' if self.peek() == Some('\n') => self.col = self.col.saturating_add(1),
            '\r' => self.newline(),
            _ => self.col = self.col.saturating_add(1),
        }
        Some(c)
    }

    fn newline(&mut self) {
        self.line = self.line.saturating_add(1);
        self.col = 1;
    }

    fn err_at(pos: Pos, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            pos,
            message: message.into(),
        }
    }

    fn err_here(&self, message: impl Into<String>) -> SyntaxError {
        Self::err_at(self.pos(), message)
    }

    fn found(&self) -> String {
        match self.peek() {
            Some(c) => describe_char(c),
            None => "the end of the file".to_owned(),
        }
    }

    fn problem(&mut self, pos: Pos, path: Vec<Seg>, message: String) {
        self.problems.push(Problem { path, pos, message });
    }

    /// Skip whitespace and comments.
    fn skip_trivia(&mut self) -> Result<(), SyntaxError> {
        loop {
            match self.peek() {
                Some(c) if is_space(c) => {
                    self.bump();
                }
                Some('/') => match self.peek2() {
                    Some('/') => {
                        while let Some(c) = self.peek() {
                            if is_line_terminator(c) {
                                break;
                            }
                            self.bump();
                        }
                    }
                    Some('*') => {
                        let start = self.pos();
                        self.bump();
                        self.bump();
                        loop {
                            match self.bump() {
                                None => {
                                    return Err(Self::err_at(
                                        start,
                                        "unterminated block comment: `/*` has no closing `*/`",
                                    ));
                                }
                                Some('*') if self.peek() == Some('/') => {
                                    self.bump();
                                    break;
                                }
                                Some(_) => {}
                            }
                        }
                    }
                    _ => return Ok(()),
                },
                _ => return Ok(()),
            }
        }
    }

    fn enter(&mut self) -> Result<(), SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err_here(format!(
                "nesting too deep: more than {MAX_DEPTH} nested objects and arrays"
            )));
        }
        Ok(())
    }

    fn value(&mut self, key: Option<Pos>) -> Result<(Value, SpanNode), SyntaxError> {
        let start = self.pos();
        let leaf = |v: Value| {
            (
                v,
                SpanNode {
                    key,
                    value: start,
                    children: SpanChildren::None,
                },
            )
        };
        match self.peek() {
            None => Err(self.err_here("expected a value, found the end of the file")),
            Some('{') => self.object(key, start),
            Some('[') => self.array(key, start),
            Some(q @ ('"' | '\'')) => Ok(leaf(Value::String(self.string(q)?))),
            Some(c) if c == '-' || c == '+' || c == '.' || c.is_ascii_digit() => {
                Ok(leaf(self.number(start)?))
            }
            Some(c) if is_id_start(c) => Ok(leaf(self.literal(start)?)),
            Some(c) => Err(self.err_here(format!(
                "expected a value (an object, array, string, number, `true`, `false` or `null`), found {}",
                describe_char(c)
            ))),
        }
    }

    fn object(&mut self, key: Option<Pos>, start: Pos) -> Result<(Value, SpanNode), SyntaxError> {
        self.enter()?;
        self.bump();
        let mut map = Map::new();
        let mut spans: HashMap<String, SpanNode> = HashMap::new();
        loop {
            self.skip_trivia()?;
            match self.peek() {
                Some('}') => {
                    self.bump();
                    break;
                }
                None => return Err(self.unclosed('}', "object", start)),
                Some(_) => {}
            }
            let key_pos = self.pos();
            let k = self.key()?;
            self.skip_trivia()?;
            if self.peek() != Some(':') {
                return Err(self.err_here(format!(
                    "expected `:` after the key {}, found {}",
                    quote(&k),
                    self.found()
                )));
            }
            self.bump();
            self.skip_trivia()?;
            self.path.push(Seg::Key(k.clone()));
            let (v, node) = self.value(Some(key_pos))?;
            let path = self.path.clone();
            self.path.pop();
            if let Some(first) = spans.get(&k) {
                let first = first.key_or_value();
                self.problem(
                    key_pos,
                    path,
                    format!(
                        "duplicate key {} (first defined at line {}, column {}; repeated at line {}): a repeated key would silently replace the first value, so remove one",
                        quote(&k),
                        first.line,
                        first.column,
                        key_pos.line,
                    ),
                );
            } else {
                map.insert(k.clone(), v);
                spans.insert(k.clone(), node);
            }
            self.skip_trivia()?;
            match self.peek() {
                Some(',') => {
                    self.bump();
                }
                Some('}') => {
                    self.bump();
                    break;
                }
                None => return Err(self.unclosed('}', "object", start)),
                Some(c) => {
                    return Err(self.err_here(format!(
                        "expected `,` or `}}` after the value of {}, found {}",
                        quote(&k),
                        describe_char(c)
                    )));
                }
            }
        }
        self.depth -= 1;
        Ok((
            Value::Object(map),
            SpanNode {
                key,
                value: start,
                children: SpanChildren::Object(spans),
            },
        ))
    }

    fn array(&mut self, key: Option<Pos>, start: Pos) -> Result<(Value, SpanNode), SyntaxError> {
        self.enter()?;
        self.bump();
        let mut items = Vec::new();
        let mut spans = Vec::new();
        loop {
            self.skip_trivia()?;
            match self.peek() {
                Some(']') => {
                    self.bump();
                    break;
                }
                None => return Err(self.unclosed(']', "array", start)),
                Some(_) => {}
            }
            self.path.push(Seg::Index(items.len()));
            let (v, node) = self.value(None)?;
            self.path.pop();
            items.push(v);
            spans.push(node);
            self.skip_trivia()?;
            match self.peek() {
                Some(',') => {
                    self.bump();
                }
                Some(']') => {
                    self.bump();
                    break;
                }
                None => return Err(self.unclosed(']', "array", start)),
                Some(c) => {
                    return Err(self.err_here(format!(
                        "expected `,` or `]` after an array element, found {}",
                        describe_char(c)
                    )));
                }
            }
        }
        self.depth -= 1;
        Ok((
            Value::Array(items),
            SpanNode {
                key,
                value: start,
                children: SpanChildren::Array(spans),
            },
        ))
    }

    fn unclosed(&self, close: char, what: &str, start: Pos) -> SyntaxError {
        self.err_here(format!(
            "unexpected end of the file: expected `{close}` to close the {what} opened at line {}, column {}",
            start.line, start.column
        ))
    }

    /// An object key: a quoted string or an identifier.
    fn key(&mut self) -> Result<String, SyntaxError> {
        match self.peek() {
            Some(q @ ('"' | '\'')) => self.string(q),
            Some(c) if is_id_start(c) => self.identifier(),
            _ => Err(self.err_here(format!(
                "expected a key (a quoted string or an identifier) or `}}`, found {}",
                self.found()
            ))),
        }
    }

    /// An ECMAScript IdentifierName, with `\uXXXX` escapes.
    fn identifier(&mut self) -> Result<String, SyntaxError> {
        let mut out = String::new();
        loop {
            let first = out.is_empty();
            match self.peek() {
                Some('\\') => {
                    let at = self.pos();
                    self.bump();
                    if self.bump() != Some('u') {
                        return Err(Self::err_at(
                            at,
                            "only `\\u` escapes are allowed in an unquoted key",
                        ));
                    }
                    let c = self.hex4().and_then(|u| char::from_u32(u32::from(u)));
                    match c {
                        Some(c) if (first && is_id_start(c)) || (!first && is_id_part(c)) => {
                            out.push(c)
                        }
                        _ => {
                            return Err(Self::err_at(
                                at,
                                "this `\\u` escape is not a character allowed in an unquoted key; quote the key",
                            ));
                        }
                    }
                }
                Some(c) if (first && is_id_start(c)) || (!first && is_id_part(c)) => {
                    self.bump();
                    out.push(c);
                }
                _ => return Ok(out),
            }
        }
    }

    /// `true`, `false`, `null`, `Infinity` or `NaN`.
    fn literal(&mut self, start: Pos) -> Result<Value, SyntaxError> {
        let word = self.identifier()?;
        match word.as_str() {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            "null" => Ok(Value::Null),
            "Infinity" | "NaN" => Ok(self.non_finite(start, &word)),
            _ => Err(Self::err_at(
                start,
                format!(
                    "unexpected word `{}`: a string value must be quoted (write {})",
                    truncate(&word, 40),
                    quote(&truncate(&word, 40))
                ),
            )),
        }
    }

    fn non_finite(&mut self, start: Pos, literal: &str) -> Value {
        let path = self.path.clone();
        self.problem(
            start,
            path,
            format!(
                "non-finite number `{}` is not allowed (numbers must be finite)",
                truncate(literal, 40)
            ),
        );
        Value::Null
    }

    fn number(&mut self, start: Pos) -> Result<Value, SyntaxError> {
        let text_start = self.i;
        let mut neg = false;
        if let Some(c @ ('+' | '-')) = self.peek() {
            neg = c == '-';
            self.bump();
        }
        match self.peek() {
            Some('I' | 'N') => {
                let word = self.identifier()?;
                if word == "Infinity" || word == "NaN" {
                    let lit = format!("{}{word}", if neg { "-" } else { "+" });
                    return Ok(self.non_finite(start, &lit));
                }
                return Err(Self::err_at(
                    start,
                    format!(
                        "expected a number after the sign, found `{}`",
                        truncate(&word, 40)
                    ),
                ));
            }
            Some('0') if matches!(self.peek2(), Some('x' | 'X')) => {
                self.bump();
                self.bump();
                return self.hex_number(neg, start);
            }
            _ => {}
        }
        let mut int_digits = 0usize;
        if self.peek() == Some('0') {
            self.bump();
            int_digits = 1;
            if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                return Err(Self::err_at(
                    start,
                    "leading zeros are not allowed in a number (write `0x…` for hexadecimal)",
                ));
            }
        } else {
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.bump();
                int_digits += 1;
            }
        }
        let mut is_float = false;
        let mut frac_digits = 0usize;
        if self.peek() == Some('.') {
            is_float = true;
            self.bump();
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.bump();
                frac_digits += 1;
            }
        }
        if int_digits == 0 && frac_digits == 0 {
            return Err(Self::err_at(
                start,
                format!("expected digits in a number, found {}", self.found()),
            ));
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            is_float = true;
            self.bump();
            if matches!(self.peek(), Some('+' | '-')) {
                self.bump();
            }
            let mut exp_digits = 0usize;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.bump();
                exp_digits += 1;
            }
            if exp_digits == 0 {
                return Err(self.err_here(format!(
                    "expected digits in the exponent of a number, found {}",
                    self.found()
                )));
            }
        }
        if let Some(c) = self.peek()
            && (is_id_part(c) || c == '.')
        {
            return Err(self.err_here(format!(
                "unexpected {} right after a number",
                describe_char(c)
            )));
        }
        let text = &self.src[text_start..self.i];
        if !is_float {
            let unsigned = text.trim_start_matches('+');
            if !neg && let Ok(u) = unsigned.parse::<u64>() {
                return Ok(Value::Number(Number::from(u)));
            }
            if neg && let Ok(i) = text.parse::<i64>() {
                return Ok(Value::Number(Number::from(i)));
            }
        }
        let f: f64 = text.parse().map_err(|_| {
            Self::err_at(
                start,
                format!("`{}` is not a valid number", truncate(text, 40)),
            )
        })?;
        Ok(match Number::from_f64(f) {
            Some(n) => Value::Number(n),
            None => {
                let lit = text.to_owned();
                self.non_finite(start, &lit)
            }
        })
    }

    fn hex_number(&mut self, neg: bool, start: Pos) -> Result<Value, SyntaxError> {
        let mut n: u128 = 0;
        let mut overflow = false;
        let mut digits = 0usize;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(16)) {
            self.bump();
            digits += 1;
            match n.checked_mul(16).and_then(|n| n.checked_add(u128::from(d))) {
                Some(v) => n = v,
                None => overflow = true,
            }
        }
        if digits == 0 {
            return Err(self.err_here(format!(
                "expected hexadecimal digits after `0x`, found {}",
                self.found()
            )));
        }
        if let Some(c) = self.peek()
            && (is_id_part(c) || c == '.')
        {
            return Err(self.err_here(format!(
                "unexpected {} right after a hexadecimal number",
                describe_char(c)
            )));
        }
        if overflow {
            return Err(Self::err_at(start, "hexadecimal number is too large"));
        }
        if neg {
            if let Some(i) = i64::try_from(n).ok().and_then(i64::checked_neg) {
                return Ok(Value::Number(Number::from(i)));
            }
            if n == 1u128 << 63 {
                return Ok(Value::Number(Number::from(i64::MIN)));
            }
            #[allow(clippy::cast_precision_loss)]
            let f = -(n as f64);
            return Ok(Number::from_f64(f).map_or(Value::Null, Value::Number));
        }
        if let Ok(u) = u64::try_from(n) {
            return Ok(Value::Number(Number::from(u)));
        }
        #[allow(clippy::cast_precision_loss)]
        let f = n as f64;
        Ok(Number::from_f64(f).map_or(Value::Null, Value::Number))
    }

    fn hex4(&mut self) -> Option<u16> {
        let mut v: u16 = 0;
        for _ in 0..4 {
            let d = self.peek()?.to_digit(16)?;
            self.bump();
            v = v * 16 + u16::try_from(d).ok()?;
        }
        Some(v)
    }

    fn string(&mut self, quote_char: char) -> Result<String, SyntaxError> {
        let start = self.pos();
        self.bump();
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(Self::err_at(
                    start,
                    format!(
                        "unterminated string: no closing `{quote_char}` before the end of the file"
                    ),
                ));
            };
            match c {
                c if c == quote_char => {
                    self.bump();
                    return Ok(out);
                }
                '\\' => {
                    let at = self.pos();
                    self.bump();
                    self.escape(&mut out, at, start, quote_char)?;
                }
                '\n' | '\r' => {
                    return Err(self.err_here(format!(
                        "line break inside the string that starts at line {}, column {} (write `\\n`, or end the line with `\\` to continue the string)",
                        start.line, start.column
                    )));
                }
                _ => {
                    self.bump();
                    out.push(c);
                }
            }
        }
    }

    fn escape(
        &mut self,
        out: &mut String,
        at: Pos,
        start: Pos,
        quote_char: char,
    ) -> Result<(), SyntaxError> {
        let Some(c) = self.bump() else {
            return Err(Self::err_at(
                start,
                format!(
                    "unterminated string: no closing `{quote_char}` before the end of the file"
                ),
            ));
        };
        match c {
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{C}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\u{B}'),
            '0' => {
                if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    return Err(Self::err_at(
                        at,
                        "octal escapes like `\\01` are not allowed",
                    ));
                }
                out.push('\0');
            }
            '1'..='9' => {
                return Err(Self::err_at(
                    at,
                    format!("`\\{c}` is not a valid escape (digits cannot be escaped)"),
                ));
            }
            'x' => {
                let hi = self.peek().and_then(|c| c.to_digit(16));
                let hi = hi.inspect(|_| {
                    self.bump();
                });
                let lo = self.peek().and_then(|c| c.to_digit(16));
                let lo = lo.inspect(|_| {
                    self.bump();
                });
                match (hi, lo) {
                    (Some(h), Some(l)) => out.extend(char::from_u32(h * 16 + l)),
                    _ => {
                        return Err(Self::err_at(
                            at,
                            "`\\x` must be followed by two hexadecimal digits",
                        ));
                    }
                }
            }
            'u' => {
                let Some(unit) = self.hex4() else {
                    return Err(Self::err_at(
                        at,
                        "`\\u` must be followed by four hexadecimal digits",
                    ));
                };
                let c = match unit {
                    0xD800..=0xDBFF => {
                        let low = if self.peek() == Some('\\') && self.peek2() == Some('u') {
                            self.bump();
                            self.bump();
                            self.hex4()
                        } else {
                            None
                        };
                        match low {
                            Some(low @ 0xDC00..=0xDFFF) => {
                                let cp = 0x10000
                                    + ((u32::from(unit) - 0xD800) << 10)
                                    + (u32::from(low) - 0xDC00);
                                char::from_u32(cp)
                            }
                            _ => None,
                        }
                    }
                    0xDC00..=0xDFFF => None,
                    other => char::from_u32(u32::from(other)),
                };
                match c {
                    Some(c) => out.push(c),
                    None => {
                        return Err(Self::err_at(
                            at,
                            format!(
                                "`\\u{unit:04X}` is half of a UTF-16 surrogate pair without its other half; text must be valid Unicode"
                            ),
                        ));
                    }
                }
            }
            // Line continuations.
            '\n' | '\u{2028}' | '\u{2029}' => {}
            '\r' => {
                if self.peek() == Some('\n') {
                    self.bump();
                }
            }
            other => out.push(other),
        }
        Ok(())
    }
}

fn is_line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// JSON5 WhiteSpace and LineTerminator (Unicode category Zs spelled out).
fn is_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{B}' | '\u{C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// ECMAScript IdentifierStart, approximated with Rust's Unicode tables.
fn is_id_start(c: char) -> bool {
    c == '$' || c == '_' || c == '\\' || c.is_alphabetic()
}

/// ECMAScript IdentifierPart, approximated with Rust's Unicode tables.
fn is_id_part(c: char) -> bool {
    c == '$' || c == '_' || c == '\u{200C}' || c == '\u{200D}' || c.is_alphanumeric()
}

/// A character as error messages show it: in backticks when printable, as
/// a code point otherwise.
pub(crate) fn describe_char(c: char) -> String {
    match c {
        '\0' => "a NUL byte (U+0000)".to_owned(),
        c if c.is_control() || (is_space(c) && c != ' ') => format!("U+{:04X}", u32::from(c)),
        '`' => "a backtick".to_owned(),
        c => format!("`{c}`"),
    }
}

/// At most `max` characters of `s`, with `…` when cut.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(max).collect();
        t.push('…');
        t
    }
}

#[cfg(test)]
#[path = "json5_spanned_tests.rs"]
mod tests;
