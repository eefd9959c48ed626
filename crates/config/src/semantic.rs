//! Checks the schema cannot express: every allow / alsoAllow / deny entry
//! is a valid pattern, every `profile` names a profile, agent ids are well
//! formed and unique.
//!
//! These run on the parsed value (after the structural check), tolerating
//! values of the wrong type (the structural check has reported those), so
//! that one load reports everything.

use std::collections::HashMap;

use serde::de::DeserializeOwned;
use serde_json::Value;
use talon_hooks::HooksConfig;
use talon_hooks::loop_detection::LoopDetectionConfig;
use talon_tool_catalog::Profile;
use talon_tool_policy::{EMPTY_ALLOW_REASON, is_empty_allow, validate_entry};

use crate::findings::Findings;
use crate::gateway::{CommandsConfig, GatewayConfig};
use crate::sections::cron::CronConfig;
use crate::sections::exec::{AgentExecConfig, ExecConfig};
use crate::sections::fs::FsToolsConfig;
use crate::sections::mcp::McpConfig;
use crate::sections::skills::SkillsConfig;
use crate::sections::web::WebToolsConfig;
use crate::spans::{Pos, Seg, SpanNode, render_path};

/// The longest agent id accepted.
pub(crate) const MAX_AGENT_ID_CHARS: usize = 64;

const POLICY_LISTS: [&str; 3] = ["allow", "alsoAllow", "deny"];

/// Run every semantic check on the (stripped) document.
pub(crate) fn check(root: &Value, spans: &SpanNode, out: &mut Findings) {
    let mut w = Walker { out };
    let mut path = vec![Seg::Key("tools".to_owned())];
    if let Some(tools) = root.get("tools") {
        w.global_tools(tools, spans.member("tools"), &mut path);
    }
    path.clear();
    if let Some(channels) = root.get("channels") {
        w.channels(channels, spans.member("channels"));
    }
    if let Some(skills) = w.typed::<SkillsConfig>(root, Some(spans), &path, "skills") {
        let skills_span = spans.member("skills");
        for (key, message) in skills.validate() {
            let inner = parse_key_path(&key);
            let at = skills_span.and_then(|s| s.lookup(&inner)).or(skills_span);
            let mut full = vec![Seg::Key("skills".to_owned())];
            full.extend(inner);
            w.out.issue(&full, pos(at), message);
        }
    }
    w.typed::<CronConfig>(root, Some(spans), &path, "cron");
    if let Some(browser) =
        w.typed::<crate::sections::browser::BrowserConfig>(root, Some(spans), &path, "browser")
    {
        let span = spans.member("browser");
        for (key, message) in browser.validate() {
            let at = span.and_then(|s| s.member(&key)).or(span);
            let full = vec![Seg::Key("browser".to_owned()), Seg::Key(key)];
            w.out.issue(&full, pos(at), message);
        }
    }
    if let Some(gateway) = w.typed::<GatewayConfig>(root, Some(spans), &path, "gateway") {
        let gateway_span = spans.member("gateway");
        for (key, message) in gateway.validate() {
            let inner = parse_key_path(&key);
            let at = gateway_span.and_then(|s| s.lookup(&inner)).or(gateway_span);
            let mut full = vec![Seg::Key("gateway".to_owned())];
            full.extend(inner);
            w.out.issue(&full, pos(at), message);
        }
    }
    if let Some(state) =
        w.typed::<crate::sections::state::StateConfig>(root, Some(spans), &path, "state")
    {
        let state_span = spans.member("state");
        for (key, message) in state.validate() {
            let inner = parse_key_path(&key);
            let at = state_span.and_then(|s| s.lookup(&inner)).or(state_span);
            let mut full = vec![Seg::Key("state".to_owned())];
            full.extend(inner);
            w.out.issue(&full, pos(at), message);
        }
    }
    if let Some(commands) = w.typed::<CommandsConfig>(root, Some(spans), &path, "commands") {
        let span = spans
            .member("commands")
            .and_then(|s| s.member("ownerAllowFrom"));
        for (i, sender) in commands.owner_allow_from.iter().enumerate() {
            if sender.trim().is_empty() {
                let full = vec![
                    Seg::Key("commands".to_owned()),
                    Seg::Key("ownerAllowFrom".to_owned()),
                    Seg::Index(i),
                ];
                let at = span.and_then(|s| s.element(i)).or(span);
                w.out.issue(
                    &full,
                    pos(at),
                    "an owner sender id cannot be empty (use `*` for every sender, knowingly)",
                );
            }
        }
    }
    if w.typed::<crate::sections::plugins::PluginsConfig>(root, Some(spans), &path, "plugins")
        .is_some()
        && let Some(plugins) = root.get("plugins")
    {
        path.push(Seg::Key("plugins".to_owned()));
        w.each_member(
            plugins,
            spans.member("plugins"),
            &mut path,
            "entries",
            |w, v, s, p| {
                if let Some(tools) = v.get("tools") {
                    p.push(Seg::Key("tools".to_owned()));
                    w.lists(tools, member(s, "tools"), p);
                    p.pop();
                }
            },
        );
        path.clear();
    }
    w.session(root, spans);
    w.mcp(root, Some(spans), &path);
    if let Some(agents) = root.get("agents") {
        path.push(Seg::Key("agents".to_owned()));
        w.agents(agents, spans.member("agents"), &mut path);
        path.clear();
        w.ssh_blocks(agents, spans.member("agents"));
        if let Some(sub) = agents.get("defaults").and_then(|d| d.get("subagents"))
            && let Ok(cfg) =
                serde_json::from_value::<crate::sections::subagents::SubagentDefaults>(sub.clone())
        {
            let span = spans
                .member("agents")
                .and_then(|s| s.member("defaults"))
                .and_then(|s| s.member("subagents"));
            for (key, message) in cfg.problems() {
                let full = vec![
                    Seg::Key("agents".to_owned()),
                    Seg::Key("defaults".to_owned()),
                    Seg::Key("subagents".to_owned()),
                    Seg::Key(key.to_owned()),
                ];
                w.out.issue(
                    &full,
                    pos(span.and_then(|s| s.member(key)).or(span)),
                    message,
                );
            }
        }
    }
}

