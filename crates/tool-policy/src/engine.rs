//! The pipeline: every layer compiled once per configuration, then applied
//! to a run's candidate tools with an audit of what each layer removed.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use talon_tool_catalog::{Profile, normalize_tool_name};

use crate::channels::{Channels, Entry, SenderTable, Who};
use crate::config::{AgentToolsConfig, PolicyConfig, ProfiledPolicyConfig, ToolsConfig};
use crate::context::{RunContext, SubagentKind, Trigger};
use crate::empty_allow::refuse_empty_allow;
use crate::error::PolicyError;
use crate::list::CompiledList;
use crate::outcome::{CheckOutcome, LayerAudit, PolicyOutcome, Removal};
use crate::plugins::{PLUGINS_LAYER_ID, PluginsLayer};
use crate::policy::{CompiledPolicy, PolicyKeys, Verdict};
use crate::provider_names::provider_name_rule;
use crate::sandbox::resolve_sandbox_tool_policy_at;
use crate::subagent::subagent_policy;
use crate::universe::{ToolEntry, ToolUniverse};
use crate::warnings::{AllowlistStep, analyse_allowlist};

/// Core tools removed for senders known not to be the owner.
pub const OWNER_ONLY_CORE_TOOLS: &[&str] = &[
    "cron", "gateway", "sessions", "nodes", "computer", "openclaw",
];

/// What a `node` message provider may use.
pub const NODE_PROVIDER_TOOLS: &[&str] =
    &["canvas", "image", "pdf", "tts", "web_fetch", "web_search"];

/// The raw lists of one allowlist step, kept for `explain`'s warnings.
#[derive(Debug, Clone, Default)]
struct WarnSource {
    label: String,
    allow: Option<Vec<String>>,
    also_allow: Option<Vec<String>>,
}

impl WarnSource {
    fn new(label: String, allow: Option<&Vec<String>>, also_allow: Option<&Vec<String>>) -> Self {
        WarnSource {
            label,
            allow: allow.cloned(),
            also_allow: also_allow.cloned(),
        }
    }
}

/// A profile layer: its label (`tools.profile (coding)`) and policy.
#[derive(Debug, Clone)]
struct ProfileLayer {
    label: String,
    policy: CompiledPolicy,
}

/// `layer_name` is `tools.profile` or `tools.byProvider.profile`; the
/// removal rule says which profile the tool is missing from.
fn profile_layer(
    profile: Option<&str>,
    also_allow: &[String],
    layer_name: &str,
    profile_key: &str,
    also_key: &str,
) -> Result<Option<ProfileLayer>, PolicyError> {
    let Some(raw) = profile else {
        return Ok(None);
    };
    let profile: Profile = raw.parse().map_err(|_| PolicyError::UnknownProfile {
        key: profile_key.to_owned(),
        value: raw.to_owned(),
    })?;
    let allow = CompiledList::union(&profile.allow_list()[..], also_allow);
    let mut policy = CompiledPolicy::from_lists(
        Some(&allow[..]),
        None,
        None,
        PolicyKeys {
            allow: also_key.to_owned(),
            deny: String::new(),
        },
    )
    .unwrap_or_default();
    let what = if layer_name == "tools.profile" {
        "profile"
    } else {
        "provider profile"
    };
    policy.not_allowed_rule = format!("not in {what} {}", profile.id());
    Ok(Some(ProfileLayer {
        label: format!("{layer_name} ({})", profile.id()),
        policy,
    }))
}

/// One `byProvider` entry, compiled.
#[derive(Debug, Clone)]
struct ProviderEntry {
    key: String,
    profile: Option<ProfileLayer>,
    policy: Option<CompiledPolicy>,
    warn: WarnSource,
}

fn compile_by_provider(
    map: Option<&std::collections::BTreeMap<String, ProfiledPolicyConfig>>,
    prefix: &str,
) -> Result<Vec<ProviderEntry>, PolicyError> {
    let mut out = Vec::new();
    for (key, cfg) in map.into_iter().flatten() {
        let base = format!("{prefix}.byProvider.{key}");
        let also = cfg.also_allow.clone().unwrap_or_default();
        out.push(ProviderEntry {
            key: key.trim().to_lowercase(),
            profile: profile_layer(
                cfg.profile.as_deref(),
                &also,
                "tools.byProvider.profile",
                &format!("{base}.profile"),
                &format!("{base}.alsoAllow"),
            )?,
            policy: CompiledPolicy::from_config(&cfg.policy(), PolicyKeys::under(&base)),
            warn: WarnSource::new(
                format!("{base}.allow"),
                cfg.allow.as_ref(),
                cfg.also_allow.as_ref(),
            ),
        });
    }
    Ok(out)
}

