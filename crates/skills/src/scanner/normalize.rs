//! Normalisation before matching, so that a rule matches the class of a
//! command and not one spelling of it.
//!
//! Two views of a file are matched, and both keep every newline (line `n`
//! of a view is line `n` of the file, so findings and evidence stay on the
//! original line):
//!
//! - [`clean_invisible`]: zero-width and bidi characters removed, Unicode
//!   tag characters (U+E0020–U+E007E, "ASCII smuggling") decoded to the
//!   ASCII they hide, full-width ASCII (`ｉｇｎｏｒｅ`) folded to ASCII, and
//!   Cyrillic or Greek look-alike letters inside a Latin word (`ignоre`)
//!   folded to Latin. Every rule runs on this view.
//! - [`shell_normalize`]: the cleaned view with shell spellings undone:
//!   `$'\x63url'` decoded, `${IFS}` / `$IFS` as a space, empty positional
//!   parameters glued into a word (`c$@url`) removed, `\` before a word
//!   character dropped (`c\url`), PowerShell backtick escapes dropped
//!   (`i`e`x`), string concatenation joined (`'Invoke-'+'Expression'`),
//!   quotes inside a word removed (`c''url`, `c"u"rl`, `"c"url`), empty
//!   command substitutions removed (`cu$()rl`), and `$NAME` replaced by
//!   the word a simple `NAME=word` assignment in the file gives it. Every
//!   rule runs on this view too; a finding from either view counts.
//!
//! The characters removed are themselves a finding (`invisible-unicode`,
//! see [`find_invisible`]) and evidence shows them escaped
//! ([`escape_invisible`]).

use std::sync::LazyLock;

use regex::Regex;

use super::{Severity, compile_pattern};

/// What an invisible character is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Invisible {
    /// Zero-width characters, soft hyphen, LRM/RLM, BOM: they split a word
    /// so that a pattern no longer sees it.
    ZeroWidth,
    /// Bidi embeddings, overrides and isolates: the text displays in an
    /// order other than the one it is read in ("Trojan Source").
    Bidi,
    /// Unicode tag characters: invisible, yet read by a model as ASCII.
    Tag,
    /// Variation selectors. One after an emoji picks its presentation; a
    /// run of them after any character can carry hidden bytes, one per
    /// selector ("emoji smuggling").
    Variation,
}

/// The byte a variation selector stands for in a smuggled run:
/// U+FE00–U+FE0F are 0–15, U+E0100–U+E01EF are 16–255.
fn variation_byte(c: char) -> Option<u8> {
    match c {
        '\u{FE00}'..='\u{FE0F}' => u8::try_from(u32::from(c) - 0xFE00).ok(),
        '\u{E0100}'..='\u{E01EF}' => u8::try_from(u32::from(c) - 0xE0100 + 16).ok(),
        _ => None,
    }
}

/// A run of at least this many variation selectors carries data.
const SMUGGLED_RUN: usize = 2;

/// The class of `c` when it is an invisible character.
pub(crate) fn invisible_kind(c: char) -> Option<Invisible> {
    match c {
        '\u{200B}'..='\u{200F}'
        | '\u{2060}'..='\u{2064}'
        | '\u{FEFF}'
        | '\u{00AD}'
        | '\u{180E}'
        | '\u{061C}'
        | '\u{034F}'
        | '\u{17B4}'
        | '\u{17B5}'
        | '\u{115F}'
        | '\u{1160}'
        | '\u{3164}'
        | '\u{FFA0}' => Some(Invisible::ZeroWidth),
        '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}' => Some(Invisible::Variation),
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' => Some(Invisible::Bidi),
        '\u{E0000}'..='\u{E007F}' => Some(Invisible::Tag),
        _ => None,
    }
}

/// Whether the invisible character at `chars[i]` is an ordinary part of
/// the text and not worth a finding: a byte-order mark at the start of the
/// file, or a joiner / non-joiner / direction mark next to a non-ASCII
/// character (emoji sequences, Indic and Arabic script, right-to-left text).
fn is_benign_invisible(chars: &[char], i: usize) -> bool {
    let c = chars[i];
    if c == '\u{FEFF}' && i == 0 {
        return true;
    }
    if matches!(c, '\u{200C}' | '\u{200D}' | '\u{200E}' | '\u{200F}') {
        let prev = i.checked_sub(1).and_then(|p| chars.get(p));
        let next = chars.get(i + 1);
        return prev.is_some_and(|p| !p.is_ascii()) || next.is_some_and(|n| !n.is_ascii());
    }
    false
}

