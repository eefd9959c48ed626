//! OpenClaw keys that Talon knows but does not use.
//!
//! Source: OpenClaw's config schema — `OpenClawSchema` in
//! `src/config/zod-schema.ts` (top-level keys), `AgentDefaultsSchema` /
//! `types.agent-defaults.ts` (`agents.defaults`), `AgentEntryBaseSchema` +
//! `AgentEntrySchema` / `types.agents.ts` (agent entries),
//! `ToolsSchema` / `AgentToolsSchema` / `AgentSandboxSchema` in
//! `src/config/zod-schema.agent-runtime.ts` — as of the 2026 releases
//! (v2026.7.x and the mid-2026 `main`), plus keys from older releases that
//! real files still carry (`agents.defaults.envelope*`, `embeddedPi`,
//! `imageGenerationModel`, …, and the top-level `nodes` section).
//!
//! Loading removes these keys before validation and reports each one as a
//! notice, so a whole `openclaw.json` loads. Keys Talon does interpret are
//! never in these tables (a unit test checks that against the schema).
//!
//! One class is treated differently: OpenClaw settings that *restrict*
//! tools (per-agent `toolsBySender` policies, `tools.exec.host`,
//! `safeBins`, …) which Talon does not enforce yet. Ignoring them would
//! silently widen access, so when such a key would restrict something it is
//! an error instead (fail closed); when it is inert it is ignored with a
//! notice like the others.

use serde_json::Value;

use crate::findings::Findings;
use crate::spans::{Seg, SpanNode};

/// Top-level OpenClaw sections Talon does not use.
pub(crate) const ROOT_IGNORED: &[&str] = &[
    "accessGroups",
    "acp",
    "approvals",
    "audio",
    "audit",
    "auth",
    "bindings",
    "broadcast",
    "canvasHost",
    "cli",
    "cloudWorkers",
    "commitments",
    "diagnostics",
    "discovery",
    "env",
    "hooks",
    "logging",
    "marketplaces",
    "media",
    "memory",
    "messages",
    "meta",
    "models",
    "nodeHost",
    "nodes",
    "proxy",
    "secrets",
    "security",
    "surfaces",
    "systemAgent",
    "talk",
    "transcripts",
    "tui",
    "ui",
    "update",
    "web",
    "wizard",
    "worktrees",
];

/// Top-level OpenClaw sections that can restrict tools and that Talon does
/// not enforce: a `browser` section that switches the browser or its
/// `evaluate` off or narrows its hosts (`ssrfPolicy.hostnameAllowlist`):
/// Talon's browser tool reads none of it (it uses web_fetch's allowlist),
/// so such a section is refused, and anything else in it is dropped with a
/// notice. (`channels` keeps its enforced tool policies and refuses the
/// others, see [`crate::channels`]; `plugins` is enforced, see
/// [`PLUGINS_IMPLEMENTED`].)
pub(crate) const ROOT_NARROWING: &[Narrowing] = &[("browser", browser_restricts)];

/// The `plugins.*` keys Talon enforces, on the tools of plugin tool
/// families (a tool's plugin id; MCP tools are `bundle-mcp`): the master
/// switch, the plugin id allow / deny lists and the per-plugin entries.
/// (Documentation and tests: the typed `PluginsConfig` is what loads.)
#[cfg(test)]
pub(crate) const PLUGINS_IMPLEMENTED: &[&str] = &["allow", "deny", "enabled", "entries"];

/// `plugins.*` keys Talon does not use: where OpenClaw loads plugin code
/// from and its install records (Talon loads no OpenClaw plugins).
pub(crate) const PLUGINS_IGNORED: &[&str] = &["installs", "load"];

/// `plugins.*` keys that can restrict and that Talon does not enforce: a
/// slot set to `"none"` (`slots.memory: "none"` turns OpenClaw's memory
/// tools off; Talon's memory tools are core and would stay).
pub(crate) const PLUGINS_NARROWING: &[Narrowing] = &[("slots", slot_disabled)];