fn find_provider<'a>(entries: &'a [ProviderEntry], ctx: &RunContext) -> Option<&'a ProviderEntry> {
    if entries.is_empty() {
        return None;
    }
    let provider = ctx.model_provider.as_deref()?.trim().to_lowercase();
    if provider.is_empty() {
        return None;
    }
    if let Some(model) = ctx.model.as_deref() {
        let model = model.trim().to_lowercase();
        let full = if model.contains('/') {
            model
        } else {
            format!("{provider}/{model}")
        };
        if let Some(e) = entries.iter().find(|e| e.key == full) {
            return Some(e);
        }
    }
    entries.iter().find(|e| e.key == provider)
}

/// An agent's compiled layers, with their labels.
#[derive(Debug, Clone)]
struct AgentLayers {
    profile: Option<ProfileLayer>,
    policy: Option<CompiledPolicy>,
    by_provider: Vec<ProviderEntry>,
    sandbox: CompiledPolicy,
    /// `<agent>.tools.toolsBySender`.
    by_sender: Option<SenderTable>,
    label: String,
    provider_label: String,
    warn: WarnSource,
}

/// One `tools.groups.<id>` entry.
#[derive(Debug, Clone)]
struct GroupLayers {
    key: String,
    policy: Option<CompiledPolicy>,
    by_sender: Option<SenderTable>,
    warn: WarnSource,
}

/// A configuration compiled for policy evaluation. Build once per config
/// (and again on reload); evaluating a run does no parsing or compiling.
#[derive(Debug, Clone)]
pub struct PolicyEngine {
    global: Option<CompiledPolicy>,
    global_warn: WarnSource,
    global_by_provider: Vec<ProviderEntry>,
    agents: HashMap<String, AgentLayers>,
    /// For agents without a config block.
    fallback_agent: AgentLayers,
    groups: HashMap<String, GroupLayers>,
    /// `tools.toolsBySender`.
    senders: Option<SenderTable>,
    /// `channels.<provider>` (group layer).
    channels: Channels,
    subagent_orchestrator: CompiledPolicy,
    subagent_leaf: CompiledPolicy,
    owner_only: CompiledPolicy,
    node_provider: CompiledPolicy,
    voice_provider: CompiledPolicy,
    memory_trigger: CompiledPolicy,
    /// `plugins` (`None` without a `plugins` section: no layer).
    plugins: Option<PluginsLayer>,
}

fn agent_layers(
    tools: &ToolsConfig,
    agent_key: &str,
    agent: Option<&AgentToolsConfig>,
) -> Result<AgentLayers, PolicyError> {
    let raw = agent.cloned().unwrap_or_default();
    let prefix = format!("{agent_key}.tools");
    let global_also = tools.also_allow.clone().unwrap_or_default();
    let agent_also = raw.also_allow.clone().unwrap_or_default();
    // Both alsoAllow lists widen the profile, whichever level set it.
    let also = CompiledList::union(&global_also[..], &agent_also[..]);
    let profile = match raw.profile.as_deref() {
        Some(p) => profile_layer(
            Some(p),
            &also,
            "tools.profile",
            &format!("{prefix}.profile"),
            &format!("{prefix}.alsoAllow"),
        )?,
        None => profile_layer(
            tools.profile.as_deref(),
            &also,
            "tools.profile",
            "tools.profile",
            "tools.alsoAllow",
        )?,
    };
    Ok(AgentLayers {
        profile,
        policy: agent
            .and_then(|a| CompiledPolicy::from_config(&a.policy(), PolicyKeys::under(&prefix))),
        by_provider: compile_by_provider(raw.by_provider.as_ref(), &prefix)?,
        sandbox: resolve_sandbox_tool_policy_at(tools, agent, agent_key).compile(),
        by_sender: SenderTable::compile(
            raw.tools_by_sender.as_ref(),
            &format!("{prefix}.toolsBySender"),
        )?,
        label: format!("{prefix}.allow"),
        provider_label: format!("{prefix}.byProvider.allow"),
        warn: WarnSource::new(
            format!("{prefix}.allow"),
            raw.allow.as_ref(),
            raw.also_allow.as_ref(),
        ),
    })
}