/// Full-width ASCII (`ｉｇｎｏｒｅ`) and the ideographic space as plain
/// ASCII.
fn fold_fullwidth(c: char) -> char {
    match c {
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(u32::from(c) - 0xFEE0).unwrap_or(c),
        '\u{3000}' => ' ',
        _ => c,
    }
}

/// The Latin letter a Cyrillic or Greek letter is drawn like, if it is
/// drawn like one.
fn latin_lookalike(c: char) -> Option<char> {
    Some(match c {
        'а' | 'α' => 'a',
        'е' | 'ε' => 'e',
        'о' | 'ο' => 'o',
        'р' | 'ρ' => 'p',
        'с' => 'c',
        'у' => 'y',
        'х' | 'χ' => 'x',
        'і' | 'ι' => 'i',
        'ј' => 'j',
        'ѕ' => 's',
        'ԁ' => 'd',
        'ν' => 'v',
        'һ' => 'h',
        'А' | 'Α' => 'A',
        'В' | 'Β' => 'B',
        'Е' | 'Ε' => 'E',
        'К' | 'Κ' => 'K',
        'М' | 'Μ' => 'M',
        'Н' | 'Η' => 'H',
        'О' | 'Ο' => 'O',
        'Р' | 'Ρ' => 'P',
        'С' => 'C',
        'Т' | 'Τ' => 'T',
        'Х' | 'Χ' => 'X',
        'І' | 'Ι' => 'I',
        'Ѕ' => 'S',
        'Ζ' => 'Z',
        'Ν' => 'N',
        'Υ' => 'Y',
        _ => return None,
    })
}

/// Look-alike letters spelled into a Latin word (`ignоre` with a Cyrillic
/// `о`) as the Latin letters they imitate. Only words that mix ASCII
/// letters with look-alikes change; Russian or Greek prose is left alone.
fn fold_lookalikes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let mixed = word.chars().any(|c| c.is_ascii_alphabetic())
            && word.chars().any(|c| latin_lookalike(c).is_some());
        if mixed {
            out.extend(word.chars().map(|c| latin_lookalike(c).unwrap_or(c)));
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// The text with HTML character references decoded (`&#124;` is `|`),
/// invisible characters removed, tag characters and variation-selector
/// runs decoded, full-width ASCII folded to ASCII, and Cyrillic or Greek
/// look-alike letters inside a Latin word folded to Latin. Newlines are
/// kept.
pub(crate) fn clean_invisible(text: &str) -> String {
    let decoded = decode_entities(text);
    clean_unicode(&decoded)
}

/// HTML character references (`&#124;`, `&#x7c;`, `&vert;`, `&amp;`, …):
/// Markdown writes a pipe inside a table cell as `&#124;`, and a model
/// reads any of them as the character. A decoded newline or other control
/// character becomes a space, so lines stay.
static ENTITY: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        "normalize/entity",
        concat!(
            r"&(?:#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6})|(amp|lt|gt|quot|apos|vert|verbar|VerticalLine",
            r"|semi|dollar|grave|lpar|rpar|bsol|num|excl|period|colon|sol|nbsp|lbrace|rbrace|lcub|rcub));",
        ),
    )
});

pub(crate) fn decode_entities(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('&') {
        return std::borrow::Cow::Borrowed(text);
    }
    let Some(entity) = ENTITY.as_ref() else {
        return std::borrow::Cow::Borrowed(text);
    };
    entity.replace_all(text, |caps: &regex::Captures<'_>| {
        let decoded = if let Some(dec) = caps.get(1) {
            dec.as_str().parse::<u32>().ok().and_then(char::from_u32)
        } else if let Some(hex) = caps.get(2) {
            u32::from_str_radix(hex.as_str(), 16)
                .ok()
                .and_then(char::from_u32)
        } else {
            caps.get(3).and_then(|name| {
                Some(match name.as_str() {
                    "amp" => '&',
                    "lt" => '<',
                    "gt" => '>',
                    "quot" => '"',
                    "apos" => '\'',
                    "vert" | "verbar" | "VerticalLine" => '|',
                    "semi" => ';',
                    "dollar" => '$',
                    "grave" => '`',
                    "lpar" => '(',
                    "rpar" => ')',
                    "bsol" => '\\',
                    "num" => '#',
                    "excl" => '!',
                    "period" => '.',
                    "colon" => ':',
                    "sol" => '/',
                    "nbsp" => ' ',
                    "lbrace" | "lcub" => '{',
                    "rbrace" | "rcub" => '}',
                    _ => return None,
                })
            })
        };
        match decoded {
            Some(c) if c.is_control() => " ".to_owned(),
            Some(c) => c.to_string(),
            None => caps.get(0).map_or("", |m| m.as_str()).to_owned(),
        }
    })
}

