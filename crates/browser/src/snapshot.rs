//! The accessibility snapshot: Chromium's full AX tree
//! (`Accessibility.getFullAXTree`) rendered as an indented list of
//! `- role "name" [ref=eN]` lines, with a ref for each element the model
//! can act on. Pure: takes the browser's node list, returns text and refs.

use std::collections::HashMap;

use serde_json::Value;

/// How a snapshot is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotOptions {
    /// Only interactive elements, as a flat list.
    pub interactive: bool,
    /// The deepest level rendered (0 = top level only).
    pub max_depth: Option<usize>,
    /// The most characters of text returned (more is cut, and says so).
    pub max_chars: usize,
}

impl Default for SnapshotOptions {
    fn default() -> Self {
        SnapshotOptions {
            interactive: false,
            max_depth: None,
            max_chars: 40_000,
        }
    }
}

/// A rendered snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The text the model reads.
    pub text: String,
    /// Each ref (`e1`, `e2`, ...) and the backend DOM node it stands for.
    pub refs: Vec<(String, i64)>,
    /// Whether `text` was cut at `max_chars`.
    pub truncated: bool,
}

/// Roles the model acts on.
const INTERACTIVE: &[&str] = &[
    "button",
    "link",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "tab",
    "switch",
    "slider",
    "spinbutton",
    "treeitem",
];

/// Roles never rendered themselves (their children are).
const TRANSPARENT: &[&str] = &[
    "generic",
    "none",
    "presentation",
    "LabelText",
    "MenuListPopup",
    "InlineTextBox",
    "LineBreak",
];

/// Roles whose line is only text.
const TEXT_ROLES: &[&str] = &["StaticText", "text"];

/// The longest name or value rendered on a line.
const MAX_LABEL_CHARS: usize = 200;

struct Node<'a> {
    raw: &'a Value,
    children: Vec<&'a str>,
}

fn ax_str<'a>(node: &'a Value, key: &str) -> &'a str {
    node.get(key)
        .and_then(|v| v.get("value"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn label(s: &str) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let flat = flat.trim();
    let mut out: String = flat.chars().take(MAX_LABEL_CHARS).collect();
    if flat.chars().count() > MAX_LABEL_CHARS {
        out.push('…');
    }
    out.replace('"', "\\\"")
}

fn property<'a>(node: &'a Value, name: &str) -> Option<&'a Value> {
    node.get("properties")?
        .as_array()?
        .iter()
        .find(|p| p.get("name").and_then(Value::as_str) == Some(name))?
        .get("value")?
        .get("value")
}

/// Render the node list of `Accessibility.getFullAXTree`.
pub fn render(nodes: &[Value], options: SnapshotOptions) -> Snapshot {
    let mut by_id: HashMap<&str, Node<'_>> = HashMap::new();
    let mut root: Option<&str> = None;
    for n in nodes {
        let Some(id) = n.get("nodeId").and_then(Value::as_str) else {
            continue;
        };
        let children = n
            .get("childIds")
            .and_then(Value::as_array)
            .map(|c| c.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if root.is_none() && n.get("parentId").is_none() {
            root = Some(id);
        }
        by_id.insert(id, Node { raw: n, children });
    }
    let mut out = Renderer {
        by_id: &by_id,
        options,
        text: String::new(),
        refs: Vec::new(),
        truncated: false,
        visited: 0,
    };
    if let Some(root) = root {
        out.walk(root, 0, "");
    }
    if out.text.is_empty() {
        out.text.push_str("(empty page)\n");
    }
    Snapshot {
        text: out.text,
        refs: out.refs,
        truncated: out.truncated,
    }
}

struct Renderer<'a> {
    by_id: &'a HashMap<&'a str, Node<'a>>,
    options: SnapshotOptions,
    text: String,
    refs: Vec<(String, i64)>,
    truncated: bool,
    /// Nodes walked, so a cyclic or huge tree ends.
    visited: usize,
}