/// A policy that lets through exactly `names` (no `write` ⇒ `apply_patch`).
fn exact_allow(names: &[&str], key: &str) -> CompiledPolicy {
    let names: Vec<String> = names.iter().map(|s| (*s).to_owned()).collect();
    let mut p = CompiledPolicy::from_lists(
        Some(&names[..]),
        None,
        None,
        PolicyKeys {
            allow: key.to_owned(),
            deny: String::new(),
        },
    )
    .unwrap_or_default();
    p.apply_patch_via_write = false;
    p
}

impl PolicyEngine {
    /// Compile a configuration. Fails on an unknown profile id and on an
    /// explicitly empty `allow` list anywhere in it.
    pub fn new(config: &PolicyConfig) -> Result<Self, PolicyError> {
        refuse_empty_allow(config)?;
        let tools = &config.tools;
        let mut agents = HashMap::new();
        for (id, cfg) in &config.agents {
            let id = id.trim().to_lowercase();
            let layers = agent_layers(tools, &config.agent_key(&id), Some(cfg))?;
            agents.insert(id, layers);
        }
        let mut groups = HashMap::new();
        for (gid, g) in tools.groups.iter().flatten() {
            let prefix = format!("tools.groups.{gid}");
            groups.insert(
                gid.trim().to_lowercase(),
                GroupLayers {
                    policy: CompiledPolicy::from_config(&g.policy(), PolicyKeys::under(&prefix)),
                    by_sender: SenderTable::compile(
                        g.tools_by_sender.as_ref(),
                        &format!("{prefix}.toolsBySender"),
                    )?,
                    warn: WarnSource::new(
                        format!("{prefix}.allow"),
                        g.allow.as_ref(),
                        g.also_allow.as_ref(),
                    ),
                    key: prefix,
                },
            );
        }
        let senders = SenderTable::compile(tools.tools_by_sender.as_ref(), "tools.toolsBySender")?;
        let channels = Channels::compile(&config.channels)?;
        Ok(PolicyEngine {
            global: CompiledPolicy::from_lists(
                tools.allow.as_deref(),
                tools.also_allow.as_deref(),
                tools.deny.as_deref(),
                PolicyKeys::under("tools"),
            ),
            global_warn: WarnSource::new(
                "tools.allow".to_owned(),
                tools.allow.as_ref(),
                tools.also_allow.as_ref(),
            ),
            global_by_provider: compile_by_provider(tools.by_provider.as_ref(), "tools")?,
            fallback_agent: agent_layers(tools, "agents.main", None)?,
            agents,
            groups,
            senders,
            channels,
            subagent_orchestrator: subagent_policy(tools, SubagentKind::Orchestrator),
            subagent_leaf: subagent_policy(tools, SubagentKind::Leaf),
            owner_only: CompiledPolicy::deny_only(OWNER_ONLY_CORE_TOOLS, "sender.isOwner"),
            node_provider: exact_allow(NODE_PROVIDER_TOOLS, "messageProvider (node)"),
            voice_provider: CompiledPolicy::deny_only(&["tts"], "messageProvider (voice)"),
            memory_trigger: exact_allow(&["read", "write"], "trigger (memory)"),
            plugins: config.plugins.as_ref().map(PluginsLayer::compile),
        })
    }

    fn agent(&self, agent_id: &str) -> &AgentLayers {
        self.agents
            .get(agent_id)
            .or_else(|| self.agents.get(&agent_id.trim().to_lowercase()))
            .unwrap_or(&self.fallback_agent)
    }

    /// Run the whole pipeline for one run: the hot path used when a run's
    /// tool table is assembled. Allowlist warnings are not computed here
    /// (`warnings` is empty); [`PolicyEngine::explain`] adds them.
    pub fn evaluate(&self, ctx: &RunContext, universe: &ToolUniverse) -> PolicyOutcome {
        self.run(ctx, universe, None)
    }