/// [`clean_invisible`] after character references are decoded.
fn clean_unicode(text: &str) -> String {
    if text.is_ascii() {
        return text.to_owned();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut cleaned = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match invisible_kind(c) {
            None => cleaned.push(fold_fullwidth(c)),
            Some(Invisible::Tag) => {
                let ascii = u32::from(c) - 0xE0000;
                // Printable ASCII only; the tag begin/cancel marks vanish.
                cleaned.extend(char::from_u32(ascii).filter(|a| (' '..='~').contains(a)));
            }
            Some(Invisible::Variation) => {
                // A run of selectors is decoded to the text it hides (if it
                // is UTF-8), on the same line; a lone one just vanishes.
                let mut bytes: Vec<u8> = variation_byte(c).into_iter().collect();
                while let Some(b) = chars.get(i).copied().and_then(variation_byte) {
                    bytes.push(b);
                    i += 1;
                }
                if bytes.len() >= SMUGGLED_RUN
                    && let Ok(hidden) = std::str::from_utf8(&bytes)
                {
                    cleaned.push(' ');
                    cleaned.extend(hidden.chars().map(|h| if h.is_control() { ' ' } else { h }));
                    cleaned.push(' ');
                }
            }
            Some(Invisible::ZeroWidth | Invisible::Bidi) => {}
        }
    }
    if cleaned.chars().any(|c| latin_lookalike(c).is_some()) {
        fold_lookalikes(&cleaned)
    } else {
        cleaned
    }
}

/// The first line (0-based) holding a suspicious invisible character and
/// the finding's severity: critical for bidi controls, tag characters and
/// runs of variation selectors, warn for zero-width characters. When both
/// kinds occur, the critical one is reported.
pub(crate) fn find_invisible(text: &str) -> Option<(usize, Severity)> {
    let chars: Vec<char> = text.chars().collect();
    let mut line = 0usize;
    let mut first_warn = None;
    for (i, c) in chars.iter().enumerate() {
        if *c == '\n' {
            line += 1;
            continue;
        }
        match invisible_kind(*c) {
            Some(Invisible::Bidi | Invisible::Tag) => return Some((line, Severity::Critical)),
            Some(Invisible::Variation)
                if chars
                    .get(i + 1)
                    .is_some_and(|n| invisible_kind(*n) == Some(Invisible::Variation)) =>
            {
                return Some((line, Severity::Critical));
            }
            Some(Invisible::ZeroWidth)
                if first_warn.is_none() && !is_benign_invisible(&chars, i) =>
            {
                first_warn = Some((line, Severity::Warn));
            }
            _ => {}
        }
    }
    first_warn
}

/// `s` with invisible characters, control characters (other than tab) and
/// C1 controls written as `\u{…}` escapes, so evidence shows what is there.
pub(crate) fn escape_invisible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        // Emoji presentation selectors are ordinary text.
        let control = (c.is_control() && c != '\t')
            || (invisible_kind(c).is_some() && !matches!(c, '\u{FE0E}' | '\u{FE0F}'));
        if control {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

fn re(name: &str, pattern: &str) -> Option<Regex> {
    compile_pattern(name, pattern)
}

/// `$'…'` ANSI-C quoting.
static ANSI_C: LazyLock<Option<Regex>> =
    LazyLock::new(|| re("normalize/ansi-c", r"\$'((?:[^'\\\n]|\\[^\n])*)'"));
/// `${IFS}`, `${IFS%??}`, `$IFS`.
static IFS: LazyLock<Option<Regex>> =
    LazyLock::new(|| re("normalize/ifs", r"\$\{IFS[^}\n]{0,20}\}|\$IFS\b"));
/// An empty-expanding parameter glued to a following word character.
static EMPTY_PARAM_BEFORE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        "normalize/empty-param-before",
        r"\$(?:[@*]|\{[@*1-9]\}|[1-9])([\w/.~-])",
    )
});
/// An empty-expanding parameter after a word character.
static EMPTY_PARAM_AFTER: LazyLock<Option<Regex>> =
    LazyLock::new(|| re("normalize/empty-param-after", r"(\w)\$(?:[@*]|\{[@*]\})"));