impl Renderer<'_> {
    fn walk(&mut self, id: &str, depth: usize, parent_name: &str) {
        self.visited += 1;
        if self.truncated || self.visited > 200_000 || depth > 512 {
            return;
        }
        let Some(node) = self.by_id.get(id) else {
            return;
        };
        let raw = node.raw;
        let role = ax_str(raw, "role");
        let name = ax_str(raw, "name");
        let ignored = raw.get("ignored").and_then(Value::as_bool).unwrap_or(false);
        let skipped = ignored
            || matches!(role, "RootWebArea" | "InlineTextBox" | "LineBreak")
            || (TRANSPARENT.contains(&role) && name.trim().is_empty())
            || (TEXT_ROLES.contains(&role) && (name.trim().is_empty() || name == parent_name));
        let rendered = !skipped;
        let interactive = INTERACTIVE.contains(&role);
        let mut child_depth = depth;
        if rendered && (!self.options.interactive || interactive) {
            if self.options.max_depth.is_none_or(|max| depth <= max) {
                self.line(raw, role, name, depth, interactive);
            }
            if !self.options.interactive {
                child_depth = depth + 1;
            }
        }
        let name_for_children = if rendered { name } else { parent_name };
        for child in &node.children {
            self.walk(child, child_depth, name_for_children);
        }
    }

    fn line(&mut self, raw: &Value, role: &str, name: &str, depth: usize, interactive: bool) {
        let indent = "  ".repeat(depth.min(40));
        let mut line = if TEXT_ROLES.contains(&role) {
            format!("{indent}- text: \"{}\"", label(name))
        } else if name.trim().is_empty() {
            format!("{indent}- {role}")
        } else {
            format!("{indent}- {role} \"{}\"", label(name))
        };
        if let Some(level) = property(raw, "level").and_then(Value::as_i64) {
            line.push_str(&format!(" [level={level}]"));
        }
        for flag in ["checked", "pressed", "selected", "expanded"] {
            match property(raw, flag) {
                Some(Value::Bool(true)) => line.push_str(&format!(" [{flag}]")),
                Some(Value::String(s)) if s == "true" => line.push_str(&format!(" [{flag}]")),
                Some(Value::String(s)) if s == "mixed" => {
                    line.push_str(&format!(" [{flag}=mixed]"))
                }
                _ => {}
            }
        }
        if matches!(property(raw, "disabled"), Some(Value::Bool(true))) {
            line.push_str(" [disabled]");
        }
        let backend = raw.get("backendDOMNodeId").and_then(Value::as_i64);
        if let (Some(backend), true) = (backend, interactive || !TEXT_ROLES.contains(&role)) {
            let r = format!("e{}", self.refs.len() + 1);
            line.push_str(&format!(" [ref={r}]"));
            self.refs.push((r, backend));
        }
        if role == "link"
            && let Some(url) = property(raw, "url").and_then(Value::as_str)
        {
            line.push_str(&format!(" -> {}", label(url)));
        }
        let value = ax_str(raw, "value");
        if !value.is_empty() && value != name {
            line.push_str(&format!(": {}", label(value)));
        }
        line.push('\n');
        if self.text.len() + line.len() > self.options.max_chars {
            self.truncated = true;
            self.text
                .push_str("… (snapshot cut at maxChars; narrow it with interactive or depth)\n");
            return;
        }
        self.text.push_str(&line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(
        id: &str,
        parent: Option<&str>,
        role: &str,
        name: &str,
        kids: &[&str],
        backend: i64,
    ) -> Value {
        let mut n = json!({
            "nodeId": id,
            "ignored": false,
            "role": {"type": "role", "value": role},
            "name": {"type": "computedString", "value": name},
            "childIds": kids,
            "backendDOMNodeId": backend,
        });
        if let Some(p) = parent {
            n["parentId"] = json!(p);
        }
        n
    }

    #[test]
    fn renders_roles_names_and_refs() {
        let nodes = vec![
            node("1", None, "RootWebArea", "Form", &["2"], 1),
            node("2", Some("1"), "generic", "", &["3", "5", "6"], 2),
            node("3", Some("2"), "button", "Send", &["4"], 3),
            node("4", Some("3"), "StaticText", "Send", &[], 4),
            node("5", Some("2"), "heading", "Title \"x\"", &[], 5),
            node("6", Some("2"), "textbox", "Name", &[], 6),
        ];
        let snap = render(&nodes, SnapshotOptions::default());
        assert_eq!(
            snap.text,
            "- button \"Send\" [ref=e1]\n- heading \"Title \\\"x\\\"\" [ref=e2]\n- textbox \"Name\" [ref=e3]\n"
        );
        assert_eq!(
            snap.refs,
            vec![("e1".into(), 3), ("e2".into(), 5), ("e3".into(), 6)]
        );
        let only = render(
            &nodes,
            SnapshotOptions {
                interactive: true,
                ..SnapshotOptions::default()
            },
        );
        assert_eq!(only.refs.len(), 2);
        let cut = render(
            &nodes,
            SnapshotOptions {
                max_chars: 30,
                ..SnapshotOptions::default()
            },
        );
        assert!(cut.truncated);
    }

    #[test]
    fn a_cycle_ends() {
        let nodes = vec![
            node("1", None, "RootWebArea", "", &["2"], 1),
            node("2", Some("1"), "group", "g", &["1"], 2),
        ];
        let snap = render(&nodes, SnapshotOptions::default());
        assert!(snap.text.len() < 100_000);
    }
}