/// `plugins.entries.<id>.*` keys Talon enforces (the typed
/// `PluginEntryConfig`).
#[cfg(test)]
pub(crate) const PLUGIN_ENTRY_IMPLEMENTED: &[&str] = &["enabled", "tools"];

/// `plugins.entries.<id>.*` keys Talon does not use: the plugin's own
/// settings and hook options (Talon runs no OpenClaw plugin code).
pub(crate) const PLUGIN_ENTRY_IGNORED: &[&str] = &["apiKey", "config", "env", "hooks"];

/// The `commands.*` key Talon enforces: the owner list, which decides
/// whether a sender relayed by a `runner` gateway token is the owner (and
/// so gets the owner-only tools). Every other `commands.*` key is inert
/// (Talon has no chat commands) and dropped with a notice.
pub(crate) const COMMANDS_IMPLEMENTED: &[&str] = &["ownerAllowFrom"];

/// `tools.*` keys Talon does not use (none of them restricts tools).
pub(crate) const TOOLS_IGNORED: &[&str] = &[
    "codeMode",
    "elevated",
    "github",
    "links",
    "media",
    "sessions_spawn",
    "swarm",
    "toolSearch",
    "updatePlan",
];

/// A key whose value may restrict tools, with the test for "it does".
pub(crate) type Narrowing = (&'static str, fn(&Value) -> bool);

/// `tools.*` keys that can restrict tools and that Talon does not enforce.
pub(crate) const TOOLS_NARROWING: &[Narrowing] = &[("message", non_empty)];

/// `tools.exec.*` OpenClaw keys Talon does not use (none restricts tools).
pub(crate) const EXEC_IGNORED: &[&str] = &["applyPatch", "node", "notifyOnExit", "pathPrepend"];

/// `tools.exec.*` (and an agent's `tools.exec.*`) OpenClaw keys that
/// restrict `exec` and that Talon does not enforce: where commands may run
/// (`host` other than `gateway`) and the stdin-only safe-bin fast path
/// (`safeBins`). `security` and `ask` are enforced (exec approvals).
pub(crate) const EXEC_NARROWING: &[Narrowing] = &[
    ("host", |v| v.as_str() != Some("gateway")),
    ("safeBins", non_empty),
];

/// `gateway.*` OpenClaw keys Talon does not use, none of which restricts
/// anything Talon serves: surfaces Talon does not have (Tailscale, the
/// remote client, TLS autogeneration's companions, the OpenAI-compatible
/// HTTP endpoints, nodes, the terminal) or settings whose absence is
/// stricter (`trustedProxies`: Talon never trusts forwarded addresses).
/// Source: `GatewayConfig` in OpenClaw's `src/config/types.gateway.ts` and
/// the `gateway.*` configuration reference.
pub(crate) const GATEWAY_IGNORED: &[&str] = &[
    "allowRealIpFallback",
    "channelHealthCheckMinutes",
    "customBindHost",
    "http",
    "mode",
    "nodes",
    "publicOrigin",
    "reload",
    "remote",
    "tailscale",
    "terminal",
    "trustedProxies",
];

/// `gateway.*` OpenClaw keys that restrict who may connect and that Talon
/// does not enforce: TLS on the listener, browser origins allowed to open
/// the WebSocket, and per-person roles.
pub(crate) const GATEWAY_NARROWING: &[Narrowing] = &[
    ("controlUi", control_ui_restricts),
    ("roles", non_empty),
    ("tls", enabled_restricts),
];

/// `gateway.auth.*` OpenClaw keys Talon does not use. Talon accepts only
/// its bearer tokens, so other modes, a password, Tailscale or proxy
/// identities and identity scopes can only make it stricter, never wider.
pub(crate) const GATEWAY_AUTH_IGNORED: &[&str] = &[
    "allowTailscale",
    "identityScopes",
    "mode",
    "password",
    "trustedProxy",
];

/// `gateway.auth.*` OpenClaw keys that restrict and that Talon does not
/// enforce as written: OpenClaw's failed-attempt limit (Talon's own is
/// `gateway.auth.maxFailures` / `windowMs`).
pub(crate) const GATEWAY_AUTH_NARROWING: &[Narrowing] = &[("rateLimit", non_empty)];

/// `agents.defaults.*` keys Talon does not use.
pub(crate) const DEFAULTS_IGNORED: &[&str] = &[
    "agentRuntime",
    "blockStreamingBreak",
    "blockStreamingChunk",
    "blockStreamingCoalesce",
    "blockStreamingDefault",
    "bootstrapMaxChars",
    "bootstrapPromptTruncationWarning",
    "bootstrapTotalMaxChars",
    "cliBackends",
    "compaction",
    "contextInjection",
    "contextLimits",
    "contextPruning",
    "contextTokens",
    "elevatedDefault",
    "embeddedAgent",
    "embeddedPi",
    "envelopeElapsed",
    "envelopeTimestamp",
    "envelopeTimezone",
    "experimental",
    "fastModeDefault",
    "heartbeat",
    "humanDelay",
    "imageGenerationModel",
    "imageMaxDimensionPx",
    "imageModel",
    "imageQuality",
    "llm",
    "maxConcurrent",
    "mediaGenerationAutoProviderFallback",
    "mediaMaxMb",
    "mediaModels",
    "model",
    "modelPolicy",
    "models",
    "musicGenerationModel",
    "params",
    "pdfMaxBytesMb",
    "pdfMaxMb",
    "pdfMaxPages",
    "pdfModel",
    "promptOverlays",
    "reasoningDefault",
    "repoRoot",
    "silentReply",
    "skills",
    "skipBootstrap",
    "skipOptionalBootstrapFiles",
    "startupContext",
    "systemAgent",
    "systemPromptOverride",
    "thinkingDefault",
    "timeFormat",
    "timeoutSeconds",
    "toolProgressDetail",
    "typingIntervalSeconds",
    "typingMode",
    "userTimezone",
    "utilityModel",
    "verboseDefault",
    "videoGenerationModel",
    "voiceModel",
];

/// Agent entry keys (`agents.list[]`, `agents.entries.*`) Talon does not use.
pub(crate) const AGENT_IGNORED: &[&str] = &[
    "agentDir",
    "agentRuntime",
    "bootstrapMaxChars",
    "bootstrapTotalMaxChars",
    "compaction",
    "contextInjection",
    "contextLimits",
    "contextTokens",
    "cwd",
    "decisionModel",
    "description",
    "embeddedAgent",
    "experimental",
    "fastModeDefault",
    "groupChat",
    "heartbeat",
    "humanDelay",
    "identity",
    "memory",
    "model",
    "modelPolicy",
    "models",
    "params",
    "reasoningDefault",
    "runRetries",
    "runtime",
    "skills",
    "skillsLimits",
    "thinkingDefault",
    "toolProgressDetail",
    "tts",
    "typingMode",
    "utilityModel",
    "verboseDefault",
];

/// Agent keys that can restrict tools and that Talon does not enforce per
/// agent: none today (a per-agent `memorySearch` is typed and merged over
/// the defaults, so `enabled: false` turns memory off for that agent).
pub(crate) const AGENT_NARROWING: &[Narrowing] = &[];

/// Agent `tools.*` keys Talon does not use (none of them restricts tools).
pub(crate) const AGENT_TOOLS_IGNORED: &[&str] = &["codeMode", "elevated", "github", "swarm"];

/// Agent `tools.*` keys that can restrict tools and that Talon does not
/// enforce per agent. (`toolsBySender` is enforced: the sender layer.)
pub(crate) const AGENT_TOOLS_NARROWING: &[Narrowing] = &[("message", non_empty)];

/// `session.*` keys Talon does not use (it reads `mainKey` and `scope`;
/// OpenClaw's `SessionConfig` in `src/config/types.base.ts`).
pub(crate) const SESSION_IGNORED: &[&str] = &[
    "agentToAgent",
    "dmScope",
    "identityLinks",
    "idleMinutes",
    "maintenance",
    "reset",
    "resetByChannel",
    "resetByType",
    "resetTriggers",
    "sendPolicy",
    "store",
    "threadBindings",
    "typingIntervalSeconds",
    "typingMode",
    "writeLock",
];

/// Sandbox keys (`agents.defaults.sandbox`, `agents.*.sandbox`) Talon does
/// not use.
pub(crate) const SANDBOX_IGNORED: &[&str] = &["sessionToolsVisibility"];

const SECTION_IGNORED: &str = "OpenClaw section not used by Talon (ignored)";
const SETTING_IGNORED: &str = "OpenClaw setting not used by Talon (ignored)";
const NARROWING_REFUSED: &str = "OpenClaw setting that restricts tools, which this version of Talon does not enforce; refused rather than ignored, because ignoring it would widen access (remove it, express the restriction with `tools.deny` or an agent's `tools.deny`, or list this key in `acceptUnenforced` to drop it knowingly)";

const GATEWAY_NARROWING_REFUSED: &str = "OpenClaw gateway setting that restricts who may connect (TLS, allowed browser origins or roles), which this version of Talon does not enforce; refused rather than ignored, because ignoring it would widen access (remove it knowingly, and keep the gateway on loopback or behind a proxy that enforces it)";
const GATEWAY_AUTH_LIMIT_REFUSED: &str = "OpenClaw's failed-attempt limit, which Talon does not read; refused rather than ignored, because Talon's default limit may be looser (set gateway.auth.maxFailures and gateway.auth.windowMs instead, then remove it)";

fn non_empty(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Bool(_) | Value::Number(_) | Value::String(_) => true,
    }
}

