//! A small JSON-like tree read from YAML or JSON5 under hard limits.
//!
//! `yaml_serde` replays an anchored node every time an alias refers to it,
//! so a "billion laughs" document expands exponentially while its text stays
//! tiny. Its own limits (nesting 128, alias jumps ≤ 100 × events) do not
//! bound the bytes produced: one long anchored string repeated a few
//! thousand times is enough to eat gigabytes. The visitor below counts every
//! value and every string byte it receives, across the whole document, and
//! gives up as soon as a limit is passed. It also caps nesting lower than
//! the parsers do, which keeps the recursion of the JSON5 parser (it has no
//! limit of its own) and of the writers short.

use std::cell::Cell;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt;

use serde::Deserialize;
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};

/// Deepest nesting accepted (a frontmatter needs three or four levels).
pub(crate) const MAX_DEPTH: usize = 64;
/// Most values (scalars, lists, maps, keys) one document may produce.
pub(crate) const MAX_NODES: usize = 100_000;
/// Most string bytes one document may produce (after alias expansion).
pub(crate) const MAX_STRING_BYTES: usize = 4 * 1024 * 1024;

/// A parsed value. Map keys are already strings (JavaScript semantics: the
/// YAML key `1` is the property `"1"`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    /// `null`, `~`, an empty value.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i128),
    /// A float (including the non-finite ones YAML and JSON5 allow).
    Float(f64),
    /// A string.
    Str(String),
    /// A list.
    Seq(Vec<Node>),
    /// A map, in document order, keys unique.
    Map(Vec<(String, Node)>),
}

impl Node {
    /// The value under `key`, when this is a map.
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            Node::Null
            | Node::Bool(_)
            | Node::Int(_)
            | Node::Float(_)
            | Node::Str(_)
            | Node::Seq(_) => None,
        }
    }

    /// The string, when this is a string.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Node::Str(s) => Some(s),
            Node::Null
            | Node::Bool(_)
            | Node::Int(_)
            | Node::Float(_)
            | Node::Seq(_)
            | Node::Map(_) => None,
        }
    }

    /// The text of a scalar as JavaScript's `String(value)` gives it (`None`
    /// for null, lists and maps).
    pub(crate) fn scalar_text(&self) -> Option<String> {
        match self {
            Node::Str(s) => Some(s.clone()),
            Node::Bool(b) => Some(b.to_string()),
            Node::Int(i) => Some(i.to_string()),
            Node::Float(f) => Some(js_number(*f)),
            Node::Null | Node::Seq(_) | Node::Map(_) => None,
        }
    }
}

/// How a map treats a key it has already seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Duplicates {
    /// An error (YAML: the `yaml` package OpenClaw uses rejects them).
    Reject,
    /// The later value replaces the earlier one (`JSON5.parse`).
    LastWins,
}

/// The shared counters of one document.
#[derive(Debug)]
struct Budget {
    nodes: Cell<usize>,
    bytes: Cell<usize>,
    duplicates: Duplicates,
}

impl Budget {
    fn new(duplicates: Duplicates) -> Self {
        Budget {
            nodes: Cell::new(0),
            bytes: Cell::new(0),
            duplicates,
        }
    }

    fn take_node<E: de::Error>(&self) -> Result<(), E> {
        let n = self.nodes.get().saturating_add(1);
        if n > MAX_NODES {
            return Err(E::custom(format_args!(
                "more than {MAX_NODES} values (alias expansion?)"
            )));
        }
        self.nodes.set(n);
        Ok(())
    }

    fn take_bytes<E: de::Error>(&self, len: usize) -> Result<(), E> {
        let n = self.bytes.get().saturating_add(len);
        if n > MAX_STRING_BYTES {
            return Err(E::custom(format_args!(
                "more than {MAX_STRING_BYTES} bytes of strings (alias expansion?)"
            )));
        }
        self.bytes.set(n);
        Ok(())
    }
}

/// Reads one value at `depth`, charging `budget`.
#[derive(Debug, Clone, Copy)]
struct Seed<'b> {
    budget: &'b Budget,
    depth: usize,
}