/// An empty command substitution glued to a word (`cu$()rl`, `cu``rl`).
static EMPTY_SUBST: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        "normalize/empty-subst",
        r"(\w)(?:\$\([ \t]*\)|``)|(?:\$\([ \t]*\)|``)(\w)",
    )
});
/// A simple assignment `NAME=word` (capture 1 and 2) at a command start.
static ASSIGNMENT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        "normalize/assignment",
        r"(?:^|[\s;&|(])([A-Za-z_][A-Za-z0-9_]*)=([^\s;&|]+)",
    )
});
/// A parameter expansion `$NAME` or `${NAME}`.
static PARAM: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        "normalize/param",
        r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))",
    )
});
/// Variables substituted at most; a file with more keeps the rest as
/// written.
const MAX_SUBSTITUTED_VARS: usize = 256;

/// `$NAME` and `${NAME}` replaced by the word a simple `NAME=word`
/// assignment in the same file gives it (`a=cu; b=rl; $a$b x | sh` reads
/// `curl x | sh`). A name assigned twice, or never, is left as written.
fn substitute_simple_vars(text: &str) -> String {
    let (Some(assign), Some(param)) = (ASSIGNMENT.as_ref(), PARAM.as_ref()) else {
        return text.to_owned();
    };
    let mut values: std::collections::HashMap<&str, Option<&str>> =
        std::collections::HashMap::new();
    for caps in assign.captures_iter(text) {
        let (Some(name), Some(value)) = (caps.get(1), caps.get(2)) else {
            continue;
        };
        // A plain word only: no quoting, expansion or grouping.
        if value
            .as_str()
            .contains(['\'', '"', '$', '`', '(', ')', '<', '>', '\\'])
        {
            continue;
        }
        if values.len() >= MAX_SUBSTITUTED_VARS && !values.contains_key(name.as_str()) {
            break;
        }
        values
            .entry(name.as_str())
            .and_modify(|v| {
                if *v != Some(value.as_str()) {
                    *v = None;
                }
            })
            .or_insert(Some(value.as_str()));
    }
    if values.is_empty() {
        return text.to_owned();
    }
    param
        .replace_all(text, |caps: &regex::Captures<'_>| {
            let whole = caps.get(0).map_or("", |m| m.as_str());
            caps.get(1)
                .or(caps.get(2))
                .and_then(|name| values.get(name.as_str()).copied().flatten())
                .unwrap_or(whole)
                .to_owned()
        })
        .into_owned()
}

/// A backslash before a word character (`c\url`, `\curl`).
static BACKSLASH: LazyLock<Option<Regex>> =
    LazyLock::new(|| re("normalize/backslash", r"\\([A-Za-z0-9_./~-])"));
/// A PowerShell escape backtick inside a word (`i`e`x`).
static BACKTICK: LazyLock<Option<Regex>> = LazyLock::new(|| re("normalize/backtick", r"(\w)`(\w)"));
/// String concatenation: `'Invoke-'+'Expression'`, `"ev" + "al"`, within
/// one line (a concatenation spanning lines must not join them: every view
/// keeps the file's line numbers).
static CONCAT: LazyLock<Option<Regex>> =
    LazyLock::new(|| re("normalize/concat", r#"'[ \t]*\+[ \t]*'|"[ \t]*\+[ \t]*""#));
/// An empty quote pair glued to a word (`c''url`, `""curl`).
static EMPTY_QUOTES: LazyLock<Option<Regex>> =
    LazyLock::new(|| re("normalize/empty-quotes", r#"(\w)(?:''|"")|(?:''|"")(\w)"#));
/// A quoted piece glued after a word character (`c"u"rl`, `cu'rl'`).
static QUOTED_AFTER_WORD: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        "normalize/quoted-after-word",
        r#"(\w)'([^'\s|;&<>()]*)'|(\w)"([^"\s|;&<>()$`]*)""#,
    )
});
/// A quoted piece glued before a word character (`"c"url`).
static QUOTED_BEFORE_WORD: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        "normalize/quoted-before-word",
        r#"'([^'\s|;&<>()]+)'(\w)|"([^"\s|;&<>()$`]+)"(\w)"#,
    )
});
/// A whole word in quotes in command position (`| "sh"`, `'curl' x`).
static QUOTED_WORD: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        "normalize/quoted-word",
        r#"(^|[\s|;&])(?:'([\w./-]+)'|"([\w./-]+)")(\s|$|[|;&])"#,
    )
});

