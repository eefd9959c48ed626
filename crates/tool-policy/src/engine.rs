//! The pipeline: every layer compiled once per configuration, then applied
//! to a run's candidate tools with an audit of what each layer removed.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use talon_tool_catalog::{Profile, normalize_tool_name};

use crate::config::{AgentToolsConfig, PolicyConfig, ProfiledPolicyConfig, ToolsConfig};
use crate::context::{RunContext, SubagentKind, Trigger};
use crate::error::PolicyError;
use crate::list::CompiledList;
use crate::outcome::{CheckOutcome, LayerAudit, PolicyOutcome, Removal};
use crate::policy::{CompiledPolicy, PolicyKeys, Verdict};
use crate::provider_names::provider_name_rule;
use crate::sandbox::resolve_sandbox_tool_policy;
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

/// A profile layer: the profile id and its compiled policy.
#[derive(Debug, Clone)]
struct ProfileLayer {
    profile: Profile,
    policy: CompiledPolicy,
}

fn profile_layer(
    profile: Option<&str>,
    also_allow: &[String],
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
    let policy = CompiledPolicy::from_lists(
        Some(&allow[..]),
        None,
        None,
        PolicyKeys {
            allow: also_key.to_owned(),
            deny: String::new(),
        },
    )
    .unwrap_or_default();
    Ok(Some(ProfileLayer { profile, policy }))
}

/// One `byProvider` entry, compiled.
#[derive(Debug, Clone)]
struct ProviderEntry {
    key: String,
    profile: Option<ProfileLayer>,
    policy: Option<CompiledPolicy>,
    raw: ProfiledPolicyConfig,
}

fn compile_by_provider(
    map: Option<&std::collections::BTreeMap<String, ProfiledPolicyConfig>>,
    prefix: &str,
) -> Result<Vec<ProviderEntry>, PolicyError> {
    let mut out = Vec::new();
    for (key, cfg) in map.into_iter().flatten() {
        let k = key.trim().to_lowercase();
        let base = format!("{prefix}.byProvider.{key}");
        let also = cfg.also_allow.clone().unwrap_or_default();
        out.push(ProviderEntry {
            key: k,
            profile: profile_layer(
                cfg.profile.as_deref(),
                &also,
                &format!("{base}.profile"),
                &format!("{base}.alsoAllow"),
            )?,
            policy: CompiledPolicy::from_config(&cfg.policy(), PolicyKeys::under(&base)),
            raw: cfg.clone(),
        });
    }
    Ok(out)
}

fn find_provider<'a>(entries: &'a [ProviderEntry], ctx: &RunContext) -> Option<&'a ProviderEntry> {
    let provider = ctx.model_provider.as_deref()?.trim().to_lowercase();
    if provider.is_empty() {
        return None;
    }
    if let Some(model) = ctx.model.as_deref() {
        let model = model.trim().to_lowercase();
        let full = if model.contains('/') {
            model.clone()
        } else {
            format!("{provider}/{model}")
        };
        if let Some(e) = entries.iter().find(|e| e.key == full) {
            return Some(e);
        }
    }
    entries.iter().find(|e| e.key == provider)
}

/// An agent's compiled layers.
#[derive(Debug, Clone)]
struct AgentLayers {
    profile: Option<ProfileLayer>,
    policy: Option<CompiledPolicy>,
    by_provider: Vec<ProviderEntry>,
    sandbox: CompiledPolicy,
    raw: AgentToolsConfig,
}

#[derive(Debug, Clone)]
struct GroupLayers {
    policy: Option<CompiledPolicy>,
    by_sender: HashMap<String, CompiledPolicy>,
}

/// A configuration compiled for policy evaluation. Build once per config
/// (and again on reload); evaluating a run does no parsing or compiling.
#[derive(Debug, Clone)]
pub struct PolicyEngine {
    tools: ToolsConfig,
    global: Option<CompiledPolicy>,
    global_by_provider: Vec<ProviderEntry>,
    /// Per agent id; the entry under "" is the fallback for agents without
    /// a config block.
    agents: HashMap<String, AgentLayers>,
    groups: HashMap<String, GroupLayers>,
    senders: HashMap<String, CompiledPolicy>,
    subagent_orchestrator: CompiledPolicy,
    subagent_leaf: CompiledPolicy,
    owner_only: CompiledPolicy,
    node_provider: CompiledPolicy,
    voice_provider: CompiledPolicy,
    memory_trigger: CompiledPolicy,
}

