//! Positions and key paths: where each key and value of a parsed file is.

use std::collections::HashMap;
use std::fmt;

/// A 1-based line and column. Columns count Unicode scalar values, so a
/// tab or an emoji is one column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) struct Pos {
    pub(crate) line: u32,
    pub(crate) column: u32,
}

/// One step of a key path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Seg {
    /// An object member.
    Key(String),
    /// An array element.
    Index(usize),
}

/// Render a key path the way errors show it: dotted keys, `[i]` for array
/// elements, and `["…"]` (JSON-escaped) for keys that are not made only of
/// ASCII letters, digits, `_`, `-` and `$`.
pub(crate) fn render_path(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(key) if is_plain_key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Seg::Key(key) => {
                out.push('[');
                out.push_str(&quote(key));
                out.push(']');
            }
            Seg::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
    out
}

fn is_plain_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'$'))
}

/// A JSON string literal for `s` (control characters escaped).
pub(crate) fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
}

/// Where one node of the parsed document sits, and where its children sit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SpanNode {
    /// The position of the member's key (object members only).
    pub(crate) key: Option<Pos>,
    /// The position of the first character of the value.
    pub(crate) value: Pos,
    /// The children of an object or an array.
    pub(crate) children: SpanChildren,
}

/// The span nodes of an object's members or an array's elements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SpanChildren {
    /// A scalar.
    None,
    /// An object, by key (the first occurrence of a duplicated key).
    Object(HashMap<String, SpanNode>),
    /// An array, by index.
    Array(Vec<SpanNode>),
}

impl SpanNode {
    /// A node for a value that has no recorded position.
    pub(crate) fn unknown() -> SpanNode {
        SpanNode {
            key: None,
            value: Pos::default(),
            children: SpanChildren::None,
        }
    }

    /// The member `key` of this object node.
    pub(crate) fn member(&self, key: &str) -> Option<&SpanNode> {
        match &self.children {
            SpanChildren::Object(map) => map.get(key),
            SpanChildren::None | SpanChildren::Array(_) => None,
        }
    }

    /// The element `index` of this array node.
    pub(crate) fn element(&self, index: usize) -> Option<&SpanNode> {
        match &self.children {
            SpanChildren::Array(items) => items.get(index),
            SpanChildren::None | SpanChildren::Object(_) => None,
        }
    }

    /// Follow `path` down from this node.
    pub(crate) fn lookup(&self, path: &[Seg]) -> Option<&SpanNode> {
        let mut node = self;
        for seg in path {
            node = match seg {
                Seg::Key(k) => node.member(k)?,
                Seg::Index(i) => node.element(*i)?,
            };
        }
        Some(node)
    }

    /// The key's position if there is one, else the value's.
    pub(crate) fn key_or_value(&self) -> Pos {
        self.key.unwrap_or(self.value)
    }
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}