/// OpenClaw's `browser` section switches the browser or `evaluate` off, or
/// narrows the hosts it may reach.
fn browser_restricts(v: &Value) -> bool {
    let Value::Object(m) = v else {
        return false;
    };
    m.get("enabled") == Some(&Value::Bool(false))
        || m.get("evaluateEnabled") == Some(&Value::Bool(false))
        || m.get("ssrfPolicy")
            .and_then(|p| p.get("hostnameAllowlist"))
            .is_some_and(non_empty)
}

fn slot_disabled(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.values().any(|v| v.as_str() == Some("none")),
        _ => false,
    }
}

fn control_ui_restricts(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.get("allowedOrigins").is_some_and(non_empty),
        _ => false,
    }
}

fn enabled_restricts(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.get("enabled") != Some(&Value::Bool(false)) && !m.is_empty(),
        Value::Bool(b) => *b,
        _ => false,
    }
}

/// Take Talon's own keys ([`crate::sections::browser::TALON_KEYS`]) out
/// of `browser`; a section left empty goes too (nothing to note).
fn take_talon_browser_keys(root: &mut Value) -> Option<serde_json::Map<String, Value>> {
    let Value::Object(map) = root else {
        return None;
    };
    let Some(Value::Object(browser)) = map.get_mut("browser") else {
        return None;
    };
    let mut talon = serde_json::Map::new();
    for key in crate::sections::browser::TALON_KEYS {
        if let Some(v) = browser.remove(*key) {
            talon.insert((*key).to_owned(), v);
        }
    }
    if browser.is_empty() {
        map.remove("browser");
    }
    (!talon.is_empty()).then_some(talon)
}