fn agent_layers(
    tools: &ToolsConfig,
    agent_id: &str,
    agent: Option<&AgentToolsConfig>,
) -> Result<AgentLayers, PolicyError> {
    let raw = agent.cloned().unwrap_or_default();
    let prefix = format!("agents.{agent_id}.tools");
    let global_also = tools.also_allow.clone().unwrap_or_default();
    let agent_also = raw.also_allow.clone().unwrap_or_default();
    let also = CompiledList::union(&global_also[..], &agent_also[..]);
    let profile = match raw.profile.as_deref() {
        Some(p) => profile_layer(
            Some(p),
            &also,
            &format!("{prefix}.profile"),
            &format!("{prefix}.alsoAllow"),
        )?,
        None => profile_layer(
            tools.profile.as_deref(),
            &also,
            "tools.profile",
            "tools.alsoAllow",
        )?,
    };
    Ok(AgentLayers {
        profile,
        policy: agent
            .and_then(|a| CompiledPolicy::from_config(&a.policy(), PolicyKeys::under(&prefix))),
        by_provider: compile_by_provider(raw.by_provider.as_ref(), &prefix)?,
        sandbox: resolve_sandbox_tool_policy(tools, agent, agent_id).compile(),
        raw,
    })
}

impl PolicyEngine {
    /// Compile a configuration. Fails on an unknown profile id.
    pub fn new(config: &PolicyConfig) -> Result<Self, PolicyError> {
        let tools = &config.tools;
        let mut agents = HashMap::new();
        agents.insert(String::new(), agent_layers(tools, "main", None)?);
        for (id, cfg) in &config.agents {
            let id = id.trim().to_lowercase();
            let layers = agent_layers(tools, &id, Some(cfg))?;
            agents.insert(id, layers);
        }
        let mut groups = HashMap::new();
        for (gid, g) in tools.groups.iter().flatten() {
            let prefix = format!("tools.groups.{gid}");
            let mut by_sender = HashMap::new();
            for (sid, p) in g.tools_by_sender.iter().flatten() {
                if let Some(c) = CompiledPolicy::from_config(
                    p,
                    PolicyKeys::under(&format!("{prefix}.toolsBySender.{sid}")),
                ) {
                    by_sender.insert(sid.trim().to_lowercase(), c);
                }
            }
            groups.insert(
                gid.trim().to_lowercase(),
                GroupLayers {
                    policy: CompiledPolicy::from_config(&g.policy(), PolicyKeys::under(&prefix)),
                    by_sender,
                },
            );
        }
        let mut senders = HashMap::new();
        for (sid, p) in tools.tools_by_sender.iter().flatten() {
            if let Some(c) = CompiledPolicy::from_config(
                p,
                PolicyKeys::under(&format!("tools.toolsBySender.{sid}")),
            ) {
                senders.insert(sid.trim().to_lowercase(), c);
            }
        }
        let node: Vec<String> = NODE_PROVIDER_TOOLS
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let memory = ["read".to_owned(), "write".to_owned()];
        let exact = |mut p: CompiledPolicy| {
            p.apply_patch_via_write = false;
            p
        };
        Ok(PolicyEngine {
            global: CompiledPolicy::from_lists(
                tools.allow.as_deref(),
                tools.also_allow.as_deref(),
                tools.deny.as_deref(),
                PolicyKeys::under("tools"),
            ),
            global_by_provider: compile_by_provider(tools.by_provider.as_ref(), "tools")?,
            agents,
            groups,
            senders,
            subagent_orchestrator: subagent_policy(tools, SubagentKind::Orchestrator),
            subagent_leaf: subagent_policy(tools, SubagentKind::Leaf),
            owner_only: CompiledPolicy::deny_only(OWNER_ONLY_CORE_TOOLS, "sender.isOwner"),
            node_provider: exact(
                CompiledPolicy::from_lists(
                    Some(&node[..]),
                    None,
                    None,
                    PolicyKeys {
                        allow: "messageProvider (node)".to_owned(),
                        deny: String::new(),
                    },
                )
                .unwrap_or_default(),
            ),
            voice_provider: CompiledPolicy::deny_only(&["tts"], "messageProvider (voice)"),
            memory_trigger: exact(
                CompiledPolicy::from_lists(
                    Some(&memory[..]),
                    None,
                    None,
                    PolicyKeys {
                        allow: "trigger (memory)".to_owned(),
                        deny: String::new(),
                    },
                )
                .unwrap_or_default(),
            ),
            tools: tools.clone(),
        })
    }

