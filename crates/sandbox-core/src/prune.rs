//! When an idle or old sandbox is removed: the `prune` block
//! (`agents.defaults.sandbox.prune`, `agents.list[].sandbox.prune`), its
//! resolved form, and the one pure decision over a list of owned
//! sandboxes.
//!
//! OpenClaw's rule, kept as is: a sandbox is pruned when it has been idle
//! (now − last use) for *more than* `idleHours` hours, or is older
//! (now − creation) than `maxAgeDays` days. `0` turns each test off; both
//! `0` turns pruning off. With `scope: "shared"` the agent's block is
//! ignored (only the defaults apply).
//!
//! Talon adds two rules where OpenClaw is silent: a sandbox whose last use
//! is unknown counts as last used when it was created, and one whose
//! creation time is unknown is never pruned by age (nor, with no last use,
//! by idleness): what cannot be dated is kept. A sandbox with a call in
//! flight is never pruned, whatever its times say ([`PruneVerdict::Busy`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::backend::OwnedSandbox;
use crate::scope::SHARED_SCOPE_KEY;

/// OpenClaw's default idle limit: 24 hours.
pub const DEFAULT_PRUNE_IDLE_HOURS: u64 = 24;
/// OpenClaw's default age limit: 7 days.
pub const DEFAULT_PRUNE_MAX_AGE_DAYS: u64 = 7;

const HOUR_MS: u64 = 60 * 60 * 1000;
const DAY_MS: u64 = 24 * HOUR_MS;

/// `agents.defaults.sandbox.prune` / `agents.list[].sandbox.prune` as
/// written. Both values are whole, non-negative numbers (as in OpenClaw's
/// schema); anything else is a load error at its key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PruneConfig {
    /// Remove a sandbox unused for more than this many hours (default 24;
    /// 0 turns the idle test off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_hours: Option<u64>,
    /// Remove a sandbox older than this many days (default 7; 0 turns the
    /// age test off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_age_days: Option<u64>,
}

/// The prune settings of one sandbox scope, defaults applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PruneSettings {
    /// Idle limit in hours (0: no idle pruning).
    pub idle_hours: u64,
    /// Age limit in days (0: no age pruning).
    pub max_age_days: u64,
}

impl Default for PruneSettings {
    fn default() -> Self {
        PruneSettings {
            idle_hours: DEFAULT_PRUNE_IDLE_HOURS,
            max_age_days: DEFAULT_PRUNE_MAX_AGE_DAYS,
        }
    }
}

impl PruneSettings {
    /// Each field: the agent's value, else the defaults', else the built-in
    /// default. Pass `None` for `agent` when the scope is `shared`.
    pub fn resolve(defaults: Option<&PruneConfig>, agent: Option<&PruneConfig>) -> Self {
        let pick =
            |get: fn(&PruneConfig) -> Option<u64>| agent.and_then(get).or(defaults.and_then(get));
        PruneSettings {
            idle_hours: pick(|c| c.idle_hours).unwrap_or(DEFAULT_PRUNE_IDLE_HOURS),
            max_age_days: pick(|c| c.max_age_days).unwrap_or(DEFAULT_PRUNE_MAX_AGE_DAYS),
        }
    }

    /// Whether pruning is off (both limits 0).
    pub fn disabled(&self) -> bool {
        self.idle_hours == 0 && self.max_age_days == 0
    }
}

/// Whose prune settings apply to a sandbox, read from its scope key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScopeOwner {
    /// The shared sandbox (`shared`): the defaults' settings only.
    Shared,
    /// An agent's sandbox (`agent:<id>`) or one of its sessions'
    /// (`agent:<id>:...`).
    Agent(String),
    /// A session key that names no agent (`main`, a bare key): the
    /// default agent's.
    DefaultAgent,
}

/// Whose settings apply to the sandbox of `scope_key`.
pub fn scope_owner(scope_key: &str) -> ScopeOwner {
    let key = scope_key.trim();
    if key == SHARED_SCOPE_KEY {
        return ScopeOwner::Shared;
    }
    match key.strip_prefix("agent:") {
        Some(rest) => {
            let id = rest.split(':').next().unwrap_or_default().trim();
            if id.is_empty() {
                ScopeOwner::DefaultAgent
            } else {
                ScopeOwner::Agent(id.to_lowercase())
            }
        }
        None => ScopeOwner::DefaultAgent,
    }
}