/// The notice for a `commands.*` key other than `ownerAllowFrom`.
const COMMANDS_IGNORED_NOTE: &str =
    "OpenClaw chat-command setting not used by Talon (it has no chat commands); ignored";

/// Remove the known-but-unused OpenClaw keys from `root`, noting each, and
/// report restricting keys Talon cannot enforce.
pub(crate) fn strip(root: &mut Value, spans: &SpanNode, out: &mut Findings) {
    crate::channels::strip(root, spans, out);
    // Talon's own `browser` keys stay (typed); OpenClaw's are classified
    // with the rest of the section below.
    let talon_browser = take_talon_browser_keys(root);
    let mut path = Vec::new();
    strip_keys(
        root,
        Some(spans),
        &path,
        ROOT_IGNORED,
        ROOT_NARROWING,
        SECTION_IGNORED,
        out,
    );
    if let (Some(talon), Value::Object(map)) = (talon_browser, &mut *root) {
        map.insert("browser".to_owned(), Value::Object(talon));
    }
    let Value::Object(map) = root else {
        return;
    };
    if let Some(session) = map.get_mut("session") {
        path.push(Seg::Key("session".to_owned()));
        strip_keys(
            session,
            spans.member("session"),
            &path,
            SESSION_IGNORED,
            &[],
            SETTING_IGNORED,
            out,
        );
        path.pop();
    }
    if let Some(Value::Object(commands)) = map.get_mut("commands") {
        path.push(Seg::Key("commands".to_owned()));
        let inert: Vec<String> = commands
            .keys()
            .filter(|k| !COMMANDS_IMPLEMENTED.contains(&k.as_str()))
            .cloned()
            .collect();
        let span = spans.member("commands");
        for key in inert {
            commands.remove(&key);
            path.push(Seg::Key(key.clone()));
            let pos = span
                .and_then(|s| s.member(&key))
                .map(SpanNode::key_or_value)
                .unwrap_or_default();
            out.notice(&path, pos, COMMANDS_IGNORED_NOTE);
            path.pop();
        }
        path.pop();
    }
    if let Some(gateway) = map.get_mut("gateway") {
        strip_gateway(gateway, spans.member("gateway"), &mut path, out);
    }
    if let Some(plugins) = map.get_mut("plugins") {
        strip_plugins(plugins, spans.member("plugins"), &mut path, out);
    }
    if let Some(tools) = map.get_mut("tools") {
        path.push(Seg::Key("tools".to_owned()));
        strip_keys(
            tools,
            spans.member("tools"),
            &path,
            TOOLS_IGNORED,
            TOOLS_NARROWING,
            SETTING_IGNORED,
            out,
        );
        if let Some(exec) = tools.get_mut("exec") {
            path.push(Seg::Key("exec".to_owned()));
            strip_keys(
                exec,
                spans.member("tools").and_then(|t| t.member("exec")),
                &path,
                EXEC_IGNORED,
                EXEC_NARROWING,
                SETTING_IGNORED,
                out,
            );
            path.pop();
        }
        path.pop();
    }
    let Some(Value::Object(agents)) = map.get_mut("agents") else {
        return;
    };
    let agents_span = spans.member("agents");
    path.push(Seg::Key("agents".to_owned()));
    if let Some(defaults) = agents.get_mut("defaults") {
        let span = agents_span.and_then(|s| s.member("defaults"));
        path.push(Seg::Key("defaults".to_owned()));
        strip_keys(
            defaults,
            span,
            &path,
            DEFAULTS_IGNORED,
            &[],
            SETTING_IGNORED,
            out,
        );
        strip_sandbox(defaults, span, &mut path, out);
        path.pop();
    }
    if let Some(Value::Array(list)) = agents.get_mut("list") {
        let list_span = agents_span.and_then(|s| s.member("list"));
        path.push(Seg::Key("list".to_owned()));
        for (i, entry) in list.iter_mut().enumerate() {
            path.push(Seg::Index(i));
            strip_agent(entry, list_span.and_then(|s| s.element(i)), &mut path, out);
            path.pop();
        }
        path.pop();
    }
    if let Some(Value::Object(entries)) = agents.get_mut("entries") {
        let entries_span = agents_span.and_then(|s| s.member("entries"));
        path.push(Seg::Key("entries".to_owned()));
        for (id, entry) in entries.iter_mut() {
            path.push(Seg::Key(id.clone()));
            strip_agent(
                entry,
                entries_span.and_then(|s| s.member(id)),
                &mut path,
                out,
            );
            path.pop();
        }
        path.pop();
    }
}

