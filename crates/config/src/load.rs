//! Loading: text → parsed → OpenClaw keys stripped → checked → typed.

use std::io::Read;
use std::path::Path;
use std::sync::OnceLock;

use serde_json::Value;

use crate::error::{ConfigError, Notice};
use crate::findings::Findings;
use crate::json5_spanned;
use crate::model::TalonConfig;
use crate::openclaw_keys;
use crate::schema_check;
use crate::semantic;
use crate::spans::{Seg, SpanNode, render_path};

/// The largest config file accepted (16 MiB).
pub const MAX_CONFIG_BYTES: u64 = 16 * 1024 * 1024;

/// A loaded configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// The configuration.
    pub config: TalonConfig,
    /// Ignored OpenClaw keys and sections accepted without validation, in
    /// file order.
    pub notices: Vec<Notice>,
    /// Where it came from (a path, or the name given to [`load_str`]).
    pub origin: String,
}

/// Read and load the config file at `path`.
///
/// The file must exist (a missing *default* file is handled by
/// [`crate::ConfigLocation::load`]).
pub fn load(path: &Path) -> Result<Loaded, ConfigError> {
    let origin = path.display().to_string();
    let io = |source| ConfigError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    if size > MAX_CONFIG_BYTES {
        return Err(ConfigError::TooLarge {
            origin,
            size,
            limit: MAX_CONFIG_BYTES,
        });
    }
    // Read at most one byte past the limit, in case the file grows after
    // the size check.
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(ConfigError::TooLarge {
            origin,
            size: bytes.len() as u64,
            limit: MAX_CONFIG_BYTES,
        });
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let valid = String::from_utf8_lossy(valid);
        let line = valid.matches('\n').count() + 1;
        let column = valid.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        ConfigError::Syntax {
            origin: origin.clone(),
            line: u32::try_from(line).unwrap_or(u32::MAX),
            column: u32::try_from(column).unwrap_or(u32::MAX),
            message: "the file is not valid UTF-8 text".to_owned(),
        }
    })?;
    load_str(&text, &origin)
}

/// Load a configuration from text. `origin` names it in messages (a path,
/// `<stdin>`, …).
///
/// An empty file (only whitespace and comments) is an empty configuration.
pub fn load_str(text: &str, origin: &str) -> Result<Loaded, ConfigError> {
    let size = text.len() as u64;
    if size > MAX_CONFIG_BYTES {
        return Err(ConfigError::TooLarge {
            origin: origin.to_owned(),
            size,
            limit: MAX_CONFIG_BYTES,
        });
    }
    let parsed = if json5_spanned::only_trivia(text) {
        json5_spanned::Parsed {
            value: Value::Object(serde_json::Map::new()),
            spans: SpanNode::unknown(),
            problems: Vec::new(),
        }
    } else {
        json5_spanned::parse(text).map_err(|e| ConfigError::Syntax {
            origin: origin.to_owned(),
            line: e.pos.line,
            column: e.pos.column,
            message: e.message,
        })?
    };
    let json5_spanned::Parsed {
        mut value,
        spans,
        problems,
    } = parsed;
    let mut findings = Findings::default();
    for problem in problems {
        findings.issue(&problem.path, problem.pos, problem.message);
    }
    if !value.is_object() {
        findings.issue(
            &[],
            spans.value,
            format!(
                "the configuration must be an object (`{{ … }}`), found {}",
                schema_check::describe_value(&value)
            ),
        );
        return Err(invalid(origin, &mut findings));
    }
    findings.accept(accepted_unenforced(&value));
    // `channels.webhook` / `channels.irc` connection settings are typed;
    // the rest of `channels` goes through the OpenClaw-key pass as before.
    // Their policy keys stay in `channels` for the policy side.
    let connections = crate::channel_connections::split_connections(&mut value);
    openclaw_keys::strip(&mut value, &spans, &mut findings);
    for (i, entry) in findings.unused_acceptances() {
        let path = vec![Seg::Key("acceptUnenforced".to_owned()), Seg::Index(i)];
        let pos = spans.lookup(&path).map(|s| s.value).unwrap_or_default();
        findings.issue(
            &path,
            pos,
            format!(
                "`{entry}` names no restriction this file has that Talon refuses; remove it (an acknowledgement must match what it drops)"
            ),
        );
    }
    schema_check::check(validation_schema(), &value, &spans, &mut findings);
    // The connection settings are checked at their own keys
    // (`channels.webhook.url`, ...): the same spans, a root holding only them.
    let connections = connections.map(|taken| {
        let root = serde_json::json!({ "channels": Value::Object(taken) });
        schema_check::check(
            crate::channel_connections::validation_schema(),
            &root,
            &spans,
            &mut findings,
        );
        root
    });
    semantic::check(&value, &spans, &mut findings);
    accepted_notices(&value, &spans, &mut findings);
    if !findings.issues.is_empty() {
        return Err(invalid(origin, &mut findings));
    }
    let config: TalonConfig = match serde_path_to_error::deserialize(&value) {
        Ok(config) => config,
        Err(e) => {
            // The structural check should have caught this; say where serde
            // stopped rather than nothing.
            let path = serde_path(e.path());
            let pos = spans.lookup(&path).map(|s| s.value).unwrap_or_default();
            findings.issue(&path, pos, e.inner().to_string());
            return Err(invalid(origin, &mut findings));
        }
    };
    default_agent_notices(&value, &spans, &mut findings);
    let mut config = config;
    if let Some(root) = connections {
        match serde_path_to_error::deserialize::<_, crate::channel_connections::ConnectionsRoot>(
            &root,
        ) {
            Ok(typed) => config.channel_connections = Some(typed.channels),
            Err(e) => {
                let path = serde_path(e.path());
                let pos = spans.lookup(&path).map(|s| s.value).unwrap_or_default();
                findings.issue(&path, pos, e.inner().to_string());
                return Err(invalid(origin, &mut findings));
            }
        }
    }
    config.dropped_restrictions = std::mem::take(&mut findings.dropped_knowingly);
    Ok(Loaded {
        config,
        notices: findings.sorted_notices(),
        origin: origin.to_owned(),
    })
}