/// Replaces every match of `re` (if it compiled) with `rep`, repeating
/// until the text stops changing (at most 8 rounds), so overlapping
/// spellings like `c''u''rl` are undone too.
fn replace_fixpoint(text: String, re: &Option<Regex>, rep: &str) -> String {
    let Some(re) = re.as_ref() else { return text };
    let mut text = text;
    for _ in 0..8 {
        let next = re.replace_all(&text, rep);
        if next == text {
            break;
        }
        text = next.into_owned();
    }
    text
}

/// Decodes the body of a `$'…'` string (`\xHH`, `\NNN` octal, `\uHHHH`,
/// `\UHHHHHHHH`, `\n` and friends). A decoded newline becomes a space so
/// the line count stays the same.
fn decode_ansi_c(body: &str) -> String {
    let chars: Vec<char> = body.chars().collect();
    let mut out = String::with_capacity(body.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c != '\\' || i + 1 >= chars.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let esc = chars[i + 1];
        let (radix, max, skip) = match esc {
            'x' => (16, 2, 2),
            'u' => (16, 4, 2),
            'U' => (16, 8, 2),
            '0'..='7' => (8, 3, 1),
            _ => (0, 0, 0),
        };
        if radix == 0 {
            out.push(match esc {
                'n' | 'r' | 't' | 'v' | 'f' => ' ',
                'a' | 'b' | 'e' | 'E' => ' ',
                other => other,
            });
            i += 2;
            continue;
        }
        let start = i + skip;
        let digits: String = chars[start.min(chars.len())..]
            .iter()
            .take(max)
            .take_while(|d| d.is_digit(radix))
            .collect();
        match u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
        {
            Some(decoded) if !digits.is_empty() => {
                out.push(if decoded == '\n' || decoded == '\r' {
                    ' '
                } else {
                    decoded
                });
                i = start + digits.chars().count();
            }
            _ => {
                out.push(esc);
                i += 2;
            }
        }
    }
    out
}

/// The shell-normalised view of already cleaned text (see the module
/// docs). Each step works within a line, so newlines are kept.
pub(crate) fn shell_normalize(text: &str) -> String {
    let mut out = text.to_owned();
    if let Some(ansi) = ANSI_C.as_ref() {
        out = ansi
            .replace_all(&out, |caps: &regex::Captures<'_>| {
                decode_ansi_c(caps.get(1).map_or("", |m| m.as_str()))
            })
            .into_owned();
    }
    out = replace_fixpoint(out, &IFS, " ");
    out = replace_fixpoint(out, &EMPTY_PARAM_BEFORE, "$1");
    out = replace_fixpoint(out, &EMPTY_PARAM_AFTER, "$1");
    out = replace_fixpoint(out, &BACKSLASH, "$1");
    out = replace_fixpoint(out, &BACKTICK, "$1$2");
    out = replace_fixpoint(out, &CONCAT, "");
    out = replace_fixpoint(out, &EMPTY_QUOTES, "$1$2");
    out = replace_fixpoint(out, &QUOTED_AFTER_WORD, "$1$2$3$4");
    out = replace_fixpoint(out, &QUOTED_BEFORE_WORD, "$1$2$3$4");
    out = replace_fixpoint(out, &QUOTED_WORD, "$1$2$3$4");
    out = replace_fixpoint(out, &EMPTY_SUBST, "$1$2");
    substitute_simple_vars(&out)
}

#[cfg(test)]
#[path = "normalize_tests.rs"]
mod tests;