fn strip_gateway(
    gateway: &mut Value,
    span: Option<&SpanNode>,
    path: &mut Vec<Seg>,
    out: &mut Findings,
) {
    path.push(Seg::Key("gateway".to_owned()));
    strip_keys_with(
        gateway,
        span,
        path,
        GATEWAY_IGNORED,
        GATEWAY_NARROWING,
        SETTING_IGNORED,
        GATEWAY_NARROWING_REFUSED,
        out,
    );
    if let Value::Object(map) = gateway
        && let Some(auth) = map.get_mut("auth")
    {
        path.push(Seg::Key("auth".to_owned()));
        strip_keys_with(
            auth,
            span.and_then(|s| s.member("auth")),
            path,
            GATEWAY_AUTH_IGNORED,
            GATEWAY_AUTH_NARROWING,
            SETTING_IGNORED,
            GATEWAY_AUTH_LIMIT_REFUSED,
            out,
        );
        path.pop();
    }
    path.pop();
}

fn strip_plugins(
    plugins: &mut Value,
    span: Option<&SpanNode>,
    path: &mut Vec<Seg>,
    out: &mut Findings,
) {
    path.push(Seg::Key("plugins".to_owned()));
    strip_keys(
        plugins,
        span,
        path,
        PLUGINS_IGNORED,
        PLUGINS_NARROWING,
        SETTING_IGNORED,
        out,
    );
    if let Some(Value::Object(entries)) = plugins.get_mut("entries") {
        let entries_span = span.and_then(|s| s.member("entries"));
        path.push(Seg::Key("entries".to_owned()));
        for (id, entry) in entries.iter_mut() {
            path.push(Seg::Key(id.clone()));
            strip_keys(
                entry,
                entries_span.and_then(|s| s.member(id)),
                path,
                PLUGIN_ENTRY_IGNORED,
                &[],
                SETTING_IGNORED,
                out,
            );
            path.pop();
        }
        path.pop();
    }
    path.pop();
}