    /// [`PolicyEngine::evaluate`] plus the unknown-allowlist and
    /// explicit-empty-allow warnings, for `talon policy explain` and for
    /// logging once per configuration.
    pub fn explain(&self, ctx: &RunContext, universe: &ToolUniverse) -> PolicyOutcome {
        let mut warnings = Vec::new();
        let mut outcome = self.run(ctx, universe, Some(&mut warnings));
        outcome.warnings = warnings;
        outcome
    }

    fn run(
        &self,
        ctx: &RunContext,
        universe: &ToolUniverse,
        mut warnings: Option<&mut Vec<String>>,
    ) -> PolicyOutcome {
        let agent = self.agent(&ctx.agent_id);
        let mut s = Steps {
            alive: universe.tools().iter().collect(),
            layers: Vec::with_capacity(crate::outcome::LAYER_IDS.len()),
        };
        let mut warn = |source: &WarnSource, step: AllowlistStep| {
            if let Some(w) = warnings.as_deref_mut() {
                warn_policy(w, source, universe, step);
            }
        };

        // Pre-filter A: the message provider.
        let channel = ctx
            .message_provider
            .as_deref()
            .map(|c| c.trim().to_lowercase());
        let channel_policy = match channel.as_deref() {
            Some("node") => Some(&self.node_provider),
            Some("voice" | "discord-voice") => Some(&self.voice_provider),
            _ => None,
        };
        let label = format!(
            "message provider ({})",
            channel.as_deref().unwrap_or("none")
        );
        s.apply("message-provider", label, channel_policy);

        // Pre-filter B: the model provider must accept the tool's name.
        let rule = ctx.model_provider.as_deref().and_then(provider_name_rule);
        let label = format!(
            "model provider ({})",
            ctx.model_provider.as_deref().unwrap_or("none")
        );
        s.filter("model-provider", label, rule.is_some(), |t| {
            rule.and_then(|r| r.reject(&t.name))
                .map(|why| (why, "tools.deny".to_owned()))
        });

        // Trigger filter: memory-flush runs get read + write only.
        let (trigger_label, trigger_policy) = match ctx.trigger {
            Trigger::User => ("trigger (user)", None),
            Trigger::Cron => ("trigger (cron)", None),
            Trigger::Heartbeat => ("trigger (heartbeat)", None),
            Trigger::Memory => (
                "trigger (memory): compaction runs expose only read and append-only write",
                Some(&self.memory_trigger),
            ),
        };
        s.apply("trigger", trigger_label.to_owned(), trigger_policy);

        // Plugin switches: disabled, denied or not-allowed plugins lose
        // their tools; a plugin's own policy narrows its tools only. The
        // layer is reported only when `plugins` is configured.
        if let Some(plugins) = &self.plugins {
            s.filter(PLUGINS_LAYER_ID, "plugins".to_owned(), true, |t| {
                plugins.remove(t)
            });
        }

        // 1. profile
        if let Some(p) = &agent.profile {
            let entries = p.policy.allow.as_ref().map(|l| l.entries().to_vec());
            warn(
                &WarnSource {
                    label: p.label.clone(),
                    allow: entries,
                    also_allow: None,
                },
                AllowlistStep::BuiltinProfile,
            );
        }
        let label = agent
            .profile
            .as_ref()
            .map_or("tools.profile", |p| p.label.as_str());
        s.apply(
            "profile",
            label.to_owned(),
            agent.profile.as_ref().map(|p| &p.policy),
        );

        // 2. provider profile (agent byProvider wins over global byProvider)
        let agent_provider = find_provider(&agent.by_provider, ctx);
        let global_provider = find_provider(&self.global_by_provider, ctx);
        let provider_profile = agent_provider
            .and_then(|e| e.profile.as_ref())
            .or_else(|| global_provider.and_then(|e| e.profile.as_ref()));
        let label = provider_profile.map_or("tools.byProvider.profile", |p| p.label.as_str());
        s.apply(
            "provider-profile",
            label.to_owned(),
            provider_profile.map(|p| &p.policy),
        );

        // 3. global
        warn(&self.global_warn, AllowlistStep::Configured);
        s.apply("global", "tools.allow".to_owned(), self.global.as_ref());

        // 4. global provider
        if let Some(e) = global_provider {
            warn(&e.warn, AllowlistStep::Configured);
        }
        s.apply(
            "global-provider",
            "tools.byProvider.allow".to_owned(),
            global_provider.and_then(|e| e.policy.as_ref()),
        );

        // 5. agent
        warn(&agent.warn, AllowlistStep::Configured);
        s.apply("agent", agent.label.clone(), agent.policy.as_ref());

        // 6. agent provider
        if let Some(e) = agent_provider {
            warn(&e.warn, AllowlistStep::Configured);
        }
        s.apply(
            "agent-provider",
            agent.provider_label.clone(),
            agent_provider.and_then(|e| e.policy.as_ref()),
        );

        // 7. group: the message provider's `channels.<provider>` entry
        // (group sender, group, `*` sender, `*`, provider sender, provider)
        // and Talon's `tools.groups` entry (exact id, else "*"); each
        // narrows.
        let who = Who::of(ctx);
        let channel = self.channels.find(ctx, &who);
        let group = ctx
            .group_id
            .as_deref()
            .map(|g| g.trim().to_lowercase())
            .and_then(|g| self.groups.get(&g).or_else(|| self.groups.get("*")));
        if let Some(e) = channel {
            warn(&entry_warn(e), AllowlistStep::Configured);
        }
        if let Some(g) = group {
            warn(&g.warn, AllowlistStep::Configured);
        }
        let group_policy = group.and_then(|g| g.policy.as_ref());
        let mut keys: Vec<&str> = Vec::new();
        keys.extend(channel.map(|e| e.key.as_str()));
        keys.extend(group.map(|g| g.key.as_str()));
        s.filter(
            "group",
            labelled("group tools.allow", &keys),
            channel.is_some_and(|e| e.policy.is_some()) || group_policy.is_some(),
            |t| {
                channel
                    .and_then(|e| e.policy.as_ref())
                    .and_then(|p| removal(p, t))
                    .or_else(|| group_policy.and_then(|p| removal(p, t)))
            },
        );

        // 8. sender: the `tools.groups` entry's per-sender policy, else the
        // agent's `toolsBySender`, else `tools.toolsBySender` (first match).
        let sender: Option<&Entry> = group
            .and_then(|g| g.by_sender.as_ref())
            .and_then(|t| t.find(&who))
            .or_else(|| agent.by_sender.as_ref().and_then(|t| t.find(&who)))
            .or_else(|| self.senders.as_ref().and_then(|t| t.find(&who)));
        if let Some(e) = sender {
            warn(&entry_warn(e), AllowlistStep::Configured);
        }
        let keys: Vec<&str> = sender.map(|e| e.key.as_str()).into_iter().collect();
        s.apply(
            "sender",
            labelled("tools.toolsBySender", &keys),
            sender.and_then(|e| e.policy.as_ref()),
        );

        // 9. sandbox
        s.apply(
            "sandbox",
            "sandbox tools.allow".to_owned(),
            ctx.sandboxed.then_some(&agent.sandbox),
        );

        // 10. owner-only (only when the sender is known not to be the owner)
        let non_owner = ctx.sender_is_owner == Some(false);
        s.filter(
            "owner-only",
            "gateway sender owner-only tools".to_owned(),
            non_owner,
            |t| {
                let denied =
                    t.owner_only || matches!(self.owner_only.decide(t), Verdict::Denied { .. });
                denied.then(|| {
                    (
                        "owner-only tool; the sender is not the owner".to_owned(),
                        "sender.isOwner".to_owned(),
                    )
                })
            },
        );

        // 11. subagent
        let sub = match ctx.subagent {
            Some(SubagentKind::Leaf) => Some(&self.subagent_leaf),
            Some(SubagentKind::Orchestrator) => Some(&self.subagent_orchestrator),
            None => None,
        };
        s.apply("subagent", "subagent tools.allow".to_owned(), sub);

        // 12. inherited: an exact set. An empty parent set leaves nothing
        // (it is never read as "empty allow = everything").
        let parent = ctx.inherited.as_deref().unwrap_or_default();
        // A hash set pays off for whole tables; `check` (one tool) scans.
        let set: Option<HashSet<Cow<'_, str>>> =
            (s.alive.len() > 8).then(|| parent.iter().map(|t| normalized(t)).collect());
        s.filter(
            "inherited",
            "inherited tools".to_owned(),
            ctx.inherited.is_some(),
            |t| {
                let keep = match &set {
                    Some(set) => set.contains(t.name.as_str()),
                    None => parent.iter().any(|p| normalized(p) == t.name.as_str()),
                };
                (!keep).then(|| {
                    (
                        "not in the parent's effective tools".to_owned(),
                        "(parent session)".to_owned(),
                    )
                })
            },
        );

        PolicyOutcome {
            tools: s.alive.iter().map(|t| t.name.clone()).collect(),
            layers: s.layers,
            warnings: Vec::new(),
        }
    }