struct Walker<'o> {
    out: &'o mut Findings,
}

fn member<'s>(span: Option<&'s SpanNode>, key: &str) -> Option<&'s SpanNode> {
    span.and_then(|s| s.member(key))
}

fn pos(span: Option<&SpanNode>) -> Pos {
    span.map(|s| s.value).unwrap_or_default()
}

impl Walker<'_> {
    /// `tools`.
    fn global_tools(&mut self, tools: &Value, span: Option<&SpanNode>, path: &mut Vec<Seg>) {
        self.profile(tools, span, path);
        self.lists(tools, span, path);
        self.each_member(tools, span, path, "byProvider", |w, v, s, p| {
            w.profile(v, s, p);
            w.lists(v, s, p);
        });
        self.each_member(tools, span, path, "groups", |w, v, s, p| {
            w.lists(v, s, p);
            w.senders(v, s, p);
        });
        self.senders(tools, span, path);
        for section in ["sandbox", "subagents"] {
            self.nested_tools(tools, span, path, section);
        }
        self.typed::<LoopDetectionConfig>(tools, span, path, "loopDetection");
        self.typed::<FsToolsConfig>(tools, span, path, "fs");
        if let Some(exec) = self.typed::<ExecConfig>(tools, span, path, "exec") {
            let exec_span = member(span, "exec");
            if let Err(e) = exec.validate() {
                let inner = vec![Seg::Key(e.key.to_owned())];
                let at = exec_span.and_then(|s| s.lookup(&inner)).or(exec_span);
                let mut full = path.clone();
                full.push(Seg::Key("exec".to_owned()));
                full.extend(inner);
                self.out.issue(&full, pos(at), e.to_string());
            }
            self.env_issues(exec.env.validate(), exec_span, path);
        }
        self.typed::<WebToolsConfig>(tools, span, path, "web");
        self.typed::<crate::sections::media::VisionProviderConfig>(
            tools,
            span,
            path,
            "imageProvider",
        );
        if let Some(hooks) = self.typed::<HooksConfig>(tools, span, path, "hooks") {
            let hooks_span = member(span, "hooks");
            path.push(Seg::Key("hooks".to_owned()));
            for (key, message) in hooks.validate() {
                let inner = parse_key_path(&key);
                let at = hooks_span.and_then(|s| s.lookup(&inner)).or(hooks_span);
                let mut full = path.clone();
                full.extend(inner);
                self.out.issue(&full, pos(at), message);
            }
            path.pop();
        }
    }

    /// Deserialize `parent.key` as `T`, reporting a failure at the inner
    /// key path serde stopped at. A section the structural check already
    /// reported a problem in is skipped (serde would only repeat it).
    fn typed<T: DeserializeOwned>(
        &mut self,
        parent: &Value,
        span: Option<&SpanNode>,
        path: &[Seg],
        key: &str,
    ) -> Option<T> {
        let value = parent.get(key).filter(|v| !v.is_null())?;
        let value_span = member(span, key);
        let mut section = path.to_vec();
        section.push(Seg::Key(key.to_owned()));
        if self.out.has_issue_within(&section) {
            return None;
        }
        match serde_path_to_error::deserialize::<_, T>(value) {
            Ok(t) => Some(t),
            Err(err) => {
                let mut inner = Vec::new();
                for seg in err.path().iter() {
                    match seg {
                        serde_path_to_error::Segment::Seq { index } => {
                            inner.push(Seg::Index(*index))
                        }
                        serde_path_to_error::Segment::Map { key } => {
                            inner.push(Seg::Key(key.clone()))
                        }
                        serde_path_to_error::Segment::Enum { variant } => {
                            inner.push(Seg::Key(variant.clone()));
                        }
                        serde_path_to_error::Segment::Unknown => {}
                    }
                }
                let at = value_span.and_then(|s| s.lookup(&inner)).or(value_span);
                let mut full = path.to_vec();
                full.push(Seg::Key(key.to_owned()));
                full.extend(inner);
                self.out.issue(&full, pos(at), err.inner().to_string());
                None
            }
        }
    }

    /// `mcp` under `parent` (the root or an agent): typed, then range
    /// checked.
    fn mcp(&mut self, parent: &Value, span: Option<&SpanNode>, path: &[Seg]) {
        let Some(mcp) = self.typed::<McpConfig>(parent, span, path, "mcp") else {
            return;
        };
        let mcp_span = member(span, "mcp");
        for (key, message) in mcp.validate() {
            let inner: Vec<Seg> = key.split('.').map(|k| Seg::Key(k.to_owned())).collect();
            let at = mcp_span.and_then(|s| s.lookup(&inner)).or(mcp_span);
            let mut full = path.to_vec();
            full.push(Seg::Key("mcp".to_owned()));
            full.extend(inner);
            self.out.issue(&full, pos(at), message);
        }
    }

    /// `agents.list[i].tools` / `agents.entries.<id>.tools`.
    fn agent_tools(&mut self, tools: &Value, span: Option<&SpanNode>, path: &mut Vec<Seg>) {
        self.profile(tools, span, path);
        self.lists(tools, span, path);
        self.each_member(tools, span, path, "byProvider", |w, v, s, p| {
            w.profile(v, s, p);
            w.lists(v, s, p);
        });
        self.nested_tools(tools, span, path, "sandbox");
        self.senders(tools, span, path);
        self.typed::<LoopDetectionConfig>(tools, span, path, "loopDetection");
        self.typed::<FsToolsConfig>(tools, span, path, "fs");
        if let Some(env) = self
            .typed::<AgentExecConfig>(tools, span, path, "exec")
            .and_then(|exec| exec.env)
        {
            self.env_issues(env.validate(), member(span, "exec"), path);
        }
    }

    /// Reports `tools.exec.env` problems (`path` is the `tools` path,
    /// `exec_span` the `exec` section's span).
    fn env_issues(
        &mut self,
        issues: Vec<talon_exec_env::EnvConfigError>,
        exec_span: Option<&SpanNode>,
        path: &[Seg],
    ) {
        for issue in issues {
            let mut inner = vec![Seg::Key("env".to_owned())];
            inner.extend(parse_key_path(&issue.key));
            let at = exec_span.and_then(|s| s.lookup(&inner)).or(exec_span);
            let mut full = path.to_vec();
            full.push(Seg::Key("exec".to_owned()));
            full.extend(inner);
            self.out.issue(&full, pos(at), issue.message);
        }
    }

    /// `<section>.tools.{allow,alsoAllow,deny}`.
    fn nested_tools(
        &mut self,
        parent: &Value,
        span: Option<&SpanNode>,
        path: &mut Vec<Seg>,
        section: &str,
    ) {
        let Some(inner) = parent.get(section).and_then(|s| s.get("tools")) else {
            return;
        };
        let inner_span = member(member(span, section), "tools");
        path.push(Seg::Key(section.to_owned()));
        path.push(Seg::Key("tools".to_owned()));
        self.lists(inner, inner_span, path);
        path.pop();
        path.pop();
    }

    /// `channels.<provider>` (after the OpenClaw keys Talon does not read
    /// were stripped): the policy lists and sender keys of the provider,
    /// its groups and its accounts' groups.
    fn channels(&mut self, channels: &Value, span: Option<&SpanNode>) {
        let Value::Object(providers) = channels else {
            return;
        };
        let mut path = vec![Seg::Key("channels".to_owned())];
        for (provider, body) in providers {
            path.push(Seg::Key(provider.clone()));
            let span = member(span, provider);
            let group = |w: &mut Self, v: &Value, s: Option<&SpanNode>, p: &mut Vec<Seg>| {
                w.nested_policy(v, s, p, "tools");
                w.senders(v, s, p);
            };
            group(self, body, span, &mut path);
            self.each_member(body, span, &mut path, "groups", group);
            self.each_member(body, span, &mut path, "accounts", |w, v, s, p| {
                w.each_member(v, s, p, "groups", group);
            });
            path.pop();
        }
    }

    /// `parent.key.{allow,alsoAllow,deny}`.
    fn nested_policy(
        &mut self,
        parent: &Value,
        span: Option<&SpanNode>,
        path: &mut Vec<Seg>,
        key: &str,
    ) {
        if let Some(policy) = parent.get(key) {
            path.push(Seg::Key(key.to_owned()));
            self.lists(policy, member(span, key), path);
            path.pop();
        }
    }

    /// `parent.toolsBySender`: each entry's lists, and each key must name
    /// a sender, once (`talon_tool_policy::normalize_sender_key`).
    fn senders(&mut self, parent: &Value, span: Option<&SpanNode>, path: &mut Vec<Seg>) {
        let Some(Value::Object(map)) = parent.get("toolsBySender") else {
            return;
        };
        let map_span = member(span, "toolsBySender");
        path.push(Seg::Key("toolsBySender".to_owned()));
        let mut seen: HashMap<Option<String>, String> = HashMap::new();
        for (key, policy) in map {
            path.push(Seg::Key(key.clone()));
            let key_span = member(map_span, key);
            let at = key_span.map(SpanNode::key_or_value).unwrap_or_default();
            match talon_tool_policy::normalize_sender_key(key) {
                Err(reason) => self.out.issue(path, at, reason.to_string()),
                Ok(canonical) => {
                    if let Some(other) = seen.get(&canonical) {
                        self.out.issue(
                            path,
                            at,
                            format!("names the same sender as `{other}` (keys are compared ignoring case and a leading `@`, and a key without a prefix is an `id:`); merge the two entries"),
                        );
                    } else {
                        seen.insert(canonical, key.clone());
                    }
                }
            }
            self.lists(policy, key_span, path);
            path.pop();
        }
        path.pop();
    }

    /// Run `f` on every member of the object at `parent.key`.
    fn each_member(
        &mut self,
        parent: &Value,
        span: Option<&SpanNode>,
        path: &mut Vec<Seg>,
        key: &str,
        f: impl Fn(&mut Self, &Value, Option<&SpanNode>, &mut Vec<Seg>),
    ) {
        let Some(Value::Object(map)) = parent.get(key) else {
            return;
        };
        let map_span = member(span, key);
        path.push(Seg::Key(key.to_owned()));
        for (k, v) in map {
            path.push(Seg::Key(k.clone()));
            f(self, v, member(map_span, k), path);
            path.pop();
        }
        path.pop();
    }

    /// `allow`, `alsoAllow`, `deny`: each entry must be a valid pattern,
    /// and an `allow` list must not be empty.
    fn lists(&mut self, policy: &Value, span: Option<&SpanNode>, path: &mut Vec<Seg>) {
        for list in POLICY_LISTS {
            let Some(Value::Array(entries)) = policy.get(list) else {
                continue;
            };
            let list_span = member(span, list);
            path.push(Seg::Key(list.to_owned()));
            let strings: Vec<String> = entries
                .iter()
                .filter_map(|e| e.as_str().map(str::to_owned))
                .collect();
            if list == "allow" && strings.len() == entries.len() && is_empty_allow(&strings) {
                self.out
                    .issue(path, pos(list_span), EMPTY_ALLOW_REASON.to_owned());
            }
            for (i, entry) in entries.iter().enumerate() {
                if let Value::String(s) = entry
                    && let Err(e) = validate_entry(s)
                {
                    path.push(Seg::Index(i));
                    self.out.issue(
                        path,
                        pos(list_span.and_then(|l| l.element(i))),
                        e.to_string(),
                    );
                    path.pop();
                }
            }
            path.pop();
        }
    }

    /// `profile` must name a built-in profile.
    fn profile(&mut self, policy: &Value, span: Option<&SpanNode>, path: &mut Vec<Seg>) {
        if let Some(Value::String(p)) = policy.get("profile")
            && let Err(e) = p.parse::<Profile>()
        {
            path.push(Seg::Key("profile".to_owned()));
            self.out
                .issue(path, pos(member(span, "profile")), e.to_string());
            path.pop();
        }
    }

    /// `agents`: ids, duplicates, and each agent's tools.
    fn agents(&mut self, agents: &Value, span: Option<&SpanNode>, path: &mut Vec<Seg>) {
        // Lowercased id → (where, position) of its first definition.
        let mut seen: HashMap<String, (String, Pos)> = HashMap::new();
        if let Some(Value::Array(list)) = agents.get("list") {
            let list_span = member(span, "list");
            path.push(Seg::Key("list".to_owned()));
            for (i, entry) in list.iter().enumerate() {
                let entry_span = list_span.and_then(|l| l.element(i));
                path.push(Seg::Index(i));
                if let Some(Value::String(id)) = entry.get("id") {
                    let id_span = member(entry_span, "id");
                    path.push(Seg::Key("id".to_owned()));
                    let id_pos = pos(id_span);
                    if self.agent_id(id, path, id_pos) {
                        self.unique(&mut seen, id, path, id_pos, "the entry");
                    }
                    path.pop();
                }
                if let Some(tools) = entry.get("tools") {
                    path.push(Seg::Key("tools".to_owned()));
                    self.agent_tools(tools, member(entry_span, "tools"), path);
                    path.pop();
                }
                self.mcp(entry, entry_span, path);
                path.pop();
            }
            path.pop();
        }
        if let Some(Value::Object(entries)) = agents.get("entries") {
            let entries_span = member(span, "entries");
            path.push(Seg::Key("entries".to_owned()));
            for (id, body) in entries {
                let body_span = member(entries_span, id);
                path.push(Seg::Key(id.clone()));
                let id_pos = body_span.map(SpanNode::key_or_value).unwrap_or_default();
                if self.agent_id(id, path, id_pos) {
                    self.unique(&mut seen, id, path, id_pos, "the key");
                }
                if let Some(tools) = body.get("tools") {
                    path.push(Seg::Key("tools".to_owned()));
                    self.agent_tools(tools, member(body_span, "tools"), path);
                    path.pop();
                }
                self.mcp(body, body_span, path);
                path.pop();
            }
            path.pop();
        }
    }

    /// Every `sandbox.ssh` block (defaults, list, entries): values out of
    /// range or refused (host-key checking off), at the key to change.
    fn ssh_blocks(&mut self, agents: &Value, span: Option<&SpanNode>) {
        let mut blocks: Vec<(Vec<Seg>, &Value, Option<&SpanNode>)> = Vec::new();
        let keyed = |names: &[&str]| -> Vec<Seg> {
            names.iter().map(|k| Seg::Key((*k).to_owned())).collect()
        };
        if let Some(s) = agents.get("defaults").and_then(|d| d.get("sandbox")) {
            let at = member(member(span, "defaults"), "sandbox");
            blocks.push((keyed(&["agents", "defaults", "sandbox"]), s, at));
        }
        if let Some(Value::Array(list)) = agents.get("list") {
            for (i, entry) in list.iter().enumerate() {
                if let Some(s) = entry.get("sandbox") {
                    let mut p = keyed(&["agents", "list"]);
                    p.push(Seg::Index(i));
                    p.push(Seg::Key("sandbox".to_owned()));
                    let at = member(member(span, "list").and_then(|l| l.element(i)), "sandbox");
                    blocks.push((p, s, at));
                }
            }
        }
        if let Some(Value::Object(entries)) = agents.get("entries") {
            for (id, body) in entries {
                if let Some(s) = body.get("sandbox") {
                    let mut p = keyed(&["agents", "entries"]);
                    p.push(Seg::Key(id.clone()));
                    p.push(Seg::Key("sandbox".to_owned()));
                    let at = member(member(member(span, "entries"), id), "sandbox");
                    blocks.push((p, s, at));
                }
            }
        }
        for (path, sandbox, sandbox_span) in blocks {
            let Some(ssh) =
                self.typed::<talon_sandbox_core::SshConfig>(sandbox, sandbox_span, &path, "ssh")
            else {
                continue;
            };
            let ssh_span = member(sandbox_span, "ssh");
            for (field, message) in ssh.validate() {
                let inner = vec![Seg::Key(field)];
                let at = ssh_span.and_then(|s| s.lookup(&inner)).or(ssh_span);
                let mut full = path.clone();
                full.push(Seg::Key("ssh".to_owned()));
                full.extend(inner);
                self.out.issue(&full, pos(at), message);
            }
        }
    }

    /// `session.mainKey`: a well-formed key segment.
    fn session(&mut self, root: &Value, spans: &SpanNode) {
        let Some(raw) = root
            .get("session")
            .and_then(|s| s.get("mainKey"))
            .and_then(Value::as_str)
        else {
            return;
        };
        if let Some(problem) = crate::session::main_key_problem(raw) {
            let path = [
                Seg::Key("session".to_owned()),
                Seg::Key("mainKey".to_owned()),
            ];
            let at = spans.lookup(&path);
            self.out.issue(&path, pos(at), problem);
        }
    }

    /// Report a malformed id; whether it is well formed.
    fn agent_id(&mut self, id: &str, path: &[Seg], at: Pos) -> bool {
        match agent_id_problem(id) {
            None => true,
            Some(problem) => {
                self.out.issue(path, at, problem);
                false
            }
        }
    }

    fn unique(
        &mut self,
        seen: &mut HashMap<String, (String, Pos)>,
        id: &str,
        path: &[Seg],
        at: Pos,
        what: &str,
    ) {
        let normalised = id.trim().to_lowercase();
        let here = render_path(path);
        match seen.get(&normalised) {
            Some((first, first_pos)) => {
                self.out.issue(
                    path,
                    at,
                    format!(
                        "duplicate agent id `{normalised}`: defined by `{first}` (line {}) and by {what} `{here}` (line {}); ids are compared after lowercasing and must be unique across `agents.list` and `agents.entries`",
                        first_pos.line, at.line
                    ),
                );
            }
            None => {
                seen.insert(normalised, (here, at));
            }
        }
    }
}