fn strip_agent(
    entry: &mut Value,
    span: Option<&SpanNode>,
    path: &mut Vec<Seg>,
    out: &mut Findings,
) {
    strip_keys(
        entry,
        span,
        path,
        AGENT_IGNORED,
        AGENT_NARROWING,
        SETTING_IGNORED,
        out,
    );
    if let Value::Object(map) = entry
        && let Some(tools) = map.get_mut("tools")
    {
        path.push(Seg::Key("tools".to_owned()));
        strip_keys(
            tools,
            span.and_then(|s| s.member("tools")),
            path,
            AGENT_TOOLS_IGNORED,
            AGENT_TOOLS_NARROWING,
            SETTING_IGNORED,
            out,
        );
        if let Some(exec) = tools.get_mut("exec") {
            path.push(Seg::Key("exec".to_owned()));
            strip_keys(
                exec,
                span.and_then(|s| s.member("tools"))
                    .and_then(|t| t.member("exec")),
                path,
                EXEC_IGNORED,
                EXEC_NARROWING,
                SETTING_IGNORED,
                out,
            );
            path.pop();
        }
        path.pop();
    }
    strip_sandbox(entry, span, path, out);
}

fn strip_sandbox(
    parent: &mut Value,
    span: Option<&SpanNode>,
    path: &mut Vec<Seg>,
    out: &mut Findings,
) {
    if let Value::Object(map) = parent
        && let Some(sandbox) = map.get_mut("sandbox")
    {
        path.push(Seg::Key("sandbox".to_owned()));
        strip_keys(
            sandbox,
            span.and_then(|s| s.member("sandbox")),
            path,
            SANDBOX_IGNORED,
            &[],
            SETTING_IGNORED,
            out,
        );
        path.pop();
    }
}