    /// Evaluate one tool by any name: normalised first (case, whitespace,
    /// aliases); a name not in `universe` is evaluated as a plugin tool of
    /// that name.
    pub fn check(&self, ctx: &RunContext, universe: &ToolUniverse, name: &str) -> CheckOutcome {
        let normalised = normalize_tool_name(name);
        let entry = universe.get(&normalised).cloned().unwrap_or_else(|| {
            if talon_tool_catalog::is_core_tool(&normalised) {
                ToolEntry::core(&normalised)
            } else {
                ToolEntry::plugin(&normalised, &normalised)
            }
        });
        let single = ToolUniverse::new().with(entry);
        let outcome = self.evaluate(ctx, &single);
        let removed_by = outcome.removed_by(&normalised);
        CheckOutcome {
            allowed: removed_by.is_none() && outcome.allows(&normalised),
            tool: normalised,
            removed_by,
        }
    }
}

fn warn_policy(
    warnings: &mut Vec<String>,
    source: &WarnSource,
    universe: &ToolUniverse,
    step: AllowlistStep,
) {
    let label = &source.label;
    if let Some(a) = &source.allow {
        warnings.extend(analyse_allowlist(label, a, universe, step));
    }
    if let Some(a) = &source.also_allow {
        let also_label = label.replace(".allow", ".alsoAllow");
        warnings.extend(analyse_allowlist(
            &also_label,
            a,
            universe,
            AllowlistStep::AlsoAllow,
        ));
    }
}