fn invalid(origin: &str, findings: &mut Findings) -> ConfigError {
    ConfigError::Invalid {
        origin: origin.to_owned(),
        issues: findings.sorted_issues(),
    }
}

fn serde_path(path: &serde_path_to_error::Path) -> Vec<Seg> {
    path.iter()
        .filter_map(|seg| match seg {
            serde_path_to_error::Segment::Seq { index } => Some(Seg::Index(*index)),
            serde_path_to_error::Segment::Map { key } => Some(Seg::Key(key.clone())),
            serde_path_to_error::Segment::Enum { variant } => Some(Seg::Key(variant.clone())),
            serde_path_to_error::Segment::Unknown => None,
        })
        .collect()
}

/// The key paths listed in `acceptUnenforced` (strings only; the schema
/// check reports anything else there).
fn accepted_unenforced(root: &Value) -> Vec<String> {
    root.get("acceptUnenforced")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

const NOT_VALIDATED: &str = "accepted; not validated by this version of Talon";

/// Notices for the sections typed as free-form JSON.
fn accepted_notices(root: &Value, spans: &SpanNode, out: &mut Findings) {
    let present = |v: Option<&Value>| v.is_some_and(|v| !v.is_null());
    let note = |path: &[&str], out: &mut Findings| {
        let segs: Vec<Seg> = path.iter().map(|k| Seg::Key((*k).to_owned())).collect();
        let pos = spans
            .lookup(&segs)
            .map(SpanNode::key_or_value)
            .unwrap_or_default();
        out.notice(&segs, pos, NOT_VALIDATED);
    };
    for section in ["sandbox"] {
        if present(root.get(section)) {
            note(&[section], out);
        }
    }
    let Some(agents) = root.get("agents") else {
        return;
    };
    let mut sandboxes: Vec<(Vec<Seg>, &Value)> = Vec::new();
    if let Some(s) = agents.get("defaults").and_then(|d| d.get("sandbox")) {
        sandboxes.push((keys(&["agents", "defaults", "sandbox"]), s));
    }
    if let Some(Value::Array(list)) = agents.get("list") {
        for (i, entry) in list.iter().enumerate() {
            if let Some(s) = entry.get("sandbox") {
                let mut p = keys(&["agents", "list"]);
                p.push(Seg::Index(i));
                p.push(Seg::Key("sandbox".to_owned()));
                sandboxes.push((p, s));
            }
        }
    }
    if let Some(Value::Object(entries)) = agents.get("entries") {
        for (id, body) in entries {
            if let Some(s) = body.get("sandbox") {
                let mut p = keys(&["agents", "entries"]);
                p.push(Seg::Key(id.clone()));
                p.push(Seg::Key("sandbox".to_owned()));
                sandboxes.push((p, s));
            }
        }
    }
    // `sandbox.browser`: every key is checked; one Talon cannot honour
    // is refused by name (see `sections::sandbox_browser`).
    for (mut path, sandbox) in sandboxes {
        let Some(browser) = sandbox.get("browser").filter(|v| !v.is_null()) else {
            continue;
        };
        path.push(Seg::Key("browser".to_owned()));
        if let Err(problems) = crate::sections::sandbox_browser::parse(browser) {
            for problem in problems {
                let mut at = path.clone();
                if !problem.key.is_empty() {
                    at.push(Seg::Key(problem.key.clone()));
                }
                let pos = spans
                    .lookup(&at)
                    .map(SpanNode::key_or_value)
                    .unwrap_or_default();
                out.issue(&at, pos, problem.message);
            }
        }
    }
}

fn keys(names: &[&str]) -> Vec<Seg> {
    names.iter().map(|k| Seg::Key((*k).to_owned())).collect()
}

/// A notice when more than one agent says `default: true`.
fn default_agent_notices(root: &Value, spans: &SpanNode, out: &mut Findings) {
    let Some(agents) = root.get("agents") else {
        return;
    };
    let mut defaults: Vec<Vec<Seg>> = Vec::new();
    if let Some(Value::Array(list)) = agents.get("list") {
        for (i, entry) in list.iter().enumerate() {
            if entry.get("default") == Some(&Value::Bool(true)) {
                let mut p = keys(&["agents", "list"]);
                p.push(Seg::Index(i));
                p.push(Seg::Key("default".to_owned()));
                defaults.push(p);
            }
        }
    }
    if let Some(Value::Object(entries)) = agents.get("entries") {
        let mut ids: Vec<&String> = entries.keys().collect();
        ids.sort();
        for id in ids {
            if entries.get(id).and_then(|b| b.get("default")) == Some(&Value::Bool(true)) {
                let mut p = keys(&["agents", "entries"]);
                p.push(Seg::Key(id.clone()));
                p.push(Seg::Key("default".to_owned()));
                defaults.push(p);
            }
        }
    }
    if let Some((first, rest)) = defaults.split_first() {
        for path in rest {
            let pos = spans
                .lookup(path)
                .map(SpanNode::key_or_value)
                .unwrap_or_default();
            out.notice(
                path,
                pos,
                format!(
                    "more than one agent is marked `default: true`; `{}` is used",
                    render_path(&first[..first.len() - 1])
                ),
            );
        }
    }
}

/// The schema the loader validates against: schemars' schema of
/// [`TalonConfig`], generated once.
pub(crate) fn validation_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| schemars::schema_for!(TalonConfig).to_value())
}