fn strip_keys(
    value: &mut Value,
    span: Option<&SpanNode>,
    path: &[Seg],
    ignored: &[&str],
    narrowing: &[Narrowing],
    message: &str,
    out: &mut Findings,
) {
    strip_keys_with(
        value,
        span,
        path,
        ignored,
        narrowing,
        message,
        NARROWING_REFUSED,
        out,
    );
}

#[allow(clippy::too_many_arguments, reason = "one table walk, two messages")]
fn strip_keys_with(
    value: &mut Value,
    span: Option<&SpanNode>,
    path: &[Seg],
    ignored: &[&str],
    narrowing: &[Narrowing],
    message: &str,
    refused: &str,
    out: &mut Findings,
) {
    let Value::Object(map) = value else {
        return;
    };
    let mut key_path = path.to_vec();
    for key in ignored {
        if map.remove(*key).is_some() {
            key_path.push(Seg::Key((*key).to_owned()));
            let pos = span
                .and_then(|s| s.member(key))
                .map(SpanNode::key_or_value)
                .unwrap_or_default();
            out.notice(&key_path, pos, message);
            key_path.pop();
        }
    }
    for (key, restricts) in narrowing {
        if let Some(v) = map.remove(*key) {
            key_path.push(Seg::Key((*key).to_owned()));
            let pos = span
                .and_then(|s| s.member(key))
                .map(SpanNode::key_or_value)
                .unwrap_or_default();
            if restricts(&v) {
                out.refuse_unless_accepted(&key_path, pos, refused);
            } else {
                out.notice(&key_path, pos, message);
            }
            key_path.pop();
        }
    }
}