/// Normalise only when needed: effective tool lists are normally already
/// normalised, so the common case borrows.
fn normalized(name: &str) -> Cow<'_, str> {
    let clean = name.bytes().all(|b| {
        b.is_ascii_lowercase()
            || b.is_ascii_digit()
            || matches!(b, b'_' | b'-' | b'.' | b':' | b'/')
    });
    if clean && name != "bash" && name != "apply-patch" {
        Cow::Borrowed(name)
    } else {
        Cow::Owned(normalize_tool_name(name))
    }
}

/// `label (key; key)`, or `label` alone.
fn labelled(label: &str, keys: &[&str]) -> String {
    if keys.is_empty() {
        label.to_owned()
    } else {
        format!("{label} ({})", keys.join("; "))
    }
}

fn entry_warn(e: &Entry) -> WarnSource {
    WarnSource::new(
        format!("{}.allow", e.key),
        e.allow.as_ref(),
        e.also_allow.as_ref(),
    )
}

/// Whether `policy` removes `t`: its rule and config key.
fn removal(policy: &CompiledPolicy, t: &ToolEntry) -> Option<(String, String)> {
    let verdict = policy.decide(t);
    (verdict != Verdict::Allow).then(|| {
        (
            policy.rule_text(&verdict),
            policy.key_for(&verdict).to_owned(),
        )
    })
}

/// The surviving tools and the audit so far.
struct Steps<'u> {
    alive: Vec<&'u ToolEntry>,
    layers: Vec<LayerAudit>,
}

impl<'u> Steps<'u> {
    /// Apply a compiled policy as one layer (`None`: the layer is inactive).
    fn apply(&mut self, id: &str, label: String, policy: Option<&CompiledPolicy>) {
        self.filter(id, label, policy.is_some(), |t| removal(policy?, t));
    }

    /// One layer: `remove` returns `(rule, config key)` for each tool to drop.
    fn filter(
        &mut self,
        id: &str,
        label: String,
        active: bool,
        mut remove: impl FnMut(&ToolEntry) -> Option<(String, String)>,
    ) {
        let mut audit = LayerAudit {
            id: id.to_owned(),
            label,
            active,
            removed: Vec::new(),
        };
        if active {
            self.alive.retain(|t| match remove(t) {
                None => true,
                Some((rule, config_key)) => {
                    audit.removed.push(Removal {
                        tool: t.name.clone(),
                        rule,
                        config_key,
                    });
                    false
                }
            });
        }
        self.layers.push(audit);
    }
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;