/// Why a sandbox is pruned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PruneReason {
    /// Unused for longer than `idleHours`.
    Idle,
    /// Older than `maxAgeDays` (wins when both apply: use does not extend
    /// a sandbox's life past its age limit).
    MaxAge,
}

impl PruneReason {
    /// `idle` / `max-age`.
    pub fn as_str(self) -> &'static str {
        match self {
            PruneReason::Idle => "idle",
            PruneReason::MaxAge => "max-age",
        }
    }
}

/// What the decision says about one sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PruneVerdict {
    /// Within its limits (or pruning is off, or it cannot be dated).
    Keep,
    /// Past a limit: remove it.
    Prune(PruneReason),
    /// Past a limit, but a call is in flight in it: kept this time.
    Busy(PruneReason),
}

/// One sandbox the decision would remove (or keeps only because it is
/// busy), with the numbers behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PruneCandidate {
    /// The sandbox.
    pub sandbox: OwnedSandbox,
    /// The settings that applied.
    pub settings: PruneSettings,
    /// Why.
    pub reason: PruneReason,
    /// Whole hours since its last use (or creation, when never used).
    pub idle_hours: u64,
    /// Whole days since its creation (`None`: unknown).
    pub age_days: Option<u64>,
    /// A call is in flight in it: it is not removed.
    pub busy: bool,
}

/// The verdict for one sandbox with `settings` at `now_ms`.
pub fn prune_verdict(
    settings: PruneSettings,
    created_at_ms: Option<u64>,
    last_used_at_ms: Option<u64>,
    busy: bool,
    now_ms: u64,
) -> PruneVerdict {
    if settings.disabled() {
        return PruneVerdict::Keep;
    }
    let too_old = settings.max_age_days > 0
        && created_at_ms.is_some_and(|c| {
            now_ms.saturating_sub(c) > settings.max_age_days.saturating_mul(DAY_MS)
        });
    let too_idle = settings.idle_hours > 0
        && last_used_at_ms.or(created_at_ms).is_some_and(|u| {
            now_ms.saturating_sub(u) > settings.idle_hours.saturating_mul(HOUR_MS)
        });
    let reason = if too_old {
        PruneReason::MaxAge
    } else if too_idle {
        PruneReason::Idle
    } else {
        return PruneVerdict::Keep;
    };
    if busy {
        PruneVerdict::Busy(reason)
    } else {
        PruneVerdict::Prune(reason)
    }
}

/// The sandboxes to prune among `sandboxes` at `now_ms`: `settings_for`
/// gives each one's settings (see [`scope_owner`]), `busy` says whether a
/// call is in flight in it. Busy candidates are returned with
/// [`PruneCandidate::busy`] set so they can be reported, never removed.
/// The result is sorted by backend, then name.
pub fn prune_candidates(
    sandboxes: &[OwnedSandbox],
    settings_for: impl Fn(&OwnedSandbox) -> PruneSettings,
    busy: impl Fn(&OwnedSandbox) -> bool,
    now_ms: u64,
) -> Vec<PruneCandidate> {
    let mut out: Vec<PruneCandidate> = sandboxes
        .iter()
        .filter_map(|s| {
            let settings = settings_for(s);
            let is_busy = busy(s);
            let (reason, busy) = match prune_verdict(
                settings,
                s.created_at_ms,
                s.last_used_at_ms,
                is_busy,
                now_ms,
            ) {
                PruneVerdict::Keep => return None,
                PruneVerdict::Prune(r) => (r, false),
                PruneVerdict::Busy(r) => (r, true),
            };
            let last = s.last_used_at_ms.or(s.created_at_ms).unwrap_or(now_ms);
            Some(PruneCandidate {
                sandbox: s.clone(),
                settings,
                reason,
                idle_hours: now_ms.saturating_sub(last) / HOUR_MS,
                age_days: s.created_at_ms.map(|c| now_ms.saturating_sub(c) / DAY_MS),
                busy,
            })
        })
        .collect();
    out.sort_by(|a, b| {
        (&a.sandbox.backend_id, &a.sandbox.name).cmp(&(&b.sandbox.backend_id, &b.sandbox.name))
    });
    out
}

#[cfg(test)]
#[path = "prune_tests.rs"]
mod tests;
