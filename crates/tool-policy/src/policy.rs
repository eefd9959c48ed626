//! One compiled allow/deny policy and OpenClaw's matcher semantics.

use crate::config::ToolPolicyConfig;
use crate::list::CompiledList;
use crate::universe::ToolEntry;

/// Where each list of a policy comes from, for audit output.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PolicyKeys {
    pub(crate) allow: String,
    pub(crate) deny: String,
}

impl PolicyKeys {
    pub(crate) fn under(prefix: &str) -> Self {
        PolicyKeys {
            allow: format!("{prefix}.allow"),
            deny: format!("{prefix}.deny"),
        }
    }
}

/// A compiled policy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CompiledPolicy {
    /// `None` = no allow list (everything not denied).
    pub(crate) allow: Option<CompiledList>,
    pub(crate) deny: CompiledList,
    /// OpenClaw's runtime matcher lets `apply_patch` through when the allow
    /// list matches `write`; the sandbox classifier does not.
    pub(crate) apply_patch_via_write: bool,
    pub(crate) keys: PolicyKeys,
    /// Deny entries that are built-in defaults rather than configured, with
    /// the rule prefix and the key that lifts them.
    pub(crate) default_deny: Option<DefaultDeny>,
    /// The rule text for tools outside the allow list, built once at
    /// compile time (layers may replace it, e.g. "not in profile coding").
    pub(crate) not_allowed_rule: String,
}

/// Built-in default deny entries of a layer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct DefaultDeny {
    pub(crate) entries: Vec<String>,
    pub(crate) rule_prefix: &'static str,
    pub(crate) lift_key: String,
    /// Entries no configuration lifts, with their rule prefix and the key
    /// reported for them.
    pub(crate) fixed: Option<FixedDeny>,
}

/// Built-in deny entries that no allow list lifts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FixedDeny {
    pub(crate) entries: Vec<String>,
    pub(crate) rule_prefix: &'static str,
    pub(crate) key: &'static str,
}

/// Why a policy removed a tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict<'a> {
    Allow,
    Denied { entry: &'a str },
    NotAllowed,
}

impl CompiledPolicy {
    /// Build from allow / alsoAllow / deny with OpenClaw's `alsoAllow`
    /// rules; `None` when no list is set at all.
    pub(crate) fn from_lists(
        allow: Option<&[String]>,
        also_allow: Option<&[String]>,
        deny: Option<&[String]>,
        keys: PolicyKeys,
    ) -> Option<Self> {
        if allow.is_none() && also_allow.is_none() && deny.is_none() {
            return None;
        }
        let allow_list = match (allow, also_allow) {
            (None, None) => None,
            (Some(a), None) => Some(CompiledList::compile(a)),
            (None, Some(extra)) => {
                if extra.is_empty() {
                    None
                } else {
                    let star = ["*".to_owned()];
                    Some(CompiledList::compile(&CompiledList::union(
                        &star[..],
                        extra,
                    )))
                }
            }
            // An empty `allow` stays empty (OpenClaw widens it to `*`):
            // `PolicyEngine::new` refuses it, and if one is built anyway
            // it allows only what `alsoAllow` names.
            (Some(a), Some(extra)) => Some(CompiledList::compile(&CompiledList::union(a, extra))),
        };
        let not_allowed_rule = not_allowed_text(allow_list.as_ref());
        Some(CompiledPolicy {
            allow: allow_list,
            deny: deny.map(CompiledList::compile).unwrap_or_default(),
            apply_patch_via_write: true,
            keys,
            default_deny: None,
            not_allowed_rule,
        })
    }

    pub(crate) fn from_config(cfg: &ToolPolicyConfig, keys: PolicyKeys) -> Option<Self> {
        Self::from_lists(
            cfg.allow.as_deref(),
            cfg.also_allow.as_deref(),
            cfg.deny.as_deref(),
            keys,
        )
    }

    /// A policy that denies exactly these names.
    pub(crate) fn deny_only(names: &[&str], deny_key: &str) -> Self {
        CompiledPolicy {
            allow: None,
            deny: CompiledList::compile(names),
            apply_patch_via_write: true,
            default_deny: None,
            not_allowed_rule: String::new(),
            keys: PolicyKeys {
                allow: String::new(),
                deny: deny_key.to_owned(),
            },
        }
    }

    /// OpenClaw's matcher: deny wins; no allow list allows; an allow match
    /// allows; `apply_patch` rides on `write`; else not allowed. Unlike
    /// OpenClaw, an empty allow list allows nothing (it fails closed; the
    /// engine refuses one at compile time).
    pub(crate) fn decide(&self, tool: &ToolEntry) -> Verdict<'_> {
        if let Some(entry) = self.deny.matching_entry(tool) {
            return Verdict::Denied { entry };
        }
        match &self.allow {
            None => Verdict::Allow,
            Some(list) => {
                if list.matching_entry(tool).is_some()
                    || (self.apply_patch_via_write
                        && tool.name == "apply_patch"
                        && list.matches_name("write"))
                {
                    Verdict::Allow
                } else {
                    Verdict::NotAllowed
                }
            }
        }
    }

    /// The rule text for a verdict that removed a tool.
    pub(crate) fn rule_text(&self, verdict: &Verdict<'_>) -> String {
        match verdict {
            Verdict::Allow => String::new(),
            Verdict::Denied { entry } => match &self.default_deny {
                Some(DefaultDeny { fixed: Some(f), .. })
                    if f.entries.iter().any(|e| e == entry) =>
                {
                    format!("{} {entry}", f.rule_prefix)
                }
                Some(d) if d.entries.iter().any(|e| e == entry) => {
                    format!("{} {entry}", d.rule_prefix)
                }
                _ => format!("deny {entry}"),
            },
            Verdict::NotAllowed => self.not_allowed_rule.clone(),
        }
    }

    /// The config key to change for a verdict.
    pub(crate) fn key_for(&self, verdict: &Verdict<'_>) -> &str {
        match verdict {
            Verdict::Denied { entry } => match &self.default_deny {
                Some(DefaultDeny { fixed: Some(f), .. })
                    if f.entries.iter().any(|e| e == entry) =>
                {
                    f.key
                }
                Some(d) if d.entries.iter().any(|e| e == entry) => &d.lift_key,
                _ => &self.keys.deny,
            },
            _ => &self.keys.allow,
        }
    }
}

fn not_allowed_text(allow: Option<&CompiledList>) -> String {
    let entries = allow.map(|l| l.entries()).unwrap_or_default();
    let shown: Vec<&str> = entries.iter().take(6).map(String::as_str).collect();
    let more = if entries.len() > 6 {
        format!(", … {} more", entries.len() - 6)
    } else {
        String::new()
    };
    format!("not in allow list [{}{more}]", shown.join(", "))
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
