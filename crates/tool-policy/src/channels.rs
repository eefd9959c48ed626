//! The group and sender layers' policies: `toolsBySender` tables with
//! OpenClaw's typed sender keys, and the `channels.<provider>` sections
//! (provider, account and group matching), compiled once.
//!
//! Matching follows OpenClaw's `group-policy.ts`: a sender table is
//! searched `channel:` → `id:` → `e164:` → `username:` → `name:` → `*`,
//! and the first hit is the policy (even an empty one, which then restricts
//! nothing: that is how a sender is exempted). A channel's group layer is
//! the first of: the group's sender match, the group's `tools`, the `*`
//! group's sender match, the `*` group's `tools`, and (Talon's addition)
//! the provider's own sender match and `tools`.

use std::collections::{BTreeMap, HashMap};

use crate::config::{ChannelGroupToolsConfig, ChannelToolsConfig, ToolPolicyConfig};
use crate::context::RunContext;
use crate::error::PolicyError;
use crate::policy::{CompiledPolicy, PolicyKeys};

/// One matched entry: the config key that produced it and its policy
/// (`None`: the entry sets no list, so it restricts nothing).
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) key: String,
    pub(crate) policy: Option<CompiledPolicy>,
    /// The raw allow lists, for `explain`'s allowlist warnings.
    pub(crate) allow: Option<Vec<String>>,
    pub(crate) also_allow: Option<Vec<String>>,
}

impl Entry {
    fn new(key: String, cfg: &ToolPolicyConfig) -> Self {
        Entry {
            policy: CompiledPolicy::from_config(cfg, PolicyKeys::under(&key)),
            allow: cfg.allow.clone(),
            also_allow: cfg.also_allow.clone(),
            key,
        }
    }
}

/// The sender kinds a `toolsBySender` key can name, in match order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Channel,
    Id,
    E164,
    Username,
    Name,
}

const PREFIXES: [(&str, Kind); 5] = [
    ("channel:", Kind::Channel),
    ("id:", Kind::Id),
    ("e164:", Kind::E164),
    ("username:", Kind::Username),
    ("name:", Kind::Name),
];

/// Lowercase after trimming; `strip_at` also drops one leading `@`.
fn norm(value: &str, strip_at: bool) -> String {
    let t = value.trim();
    let t = if strip_at {
        // Trimmed again: `@ alice` is `alice`, so a canonical key
        // normalises to itself.
        t.strip_prefix('@').unwrap_or(t).trim()
    } else {
        t
    };
    t.to_lowercase()
}

/// `telegram:42` → `telegram:42` normalised; `None` when either half is
/// empty.
fn norm_channel_key(value: &str) -> Option<String> {
    let (provider, id) = value.trim().split_once(':')?;
    let provider = norm(provider, false);
    let id = norm(id, false);
    (!provider.is_empty() && !id.is_empty()).then(|| format!("{provider}:{id}"))
}

/// Why a `toolsBySender` key names no sender.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SenderKeyError {
    /// An empty key.
    #[error("a sender key must not be empty (use `*` for every sender)")]
    Empty,
    /// A prefix with nothing after it (`id:`).
    #[error("`{0}` needs a value after it")]
    MissingValue(&'static str),
    /// `channel:` without `<provider>:<sender id>`.
    #[error("`channel:` needs `<provider>:<sender id>` after it (e.g. `channel:telegram:42`)")]
    ChannelForm,
}

/// A key's kind and normalised value (`None` for `*`).
fn parse_key(raw: &str) -> Result<Option<(Kind, String)>, SenderKeyError> {
    let trimmed = raw.trim();
    if trimmed == "*" {
        return Ok(None);
    }
    for (prefix, kind) in PREFIXES {
        // The prefixes are ASCII: compare the key's first bytes, so a
        // non-ASCII key never shifts where the value starts.
        let Some(value) = trimmed
            .get(..prefix.len())
            .filter(|head| head.eq_ignore_ascii_case(prefix))
            .and_then(|_| trimmed.get(prefix.len()..))
        else {
            continue;
        };
        let key = match kind {
            Kind::Channel => norm_channel_key(value),
            Kind::Username => Some(norm(value, true)).filter(|v| !v.is_empty()),
            _ => Some(norm(value, false)).filter(|v| !v.is_empty()),
        };
        return match key {
            Some(k) => Ok(Some((kind, k))),
            None if kind == Kind::Channel => Err(SenderKeyError::ChannelForm),
            None => Err(SenderKeyError::MissingValue(prefix)),
        };
    }
    // An unprefixed key is a sender id (OpenClaw's legacy form).
    let key = norm(trimmed, true);
    if key.is_empty() {
        return Err(SenderKeyError::Empty);
    }
    Ok(Some((Kind::Id, key)))
}