impl Seed<'_> {
    fn nested<E: de::Error>(self) -> Result<Self, E> {
        if self.depth >= MAX_DEPTH {
            return Err(E::custom(format_args!(
                "nesting deeper than {MAX_DEPTH} levels"
            )));
        }
        Ok(Seed {
            budget: self.budget,
            depth: self.depth + 1,
        })
    }

    fn string<E: de::Error>(self, s: &str) -> Result<Node, E> {
        self.budget.take_bytes(s.len())?;
        Ok(Node::Str(s.to_owned()))
    }
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Node;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node, D::Error> {
        self.budget.take_node()?;
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML or JSON5 value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Int(i128::from(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Int(i128::from(v)))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Node, E> {
        Ok(Node::Int(v))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Node, E> {
        Ok(i128::try_from(v).map_or(Node::Float(v as f64), Node::Int))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Float(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Node, E> {
        self.string(v)
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Node, E> {
        self.string(&String::from_utf8_lossy(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let child = self.nested()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(child)? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let child = self.nested()?;
        let mut entries: Vec<(String, Node)> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        while let Some(key) = map.next_key_seed(child)? {
            let key = key_text(&key);
            self.budget.take_bytes(key.len())?;
            let value = map.next_value_seed(child)?;
            match index.entry(key) {
                Entry::Occupied(slot) => match self.budget.duplicates {
                    Duplicates::Reject => {
                        return Err(de::Error::custom(format_args!(
                            "duplicate key {}",
                            super::quoted(slot.key())
                        )));
                    }
                    Duplicates::LastWins => {
                        if let Some(entry) = entries.get_mut(*slot.get()) {
                            entry.1 = value;
                        }
                    }
                },
                Entry::Vacant(slot) => {
                    entries.push((slot.key().clone(), value));
                    slot.insert(entries.len() - 1);
                }
            }
        }
        Ok(Node::Map(entries))
    }

    /// A YAML node with a non-standard tag (`!foo bar`): the tag is ignored
    /// and the content kept, as the `yaml` package does for unknown tags.
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Node, A::Error> {
        let (_tag, content): (de::IgnoredAny, _) = data.variant()?;
        content.newtype_variant_seed(self)
    }
}

/// A map key as JavaScript turns it into a property name.
fn key_text(key: &Node) -> String {
    match key {
        Node::Null => String::new(),
        Node::Seq(_) | Node::Map(_) => to_compact_json(key),
        Node::Bool(_) | Node::Int(_) | Node::Float(_) | Node::Str(_) => {
            key.scalar_text().unwrap_or_default()
        }
    }
}

/// A whole YAML document (duplicate keys are an error).
#[derive(Debug)]
pub(crate) struct YamlDoc(pub(crate) Node);

impl<'de> Deserialize<'de> for YamlDoc {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let budget = Budget::new(Duplicates::Reject);
        Seed {
            budget: &budget,
            depth: 0,
        }
        .deserialize(deserializer)
        .map(YamlDoc)
    }
}

/// A whole JSON5 document (a later duplicate key wins).
#[derive(Debug)]
pub(crate) struct Json5Doc(pub(crate) Node);

impl<'de> Deserialize<'de> for Json5Doc {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let budget = Budget::new(Duplicates::LastWins);
        Seed {
            budget: &budget,
            depth: 0,
        }
        .deserialize(deserializer)
        .map(Json5Doc)
    }
}

/// Why a frontmatter block or a `metadata` value did not parse. It becomes
/// a warning naming the field; the skill is still read (by the line parser,
/// or without its manifest).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ParseError {
    /// Flow nesting deeper than [`MAX_DEPTH`], refused before parsing.
    #[error("nesting deeper than {MAX_DEPTH} levels")]
    TooDeep,
    /// The YAML parser's error (limits passed inside it included).
    #[error(transparent)]
    Yaml(yaml_serde::Error),
    /// The JSON5 parser's error (limits passed inside it included).
    #[error(transparent)]
    Json5(json5::Error),
    /// The parser panicked (caught).
    #[error("the parser failed unexpectedly")]
    Panicked,
    /// The block parsed but is not a mapping.
    #[error("frontmatter must be a YAML mapping")]
    NotMapping,
}

/// Parse YAML into a bounded tree. Never panics (a panic inside the parser
/// is caught and reported as an error).
pub(crate) fn parse_yaml(text: &str) -> Result<Node, ParseError> {
    // libyaml's scanner is quadratic in flow nesting (40 000 `[` take
    // seconds), so deep flow nesting is refused before it gets there.
    if max_bracket_depth(text) > MAX_DEPTH {
        return Err(ParseError::TooDeep);
    }
    catch(|| {
        yaml_serde::from_str::<YamlDoc>(text)
            .map(|d| d.0)
            .map_err(ParseError::Yaml)
    })
}

/// Parse JSON5 into a bounded tree. Never panics.
pub(crate) fn parse_json5(text: &str) -> Result<Node, ParseError> {
    catch(|| {
        json5::from_str::<Json5Doc>(text)
            .map(|d| d.0)
            .map_err(ParseError::Json5)
    })
}

/// The deepest `[`/`{` nesting in `text`, counting every bracket (also
/// those in strings and comments: an over-estimate, which only ever sends a
/// pathological block to the line parser).
fn max_bracket_depth(text: &str) -> usize {
    let mut depth = 0usize;
    let mut max = 0usize;
    for b in text.bytes() {
        match b {
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

fn catch(f: impl FnOnce() -> Result<Node, ParseError>) -> Result<Node, ParseError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(Err(ParseError::Panicked))
}

/// JavaScript's `String(number)`.
pub(crate) fn js_number(v: f64) -> String {
    if v.is_nan() {
        return "NaN".to_owned();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    if v == 0.0 {
        return "0".to_owned();
    }
    let abs = v.abs();
    if !(1e-6..1e21).contains(&abs) {
        // Rust's `{:e}` gives the same shortest digits; JavaScript writes a
        // `+` before a positive exponent.
        let s = format!("{v:e}");
        return match s.split_once('e') {
            Some((mantissa, exp)) if !exp.starts_with('-') => format!("{mantissa}e+{exp}"),
            Some(_) | None => s,
        };
    }
    if v.fract() == 0.0 {
        return format!("{v:.0}");
    }
    format!("{v}")
}

/// `JSON.stringify(value)`: compact, non-finite numbers as `null`, integer-like
/// keys first (JavaScript's property order).
pub(crate) fn to_compact_json(node: &Node) -> String {
    let mut out = String::new();
    write_json(node, &mut out);
    out
}

fn write_json(node: &Node, out: &mut String) {
    match node {
        Node::Null => out.push_str("null"),
        Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Node::Int(i) => out.push_str(&i.to_string()),
        Node::Float(f) if f.is_finite() => out.push_str(&js_number(*f)),
        Node::Float(_) => out.push_str("null"),
        Node::Str(s) => write_json_string(s, out),
        Node::Seq(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, out);
            }
            out.push(']');
        }
        Node::Map(entries) => {
            let mut index_keys: Vec<(u32, &(String, Node))> = entries
                .iter()
                .filter_map(|e| array_index(&e.0).map(|n| (n, e)))
                .collect();
            index_keys.sort_by_key(|(n, _)| *n);
            let ordered = index_keys
                .into_iter()
                .map(|(_, e)| e)
                .chain(entries.iter().filter(|e| array_index(&e.0).is_none()));
            out.push('{');
            for (i, (key, value)) in ordered.enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(key, out);
                out.push(':');
                write_json(value, out);
            }
            out.push('}');
        }
    }
}

/// A canonical array index (`0`, `17`, below 2³² − 1).
fn array_index(key: &str) -> Option<u32> {
    if key.is_empty()
        || (key.len() > 1 && key.starts_with('0'))
        || !key.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    key.parse::<u32>().ok().filter(|n| *n != u32::MAX)
}

/// A JSON string literal, escaped as `JSON.stringify` does.
pub(crate) fn write_json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}