    fn agent(&self, agent_id: &str) -> &AgentLayers {
        let id = agent_id.trim().to_lowercase();
        self.agents
            .get(&id)
            .or_else(|| self.agents.get(""))
            .unwrap_or_else(|| unreachable_agent())
    }

    /// Run the whole pipeline for one run: the hot path used when a run's
    /// tool table is assembled. Allowlist warnings are not computed here
    /// (`warnings` is empty); [`PolicyEngine::explain`] adds them.
    pub fn evaluate(&self, ctx: &RunContext, universe: &ToolUniverse) -> PolicyOutcome {
        self.run(ctx, universe, false)
    }

    /// [`PolicyEngine::evaluate`] plus the unknown-allowlist and
    /// explicit-empty-allow warnings, for `talon policy explain` and for
    /// logging once per configuration.
    pub fn explain(&self, ctx: &RunContext, universe: &ToolUniverse) -> PolicyOutcome {
        self.run(ctx, universe, true)
    }

    fn run(&self, ctx: &RunContext, universe: &ToolUniverse, warn: bool) -> PolicyOutcome {
        let agent = self.agent(&ctx.agent_id);
        let agent_id = ctx.agent_id.trim().to_lowercase();
        let mut alive: Vec<&ToolEntry> = universe.tools().iter().collect();
        let mut layers: Vec<LayerAudit> = Vec::with_capacity(crate::outcome::LAYER_IDS.len());
        let mut warnings = Vec::new();

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
        apply(
            &mut alive,
            &mut layers,
            "message-provider",
            label,
            channel_policy,
        );

        // Pre-filter B: the model provider must accept the tool's name.
        let rule = ctx.model_provider.as_deref().and_then(provider_name_rule);
        let mut audit = LayerAudit {
            id: "model-provider".to_owned(),
            label: format!(
                "model provider ({})",
                ctx.model_provider.as_deref().unwrap_or("none")
            ),
            active: rule.is_some(),
            removed: Vec::new(),
        };
        if let Some(rule) = rule {
            alive.retain(|t| match rule.reject(&t.name) {
                None => true,
                Some(why) => {
                    audit.removed.push(Removal {
                        tool: t.name.clone(),
                        rule: why,
                        config_key: "tools.deny".to_owned(),
                    });
                    false
                }
            });
        }
        layers.push(audit);

        // Trigger filter: memory-flush runs get read + write only.
        let trigger_policy = (ctx.trigger == Trigger::Memory).then_some(&self.memory_trigger);
        apply(
            &mut alive,
            &mut layers,
            "trigger",
            format!(
                "trigger ({})",
                match ctx.trigger {
                    Trigger::User => "user",
                    Trigger::Cron => "cron",
                    Trigger::Heartbeat => "heartbeat",
                    Trigger::Memory =>
                        "memory: memory-triggered compaction runs expose only read and append-only write",
                }
            ),
            trigger_policy,
        );

        // 1. profile
        let label = match &agent.profile {
            Some(p) => format!("tools.profile ({})", p.profile.id()),
            None => "tools.profile".to_owned(),
        };
        if warn && let Some(p) = &agent.profile {
            let entries: Vec<String> = p
                .policy
                .allow
                .as_ref()
                .map(|l| l.entries().to_vec())
                .unwrap_or_default();
            warnings.extend(analyse_allowlist(
                &label,
                &entries,
                universe,
                AllowlistStep::BuiltinProfile,
            ));
        }
        let profile_policy = agent.profile.as_ref().map(|p| &p.policy);
        apply_with(
            &mut alive,
            &mut layers,
            "profile",
            label,
            profile_policy,
            |v, p| match (v, &agent.profile) {
                (Verdict::NotAllowed, Some(pl)) => format!("not in profile {}", pl.profile.id()),
                _ => p.rule_text(v),
            },
        );

        // 2. provider profile (agent byProvider wins over global byProvider)
        let agent_provider = find_provider(&agent.by_provider, ctx);
        let global_provider = find_provider(&self.global_by_provider, ctx);
        let provider_profile = agent_provider
            .and_then(|e| e.profile.as_ref())
            .or_else(|| global_provider.and_then(|e| e.profile.as_ref()));
        let label = match provider_profile {
            Some(p) => format!("tools.byProvider.profile ({})", p.profile.id()),
            None => "tools.byProvider.profile".to_owned(),
        };
        apply_with(
            &mut alive,
            &mut layers,
            "provider-profile",
            label,
            provider_profile.map(|p| &p.policy),
            |v, p| match (v, provider_profile) {
                (Verdict::NotAllowed, Some(pl)) => {
                    format!("not in provider profile {}", pl.profile.id())
                }
                _ => p.rule_text(v),
            },
        );

        // 3. global
        let label = "tools.allow".to_owned();
        if warn {
            self.warn_policy(
                &mut warnings,
                &label,
                self.tools.allow.as_deref(),
                self.tools.also_allow.as_deref(),
                universe,
            );
        }
        apply(
            &mut alive,
            &mut layers,
            "global",
            label,
            self.global.as_ref(),
        );

        // 4. global provider
        let label = "tools.byProvider.allow".to_owned();
        if warn && let Some(e) = global_provider {
            self.warn_policy(
                &mut warnings,
                &format!("tools.byProvider.{}.allow", e.key),
                e.raw.allow.as_deref(),
                e.raw.also_allow.as_deref(),
                universe,
            );
        }
        apply(
            &mut alive,
            &mut layers,
            "global-provider",
            label,
            global_provider.and_then(|e| e.policy.as_ref()),
        );

        // 5. agent
        let label = format!("agents.{agent_id}.tools.allow");
        if warn {
            self.warn_policy(
                &mut warnings,
                &label,
                agent.raw.allow.as_deref(),
                agent.raw.also_allow.as_deref(),
                universe,
            );
        }
        apply(
            &mut alive,
            &mut layers,
            "agent",
            label,
            agent.policy.as_ref(),
        );

        // 6. agent provider
        let label = format!("agents.{agent_id}.tools.byProvider.allow");
        if warn && let Some(e) = agent_provider {
            self.warn_policy(
                &mut warnings,
                &label,
                e.raw.allow.as_deref(),
                e.raw.also_allow.as_deref(),
                universe,
            );
        }
        apply(
            &mut alive,
            &mut layers,
            "agent-provider",
            label,
            agent_provider.and_then(|e| e.policy.as_ref()),
        );

        // 7. group (exact id, else "*")
        let group = ctx
            .group_id
            .as_deref()
            .map(|g| g.trim().to_lowercase())
            .and_then(|g| self.groups.get(&g).or_else(|| self.groups.get("*")));
        let label = "group tools.allow".to_owned();
        if warn && let (Some(g), Some(gid)) = (group, ctx.group_id.as_deref()) {
            let raw = self
                .tools
                .groups
                .as_ref()
                .and_then(|m| m.get(gid.trim()).or_else(|| m.get("*")));
            if let Some(raw) = raw {
                self.warn_policy(
                    &mut warnings,
                    &label,
                    raw.allow.as_deref(),
                    raw.also_allow.as_deref(),
                    universe,
                );
            }
            let _ = g;
        }
        apply(
            &mut alive,
            &mut layers,
            "group",
            label,
            group.and_then(|g| g.policy.as_ref()),
        );

        // 8. sender (the group's per-sender policy wins over the global one)
        let sender_policy = ctx
            .sender_id
            .as_deref()
            .map(|s| s.trim().to_lowercase())
            .and_then(|s| {
                group
                    .and_then(|g| g.by_sender.get(&s).or_else(|| g.by_sender.get("*")))
                    .or_else(|| self.senders.get(&s))
                    .or_else(|| self.senders.get("*"))
            });
        apply(
            &mut alive,
            &mut layers,
            "sender",
            "tools.toolsBySender".to_owned(),
            sender_policy,
        );

        // 9. sandbox
        let sandbox_policy = ctx.sandboxed.then_some(&agent.sandbox);
        apply(
            &mut alive,
            &mut layers,
            "sandbox",
            "sandbox tools.allow".to_owned(),
            sandbox_policy,
        );

        // 10. owner-only (only when the sender is known not to be the owner)
        let mut audit = LayerAudit {
            id: "owner-only".to_owned(),
            label: "gateway sender owner-only tools".to_owned(),
            active: ctx.sender_is_owner == Some(false),
            removed: Vec::new(),
        };
        if audit.active {
            alive.retain(|t| {
                let denied =
                    t.owner_only || matches!(self.owner_only.decide(t), Verdict::Denied { .. });
                if denied {
                    audit.removed.push(Removal {
                        tool: t.name.clone(),
                        rule: "owner-only tool; the sender is not the owner".to_owned(),
                        config_key: "sender.isOwner".to_owned(),
                    });
                }
                !denied
            });
        }
        layers.push(audit);

        // 11. subagent
        let sub = match ctx.subagent {
            Some(SubagentKind::Leaf) => Some(&self.subagent_leaf),
            Some(SubagentKind::Orchestrator) => Some(&self.subagent_orchestrator),
            None => None,
        };
        apply(
            &mut alive,
            &mut layers,
            "subagent",
            "subagent tools.allow".to_owned(),
            sub,
        );

        // 12. inherited: an exact set. An empty parent set leaves nothing
        // (it is never read as "empty allow = everything").
        let mut audit = LayerAudit {
            id: "inherited".to_owned(),
            label: "inherited tools".to_owned(),
            active: ctx.inherited.is_some(),
            removed: Vec::new(),
        };
        if let Some(parent) = &ctx.inherited {
            // A hash set pays off for whole tables; `check` (one tool) scans.
            let set: Option<HashSet<Cow<'_, str>>> =
                (alive.len() > 8).then(|| parent.iter().map(|t| normalized(t)).collect());
            alive.retain(|t| {
                let keep = match &set {
                    Some(set) => set.contains(t.name.as_str()),
                    None => parent.iter().any(|p| normalized(p) == t.name.as_str()),
                };
                if !keep {
                    audit.removed.push(Removal {
                        tool: t.name.clone(),
                        rule: "not in the parent's effective tools".to_owned(),
                        config_key: "(parent session)".to_owned(),
                    });
                }
                keep
            });
        }
        layers.push(audit);

        PolicyOutcome {
            layers,
            tools: alive.iter().map(|t| t.name.clone()).collect(),
            warnings,
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

    fn warn_policy(
        &self,
        warnings: &mut Vec<String>,
        label: &str,
        allow: Option<&[String]>,
        also_allow: Option<&[String]>,
        universe: &ToolUniverse,
    ) {
        if let Some(a) = allow {
            if a.iter().all(|e| e.trim().is_empty()) && also_allow.is_none_or(|x| x.is_empty()) {
                warnings.push(format!(
                    "tools: {label} is an explicit empty allow list, which allows every tool not denied (remove it, or list the tools you mean)"
                ));
                return;
            }
            warnings.extend(analyse_allowlist(
                label,
                a,
                universe,
                AllowlistStep::Configured,
            ));
        }
        if let Some(a) = also_allow {
            let also_label = label.replace(".allow", ".alsoAllow");
            warnings.extend(analyse_allowlist(
                &also_label,
                a,
                universe,
                AllowlistStep::AlsoAllow,
            ));
        }
    }
}

// The fallback agent is inserted by `PolicyEngine::new`, so this is never
// reached; it exists so `agent()` needs no `expect`.
fn unreachable_agent() -> &'static AgentLayers {
    static FALLBACK: std::sync::OnceLock<AgentLayers> = std::sync::OnceLock::new();
    FALLBACK.get_or_init(|| AgentLayers {
        profile: None,
        policy: None,
        by_provider: Vec::new(),
        sandbox: resolve_sandbox_tool_policy(&ToolsConfig::default(), None, "main").compile(),
        raw: AgentToolsConfig::default(),
    })
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

fn apply(
    alive: &mut Vec<&ToolEntry>,
    layers: &mut Vec<LayerAudit>,
    id: &str,
    label: String,
    policy: Option<&CompiledPolicy>,
) {
    apply_with(alive, layers, id, label, policy, |v, p| p.rule_text(v));
}

fn apply_with(
    alive: &mut Vec<&ToolEntry>,
    layers: &mut Vec<LayerAudit>,
    id: &str,
    label: String,
    policy: Option<&CompiledPolicy>,
    rule: impl Fn(&Verdict<'_>, &CompiledPolicy) -> String,
) {
    let mut audit = LayerAudit {
        id: id.to_owned(),
        label,
        active: policy.is_some(),
        removed: Vec::new(),
    };
    if let Some(policy) = policy {
        // The "not in allow list [...]" text is the same for every tool a
        // layer removes that way: build it once.
        let mut not_allowed: Option<String> = None;
        alive.retain(|t| {
            let verdict = policy.decide(t);
            let rule_text = match verdict {
                Verdict::Allow => return true,
                Verdict::NotAllowed => not_allowed
                    .get_or_insert_with(|| rule(&verdict, policy))
                    .clone(),
                Verdict::Denied { .. } => rule(&verdict, policy),
            };
            audit.removed.push(Removal {
                tool: t.name.clone(),
                rule: rule_text,
                config_key: policy.key_for(&verdict).to_owned(),
            });
            false
        });
    }
    layers.push(audit);
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;