impl Kind {
    fn prefix(self) -> &'static str {
        match self {
            Kind::Channel => "channel:",
            Kind::Id => "id:",
            Kind::E164 => "e164:",
            Kind::Username => "username:",
            Kind::Name => "name:",
        }
    }
}

/// A `toolsBySender` key in its canonical form (`id:alice` for `@Alice`,
/// `channel:telegram:42`, ...; `None` for `*`), or why it names no
/// sender. Two keys of one map with the same canonical form are refused
/// by [`crate::PolicyEngine::new`].
pub fn normalize_sender_key(raw: &str) -> Result<Option<String>, SenderKeyError> {
    parse_key(raw).map(|k| k.map(|(kind, v)| format!("{}{v}", kind.prefix())))
}

/// Who sent the message, as the sender tables match it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Who<'a> {
    provider: Option<&'a str>,
    id: Option<&'a str>,
    e164: Option<&'a str>,
    username: Option<&'a str>,
    name: Option<&'a str>,
}

impl<'a> Who<'a> {
    pub(crate) fn of(ctx: &'a RunContext) -> Self {
        Who {
            provider: ctx.message_provider.as_deref(),
            id: ctx.sender_id.as_deref(),
            e164: ctx.sender_e164.as_deref(),
            username: ctx.sender_username.as_deref(),
            name: ctx.sender_name.as_deref(),
        }
    }
}

/// A compiled `toolsBySender` map.
#[derive(Debug, Clone, Default)]
pub(crate) struct SenderTable {
    typed: HashMap<(Kind, String), Entry>,
    wildcard: Option<Entry>,
}

impl SenderTable {
    /// Compile `map` written at `prefix` (`tools.toolsBySender`). Two keys
    /// that name the same sender, and a key that names nobody, are errors:
    /// one of them would be ignored.
    pub(crate) fn compile(
        map: Option<&BTreeMap<String, ToolPolicyConfig>>,
        prefix: &str,
    ) -> Result<Option<Self>, PolicyError> {
        let Some(map) = map.filter(|m| !m.is_empty()) else {
            return Ok(None);
        };
        let mut table = SenderTable::default();
        let mut seen: HashMap<(Kind, String), String> = HashMap::new();
        for (raw, cfg) in map {
            let key = format!("{prefix}.{raw}");
            match parse_key(raw) {
                Err(e) => {
                    return Err(PolicyError::BadSenderKey {
                        key,
                        reason: e.to_string(),
                    });
                }
                Ok(None) => {
                    if let Some(prev) = &table.wildcard {
                        return Err(PolicyError::DuplicateSenderKey {
                            key,
                            other: prev.key.clone(),
                        });
                    }
                    table.wildcard = Some(Entry::new(key, cfg));
                }
                Ok(Some(k)) => {
                    if let Some(other) = seen.get(&k) {
                        return Err(PolicyError::DuplicateSenderKey {
                            key,
                            other: other.clone(),
                        });
                    }
                    seen.insert(k.clone(), key.clone());
                    table.typed.insert(k, Entry::new(key, cfg));
                }
            }
        }
        Ok(Some(table))
    }