/// Every OpenClaw key Talon classifies, as the Markdown table of
/// `docs/openclaw-keys.md` (a test keeps that file equal to this).
#[cfg(test)]
pub(crate) fn classified_keys_markdown() -> String {
    let ignored: [(&str, &[&str]); 12] = [
        ("plugins.", PLUGINS_IGNORED),
        ("plugins.entries.<id>.", PLUGIN_ENTRY_IGNORED),
        ("", ROOT_IGNORED),
        ("tools.", TOOLS_IGNORED),
        ("tools.exec.", EXEC_IGNORED),
        ("agents.defaults.", DEFAULTS_IGNORED),
        ("agents.list[].", AGENT_IGNORED),
        ("agents.list[].tools.", AGENT_TOOLS_IGNORED),
        ("session.", SESSION_IGNORED),
        ("<sandbox>.", SANDBOX_IGNORED),
        ("gateway.", GATEWAY_IGNORED),
        ("gateway.auth.", GATEWAY_AUTH_IGNORED),
    ];
    let narrowing: [(&str, &[Narrowing]); 9] = [
        ("plugins.", PLUGINS_NARROWING),
        ("agents.list[].", AGENT_NARROWING),
        ("", ROOT_NARROWING),
        ("tools.", TOOLS_NARROWING),
        ("tools.exec.", EXEC_NARROWING),
        ("agents.list[].tools.", AGENT_TOOLS_NARROWING),
        ("agents.list[].tools.exec.", EXEC_NARROWING),
        ("gateway.", GATEWAY_NARROWING),
        ("gateway.auth.", GATEWAY_AUTH_NARROWING),
    ];
    let mut rows: Vec<(String, &str)> = Vec::new();
    for (prefix, keys) in ignored {
        for key in keys {
            rows.push((
                format!("{prefix}{key}"),
                "not narrowing: dropped with a notice",
            ));
        }
    }
    for (prefix, keys) in narrowing {
        for (key, _) in keys {
            rows.push((
                format!("{prefix}{key}"),
                "narrowing: a load error when it restricts (unless `acceptUnenforced` names it), else dropped with a notice",
            ));
        }
    }
    rows.push((
        "commands.*".to_owned(),
        "not narrowing: dropped with a notice (Talon has no chat commands), except `commands.ownerAllowFrom`",
    ));
    for key in crate::sections::browser::TALON_KEYS {
        rows.push((
            format!("browser.{key}"),
            "Talon-only: kept and typed (the `browser` tool's download limit, 1 byte to 4 GiB); OpenClaw's other `browser` keys are classified as the `browser` row says",
        ));
    }
    for key in COMMANDS_IMPLEMENTED {
        rows.push((
            format!("commands.{key}"),
            "implemented: the gateway's owner list, with `gateway.auth.ownerAllowFrom` (a sender a `runner` token relays is the owner only when listed)",
        ));
    }
    for key in PLUGINS_IMPLEMENTED.iter().filter(|k| **k != "entries") {
        rows.push((
            format!("plugins.{key}"),
            "implemented: the `plugins` policy layer on plugin tool families (a disabled, denied or not-allowed plugin's tools are removed; `policy explain` names the key)",
        ));
    }
    for key in ["tools", "toolsBySender"] {
        for at in [
            "channels.<provider>",
            "channels.<provider>.groups.<id>",
            "channels.<provider>.accounts.<id>.groups.<id>",
        ] {
            rows.push((
                format!("{at}.{key}"),
                "implemented: the `group` policy layer for runs of that provider (and group, account, sender); `policy explain` names the key",
            ));
        }
    }
    rows.push((
        "channels.<provider>.*".to_owned(),
        "not narrowing: dropped with a notice (bot tokens, `dmPolicy`, `requireMention`, ...), except the policies above",
    ));
    rows.push((
        "channels.**.tools / toolsBySender (elsewhere)".to_owned(),
        "narrowing: a load error naming the key when it restricts (`direct.<id>.tools`, Discord's `guilds.<id>.channels.<id>.tools`, ...), unless `acceptUnenforced` names it",
    ));
    rows.push((
        "agents.list[].tools.toolsBySender".to_owned(),
        "implemented: the `sender` policy layer (a match wins over `tools.toolsBySender`)",
    ));
    for key in PLUGIN_ENTRY_IMPLEMENTED {
        rows.push((
            format!("plugins.entries.<id>.{key}"),
            "implemented: the `plugins` policy layer, for that plugin's tools only",
        ));
    }
    rows.sort();
    let mut out = String::from(
        "<!-- Generated from crates/config/src/openclaw_keys.rs by its tests (UPDATE_DOCS=1 regenerates). -->\n\n\
         # OpenClaw keys Talon does not implement\n\n\
         Every key below is accepted in a Talon config (so an `openclaw.json` loads) and \
         classified. A *not narrowing* key can only make Talon stricter by its absence and is \
         dropped with a notice. A *narrowing* key would remove a tool, a permission or a way in; \
         when its value restricts something, Talon refuses the file naming the key, because \
         ignoring it would widen access. Drop one knowingly by listing the key in \
         `acceptUnenforced` exactly as the error prints it (an agent's key with its index, \
         `agents.list[0].tools.message`; a parent never covers the keys below it); \
         `talon policy explain` and `talon security audit` \
         (`talon.config.unenforced_restrictions`) then show it. `<sandbox>` is \
         `agents.defaults.sandbox` or an agent's `sandbox`; `agents.list[]` stands for \
         every agent entry (and `agents.entries.<id>`).\n\n\
         | key | class |\n|---|---|\n",
    );
    for (key, class) in rows {
        out.push_str(&format!("| `{key}` | {class} |\n"));
    }
    out
}

#[cfg(test)]
#[path = "openclaw_keys_tests.rs"]
mod tests;