/// The JSON Schema of the whole config file (for `talon config schema` and
/// editors).
///
/// It is schemars' schema of [`TalonConfig`], plus, where OpenClaw keys are
/// accepted and ignored (top level, `tools`, `agents.defaults`, agent
/// entries, their `tools` and `sandbox`), those keys as
/// unconstrained properties described "ignored by Talon", so an editor
/// does not flag a pasted `openclaw.json`.
pub fn config_schema() -> Value {
    let mut schema = validation_schema().clone();
    let root_note = "OpenClaw section not used by Talon (ignored)";
    let note = "OpenClaw setting not used by Talon (ignored)";
    add_ignored(&mut schema, openclaw_keys::ROOT_IGNORED, root_note);
    let narrowing = "OpenClaw section not used by Talon: dropped, except the tool restrictions in it, which are refused unless `acceptUnenforced` names them";
    add_ignored(
        &mut schema,
        &keys_of(openclaw_keys::ROOT_NARROWING),
        narrowing,
    );
    // OpenClaw's other `browser` keys load (dropped or refused by the
    // OpenClaw-key pass); an editor should not flag them.
    if let Some(Value::Object(def)) = schema.pointer_mut("/$defs/BrowserConfig") {
        def.insert(
            "additionalProperties".to_owned(),
            serde_json::json!({ "description": narrowing }),
        );
    }
    // A channel's other OpenClaw settings (bot tokens, `dmPolicy`, ...)
    // load with a notice; an editor should not flag them.
    for def in [
        "ChannelToolsConfig",
        "ChannelGroupToolsConfig",
        "ChannelAccountToolsConfig",
    ] {
        if let Some(Value::Object(def)) = schema.pointer_mut(&format!("/$defs/{def}")) {
            def.insert(
                "additionalProperties".to_owned(),
                serde_json::json!({ "description": "OpenClaw channel setting not used by Talon (ignored); a `tools` or `toolsBySender` below it is refused" }),
            );
        }
    }
    // Talon's own channels: their connection settings are checked
    // separately (`channel_connections`); the served schema carries their
    // definitions so an editor completes them.
    let connections = crate::channel_connections::validation_schema();
    if let (Some(Value::Object(defs)), Some(Value::Object(conn_defs))) =
        (schema.get_mut("$defs"), connections.get("$defs"))
    {
        for (name, def) in conn_defs {
            defs.entry(name.clone()).or_insert_with(|| def.clone());
        }
    }
    if let Some(Value::Object(props)) = schema.pointer_mut("/properties/channels") {
        let mut talon = serde_json::Map::new();
        for (id, def) in [
            ("webhook", "WebhookChannelConfig"),
            ("irc", "IrcChannelConfig"),
        ] {
            talon.insert(
                id.to_owned(),
                serde_json::json!({
                    "description": format!("Talon's `{id}` channel for the `message` tool (connection settings, `$defs/{def}`), beside the channel policy keys every provider takes"),
                    "anyOf": [
                        { "$ref": format!("#/$defs/{def}") },
                        { "$ref": "#/$defs/ChannelToolsConfig" }
                    ]
                }),
            );
        }
        props.insert("properties".to_owned(), Value::Object(talon));
    }
    if let Some(def) = schema.pointer_mut("/$defs/GatewayConfig") {
        add_ignored(def, openclaw_keys::GATEWAY_IGNORED, note);
        add_ignored(
            def,
            &keys_of(openclaw_keys::GATEWAY_NARROWING),
            "OpenClaw setting refused when it restricts who may connect (Talon does not enforce it)",
        );
    }
    if let Some(def) = schema.pointer_mut("/$defs/PluginsConfig") {
        add_ignored(def, openclaw_keys::PLUGINS_IGNORED, note);
        add_ignored(
            def,
            &keys_of(openclaw_keys::PLUGINS_NARROWING),
            "OpenClaw plugin slots: refused when a slot is \"none\" (Talon's memory tools are core), else dropped",
        );
    }
    if let Some(def) = schema.pointer_mut("/$defs/PluginEntryConfig") {
        add_ignored(def, openclaw_keys::PLUGIN_ENTRY_IGNORED, note);
    }
    if let Some(def) = schema.pointer_mut("/$defs/GatewayAuthConfig") {
        add_ignored(def, openclaw_keys::GATEWAY_AUTH_IGNORED, note);
        add_ignored(
            def,
            &keys_of(openclaw_keys::GATEWAY_AUTH_NARROWING),
            "OpenClaw setting refused: use maxFailures and windowMs",
        );
    }
    let defs: [(&str, &[&str]); 7] = [
        ("ToolsConfig", openclaw_keys::TOOLS_IGNORED),
        ("AgentDefaults", openclaw_keys::DEFAULTS_IGNORED),
        ("AgentEntry", openclaw_keys::AGENT_IGNORED),
        ("AgentBody", openclaw_keys::AGENT_IGNORED),
        ("AgentToolsConfig", openclaw_keys::AGENT_TOOLS_IGNORED),
        ("SandboxConfig", openclaw_keys::SANDBOX_IGNORED),
        ("SessionSection", openclaw_keys::SESSION_IGNORED),
    ];
    for (name, ignored) in defs {
        if let Some(def) = schema.pointer_mut(&format!("/$defs/{name}")) {
            add_ignored(def, ignored, note);
        }
    }
    schema
}

fn keys_of(table: &[openclaw_keys::Narrowing]) -> Vec<&'static str> {
    table.iter().map(|(k, _)| *k).collect()
}

fn add_ignored(schema: &mut Value, keys: &[&str], note: &str) {
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        for key in keys {
            props
                .entry((*key).to_owned())
                .or_insert_with(|| serde_json::json!({ "description": note }));
        }
    }
}

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;