/// Why `id` is not a valid agent id, if it is not.
pub(crate) fn agent_id_problem(id: &str) -> Option<String> {
    let lowered = id.trim().to_lowercase();
    if lowered.is_empty() {
        return Some("agent id must not be empty (e.g. `main`)".to_owned());
    }
    let well_formed = lowered.chars().count() <= MAX_AGENT_ID_CHARS
        && lowered.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && lowered
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    if well_formed {
        return None;
    }
    let mut suggestion = String::new();
    for c in lowered.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' {
            suggestion.push(c);
        } else if !suggestion.ends_with('-') {
            suggestion.push('-');
        }
    }
    let suggestion: String = suggestion
        .trim_matches(|c| c == '-' || c == '_')
        .chars()
        .take(MAX_AGENT_ID_CHARS)
        .collect();
    let mut message = format!(
        "invalid agent id {}: after lowercasing, an id must match `[a-z0-9][a-z0-9_-]*` and be at most {MAX_AGENT_ID_CHARS} characters",
        crate::spans::quote(&crate::json5_spanned::truncate(id, 60))
    );
    if !suggestion.is_empty() {
        message.push_str(&format!(" (e.g. `{suggestion}`)"));
    }
    Some(message)
}

#[cfg(test)]
#[path = "semantic_tests.rs"]
mod tests;

/// `beforeToolCall[0].env.FOO` as segments.
fn parse_key_path(key: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    for part in key.split('.') {
        let mut rest = part;
        if let Some(open) = rest.find('[') {
            let (name, idx) = rest.split_at(open);
            if !name.is_empty() {
                out.push(Seg::Key(name.to_owned()));
            }
            rest = idx;
            while let Some(close) = rest.find(']') {
                if let Ok(i) = rest[1..close].parse::<usize>() {
                    out.push(Seg::Index(i));
                }
                rest = &rest[close + 1..];
            }
        } else if !rest.is_empty() {
            out.push(Seg::Key(rest.to_owned()));
        }
    }
    out
}