    /// The entry for `who`, in OpenClaw's order (the wildcard also for a
    /// run that names no sender, as in OpenClaw).
    pub(crate) fn find(&self, who: &Who<'_>) -> Option<&Entry> {
        let get = |kind, v: String| self.typed.get(&(kind, v));
        let ids: Vec<String> = who
            .id
            .map(|id| {
                let typed = norm(id, false);
                let legacy = norm(id, true);
                let mut v = vec![typed.clone()];
                if legacy != typed && !legacy.is_empty() {
                    v.push(legacy);
                }
                v.retain(|s| !s.is_empty());
                v
            })
            .unwrap_or_default();
        if let Some(p) = who
            .provider
            .map(|p| norm(p, false))
            .filter(|p| !p.is_empty())
        {
            for id in &ids {
                if let Some(e) = get(Kind::Channel, format!("{p}:{id}")) {
                    return Some(e);
                }
            }
        }
        for id in &ids {
            if let Some(e) = get(Kind::Id, id.clone()) {
                return Some(e);
            }
        }
        let typed = [
            (Kind::E164, who.e164, false),
            (Kind::Username, who.username, true),
            (Kind::Name, who.name, false),
        ];
        for (kind, value, strip_at) in typed {
            if let Some(v) = value.map(|v| norm(v, strip_at)).filter(|v| !v.is_empty())
                && let Some(e) = get(kind, v)
            {
                return Some(e);
            }
        }
        self.wildcard.as_ref()
    }
}

/// One group entry (or a provider's own defaults): `tools` and
/// `toolsBySender`.
#[derive(Debug, Clone, Default)]
struct GroupEntry {
    tools: Option<Entry>,
    by_sender: Option<SenderTable>,
}

impl GroupEntry {
    fn compile(
        tools: Option<&ToolPolicyConfig>,
        by_sender: Option<&BTreeMap<String, ToolPolicyConfig>>,
        prefix: &str,
    ) -> Result<Self, PolicyError> {
        Ok(GroupEntry {
            tools: tools.map(|t| Entry::new(format!("{prefix}.tools"), t)),
            by_sender: SenderTable::compile(by_sender, &format!("{prefix}.toolsBySender"))?,
        })
    }

    /// The sender match, else `tools`.
    fn find(&self, who: &Who<'_>) -> Option<&Entry> {
        self.by_sender
            .as_ref()
            .and_then(|t| t.find(who))
            .or(self.tools.as_ref())
    }
}

/// A `groups` map: exact ids, a lowercase index, and `*`.
#[derive(Debug, Clone, Default)]
struct GroupTable {
    exact: HashMap<String, GroupEntry>,
    folded: HashMap<String, String>,
    star: Option<GroupEntry>,
    empty: bool,
}

impl GroupTable {
    fn compile(
        map: &BTreeMap<String, ChannelGroupToolsConfig>,
        prefix: &str,
    ) -> Result<Self, PolicyError> {
        let mut t = GroupTable {
            empty: map.is_empty(),
            ..GroupTable::default()
        };
        for (id, g) in map {
            let entry = GroupEntry::compile(
                g.tools.as_ref(),
                g.tools_by_sender.as_ref(),
                &format!("{prefix}.groups.{id}"),
            )?;
            let id = id.trim();
            if id == "*" {
                t.star = Some(entry);
            } else {
                t.folded
                    .entry(id.to_lowercase())
                    .or_insert_with(|| id.to_owned());
                t.exact.insert(id.to_owned(), entry);
            }
        }
        Ok(t)
    }

    /// The group's entry: exact id, else the same id ignoring case.
    fn group(&self, id: &str) -> Option<&GroupEntry> {
        self.exact.get(id).or_else(|| {
            self.folded
                .get(&id.to_lowercase())
                .and_then(|k| self.exact.get(k))
        })
    }
}

/// One provider's compiled `channels.<provider>` policies.
#[derive(Debug, Clone, Default)]
pub(crate) struct ChannelLayer {
    defaults: GroupEntry,
    groups: Option<GroupTable>,
    /// By lowercased account id; `None` when the account lists no groups.
    accounts: HashMap<String, Option<GroupTable>>,
    multi_account: bool,
}

impl ChannelLayer {
    fn compile(provider: &str, cfg: &ChannelToolsConfig) -> Result<Self, PolicyError> {
        let prefix = format!("channels.{provider}");
        let mut accounts = HashMap::new();
        for (id, acct) in cfg.accounts.iter().flatten() {
            let groups = acct
                .groups
                .as_ref()
                .map(|g| GroupTable::compile(g, &format!("{prefix}.accounts.{id}")))
                .transpose()?;
            accounts.insert(norm(id, false), groups);
        }
        Ok(ChannelLayer {
            defaults: GroupEntry::compile(
                cfg.tools.as_ref(),
                cfg.tools_by_sender.as_ref(),
                &prefix,
            )?,
            groups: cfg
                .groups
                .as_ref()
                .map(|g| GroupTable::compile(g, &prefix))
                .transpose()?,
            multi_account: accounts.len() > 1,
            accounts,
        })
    }

    /// OpenClaw's `resolveChannelGroups`: with one account, its groups
    /// when it lists any, else the provider's; with several, the
    /// account's `groups` when it has that key, else the provider's.
    fn groups_for(&self, account: Option<&str>) -> Option<&GroupTable> {
        let account = account
            .map(|a| norm(a, false))
            .filter(|a| !a.is_empty())
            .unwrap_or_else(|| "default".to_owned());
        let own = self.accounts.get(&account);
        if self.multi_account {
            match own {
                Some(Some(t)) => Some(t),
                _ => self.groups.as_ref(),
            }
        } else {
            match own {
                Some(Some(t)) if !t.empty => Some(t),
                _ => self.groups.as_ref(),
            }
        }
    }

    fn find(&self, ctx: &RunContext, who: &Who<'_>) -> Option<&Entry> {
        let group = ctx
            .group_id
            .as_deref()
            .map(str::trim)
            .filter(|g| !g.is_empty());
        if let Some(gid) = group
            && let Some(table) = self.groups_for(ctx.channel_account.as_deref())
        {
            // A topic or per-sender conversation falls back to its chat's
            // entry before `*` (OpenClaw's scoped group id candidates).
            let hit = group_candidates(gid)
                .into_iter()
                .find_map(|id| table.group(id))
                .and_then(|g| g.find(who))
                .or_else(|| table.star.as_ref().and_then(|g| g.find(who)));
            if hit.is_some() {
                return hit;
            }
        }
        self.defaults.find(who)
    }
}

/// `chat:topic:T:sender:S` → itself, `chat:topic:T`, `chat`;
/// `chat:topic:T` → itself, `chat`; `chat:sender:S` → itself, `chat`.
fn group_candidates(id: &str) -> Vec<&str> {
    let mut out = vec![id];
    let lower = id.to_ascii_lowercase();
    if let Some(at) = lower.find(":sender:")
        && at > 0
    {
        out.push(&id[..at]);
    }
    if let Some(at) = lower.find(":topic:")
        && at > 0
    {
        out.push(&id[..at]);
    }
    out.dedup();
    out
}

/// Every provider's channel layer, by lowercased provider id.
#[derive(Debug, Clone, Default)]
pub(crate) struct Channels {
    by_provider: HashMap<String, ChannelLayer>,
}

impl Channels {
    pub(crate) fn compile(cfg: &BTreeMap<String, ChannelToolsConfig>) -> Result<Self, PolicyError> {
        let mut by_provider = HashMap::new();
        for (provider, c) in cfg {
            by_provider.insert(norm(provider, false), ChannelLayer::compile(provider, c)?);
        }
        Ok(Channels { by_provider })
    }

    /// The channel entry for this run: its message provider's layer, its
    /// account's groups, its group, its sender.
    pub(crate) fn find<'s>(&'s self, ctx: &RunContext, who: &Who<'_>) -> Option<&'s Entry> {
        if self.by_provider.is_empty() {
            return None;
        }
        let provider = norm(ctx.message_provider.as_deref()?, false);
        self.by_provider.get(&provider)?.find(ctx, who)
    }
}

#[cfg(test)]
#[path = "channels_tests.rs"]
mod tests;

#[cfg(test)]
mod sender_key_tests {
    use super::*;

    /// A canonical key is its own canonical form, whatever the spelling it
    /// came from (found by the `channel_policy` fuzz target: whitespace
    /// after a leading `@`).
    #[test]
    fn a_canonical_sender_key_normalises_to_itself() {
        for raw in [
            "@\t\0Mallory",
            "@ alice",
            "username:@ Bob ",
            "ID:Carol",
            "channel: Telegram : 42 ",
            "@@x",
            "@id:foo",
            "e164:+1 555",
            "name:  Dave\u{a0}",
        ] {
            let canonical = normalize_sender_key(raw).unwrap().unwrap();
            assert_eq!(
                normalize_sender_key(&canonical),
                Ok(Some(canonical.clone())),
                "{raw:?}"
            );
        }
        assert_eq!(normalize_sender_key("@ "), Err(SenderKeyError::Empty));
    }
}
