//! One approval request, the key an `allow-always` grant is stored under,
//! and the binding a resolver may attach to its decision.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::approval::{ApprovalDecision, ApprovalScope, ApprovalSeverity};
use crate::approval::{display_command, display_json};
use crate::event::ApprovalSpec;
use talon_canonical_json::{hash_json, sha256_hex};

/// The plugin id used when a spec does not name its plugin.
pub(crate) const UNKNOWN_PLUGIN: &str = "unknown";

/// The longest an approval request waits for a human: 24 hours.
///
/// A hook's `timeoutMs` (and the host's default timeout) is clamped to this
/// and to at least 1 ms, so a hook cannot park a call (and its pending
/// entry) for ever; the request then times out, and a timeout denies.
pub const MAX_APPROVAL_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// The shortest approval timeout, in milliseconds.
pub(crate) const MIN_APPROVAL_TIMEOUT_MS: u64 = 1;

/// The most an approver is shown of one request, in bytes: the parameters
/// (`paramsPreview`) and the exec command and environment
/// (`commandDisplay`, `envDisplay`), each whole. A request over it is not
/// asked at all (the call is refused, [`ApprovalRequest::too_large_to_show`]):
/// nothing an approver allows is ever hidden behind a cut.
pub const APPROVAL_DISPLAY_MAX_BYTES: usize = 64 * 1024;

/// How many hex characters of the SHA-256 a grant fingerprint keeps.
pub(crate) const FINGERPRINT_HEX_CHARS: usize = 32;

/// A question put to a human: may this one tool call run?
///
/// The request is bound to the model's call id and to the hash of the frozen
/// parameters, so a decision can be checked against exactly what will run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequest {
    /// The approval id: 128 bits, lower-case hex, generated per request.
    pub id: String,
    /// The model's tool call id.
    pub call_id: String,
    /// SHA-256 (hex) of the canonical JSON of the frozen parameters.
    pub params_hash: String,
    /// The frozen parameters as compact JSON, for the approver to read,
    /// whole (never cut: a request whose parameters exceed
    /// [`APPROVAL_DISPLAY_MAX_BYTES`] is refused instead). Every control
    /// character (C0, DEL, C1), bidi control, zero-width and separator
    /// character in it is a JSON `\uXXXX` escape
    /// ([`display_json`](crate::approval::display_json)), so it is safe to
    /// print on a terminal. It is announced with the request but never
    /// stored.
    #[serde(default)]
    pub params_preview: String,
    /// The normalised tool name.
    pub tool_name: String,
    /// The plugin that asked (`unknown` when the host could not tell).
    pub plugin_id: String,
    /// Short title shown to the approver.
    pub title: String,
    /// What is being approved.
    pub description: String,
    /// How loudly to ask.
    pub severity: ApprovalSeverity,
    /// How far an `allow-always` reaches.
    pub scope: ApprovalScope,
    /// The decisions the approver may give.
    pub allowed_decisions: Vec<ApprovalDecision>,
    /// The agent of the run.
    pub agent_id: String,
    /// The session of the run.
    pub session_key: String,
    /// How long to wait for a human before the request times out (and
    /// denies); between 1 ms and [`MAX_APPROVAL_TIMEOUT`].
    pub timeout_ms: u64,
    /// When the request was made (Unix milliseconds).
    pub created_at_ms: u64,
    /// For an exec approval: the exact command that runs if this is
    /// allowed, whole (never cut). Print it through
    /// [`display_command`](crate::approval::display_command), which escapes
    /// control and bidi characters instead of dropping them. Such a request
    /// is never answered from, nor remembered as, a broker grant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// For an exec approval whose call sets environment variables: those
    /// variables exactly as the call gives them (names and values; the
    /// host's own values are never shown), whole. Print values through
    /// [`display_command`](crate::approval::display_command).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<std::collections::BTreeMap<String, String>>,
    /// `command` as the approver must see it: whole, on one line, every
    /// control, ANSI-escape, bidi and zero-width character written out
    /// (`\u{001B}`, `\u{202E}`, …) by
    /// [`display_command`](crate::approval::display_command).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_display: Option<String>,
    /// `env` with names and values rendered the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_display: Option<std::collections::BTreeMap<String, String>>,
}

impl ApprovalRequest {
    /// A request for `spec`, about to run `tool_name` with `params`.
    ///
    /// A missing or empty `spec.plugin_id` becomes `unknown`; a missing
    /// timeout becomes `default_timeout`, and the timeout is clamped to
    /// between 1 ms and [`MAX_APPROVAL_TIMEOUT`]. `params_preview` is
    /// `params` as compact, terminal-safe JSON (see
    /// [`ApprovalRequest::params_preview`]). `allowed_decisions` keeps only the
    /// decisions a human may give (`timeout` and `cancelled` are dropped,
    /// duplicates removed); when nothing is left, or the spec gave none, all
    /// three user decisions are allowed.
    pub fn new(
        spec: &ApprovalSpec,
        call_id: impl Into<String>,
        tool_name: impl Into<String>,
        params: &Map<String, Value>,
        agent_id: impl Into<String>,
        session_key: impl Into<String>,
        default_timeout: Duration,
    ) -> Self {
        let plugin_id = match spec.plugin_id.as_deref() {
            Some(id) if !id.is_empty() => id.to_owned(),
            _ => UNKNOWN_PLUGIN.to_owned(),
        };
        let timeout_ms = clamp_timeout_ms(
            spec.timeout_ms
                .unwrap_or_else(|| u64::try_from(default_timeout.as_millis()).unwrap_or(u64::MAX)),
        );
        let params = Value::Object(params.clone());
        ApprovalRequest {
            id: new_approval_id(),
            call_id: call_id.into(),
            params_hash: hash_json(&params),
            params_preview: params_preview(&params),
            tool_name: tool_name.into(),
            plugin_id,
            title: spec.title.clone(),
            description: spec.description.clone(),
            severity: spec.severity.unwrap_or_default(),
            scope: spec.scope.unwrap_or_default(),
            allowed_decisions: allowed_decisions(spec.allowed_decisions.as_deref()),
            agent_id: agent_id.into(),
            session_key: session_key.into(),
            timeout_ms,
            created_at_ms: now_ms(),
            command: spec.exec_command.clone(),
            env: spec.exec_env.clone(),
            command_display: spec.exec_command.as_deref().map(display_command),
            env_display: spec.exec_env.as_ref().map(|env| {
                env.iter()
                    .map(|(k, v)| (display_command(k), display_command(v)))
                    .collect()
            }),
        }
    }

    /// How many bytes the approver would be shown (parameters, command,
    /// environment), when that is over [`APPROVAL_DISPLAY_MAX_BYTES`]: such
    /// a request is refused rather than shown in part.
    pub fn too_large_to_show(&self) -> Option<usize> {
        let env: usize = self
            .env_display
            .iter()
            .flatten()
            .map(|(k, v)| k.len() + v.len())
            .sum();
        let shown =
            self.params_preview.len() + self.command_display.as_ref().map_or(0, String::len) + env;
        (shown > APPROVAL_DISPLAY_MAX_BYTES).then_some(shown)
    }

    /// The key an `allow-always` answer to this request is remembered under:
    /// the scope, the plugin, the tool and the [fingerprint] of what the
    /// approver was shown.
    ///
    /// [fingerprint]: ApprovalRequest::fingerprint
    pub fn grant_key(&self) -> GrantKey {
        let scope_value = match self.scope {
            ApprovalScope::Session => self.session_key.clone(),
            ApprovalScope::Agent => self.agent_id.clone(),
            ApprovalScope::Global => String::new(),
        };
        GrantKey {
            scope: self.scope,
            scope_value,
            plugin_id: self.plugin_id.clone(),
            tool_name: self.tool_name.clone(),
            fingerprint: self.fingerprint(),
        }
    }

    /// What the approver was asked, as 32 hex characters: the start of the
    /// SHA-256 of the canonical JSON of `{severity, title, description}`.
    /// A grant given for one question does not answer another one from the
    /// same plugin and tool (another title, description or severity).
    pub fn fingerprint(&self) -> String {
        let question = json!({
            "severity": self.severity,
            "title": self.title,
            "description": self.description,
        });
        let mut fingerprint = hash_json(&question);
        fingerprint.truncate(FINGERPRINT_HEX_CHARS);
        fingerprint
    }

    /// Whether an `allow-always` answer to this request may be remembered,
    /// and a remembered grant may answer it: never for a `critical`
    /// request (each one is asked), nor when the grant key
    /// [is not rememberable](GrantKey::is_rememberable).
    pub fn is_rememberable(&self) -> bool {
        self.command.is_none()
            && self.severity != ApprovalSeverity::Critical
            && self.grant_key().is_rememberable()
    }

    /// The binding of this request, for a resolver that wants its decision
    /// checked against the call it saw.
    pub fn binding(&self) -> ApprovalBinding {
        ApprovalBinding {
            call_id: self.call_id.clone(),
            params_hash: self.params_hash.clone(),
        }
    }

    /// The timeout as a [`Duration`], clamped to between 1 ms and
    /// [`MAX_APPROVAL_TIMEOUT`] (the fields are public, so a request built by
    /// hand is clamped here too).
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(clamp_timeout_ms(self.timeout_ms))
    }
}

/// Where an `allow-always` grant applies: one plugin, one tool, one
/// question (the fingerprint of its severity, title and description), and
/// the session, agent or everything depending on the scope.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrantKey {
    /// How far the grant reaches.
    pub scope: ApprovalScope,
    /// The session key (session scope), the agent id (agent scope) or the
    /// empty string (global scope).
    pub scope_value: String,
    /// The plugin that asked.
    pub plugin_id: String,
    /// The tool.
    pub tool_name: String,
    /// What the approver was asked ([`ApprovalRequest::fingerprint`]).
    pub fingerprint: String,
}

impl GrantKey {
    /// Whether a grant under this key may be stored and looked up. A
    /// session or agent grant without a session key or agent id would
    /// answer every other run that lacks one too, so it is never
    /// remembered.
    pub fn is_rememberable(&self) -> bool {
        self.scope == ApprovalScope::Global || !self.scope_value.is_empty()
    }
}

/// What a resolver saw when it decided: the decision only applies if the
/// pending request has the same call id and parameters hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalBinding {
    /// The model's tool call id.
    pub call_id: String,
    /// SHA-256 (hex) of the canonical JSON of the parameters.
    pub params_hash: String,
}

/// The allowed decisions of a spec, reduced to user decisions.
fn allowed_decisions(spec: Option<&[ApprovalDecision]>) -> Vec<ApprovalDecision> {
    let mut out: Vec<ApprovalDecision> = Vec::new();
    for decision in spec.unwrap_or_default() {
        if decision.is_user_decision() && !out.contains(decision) {
            out.push(*decision);
        }
    }
    if out.is_empty() {
        ApprovalDecision::USER_DECISIONS.to_vec()
    } else {
        out
    }
}

/// `timeout_ms` clamped to between 1 ms and [`MAX_APPROVAL_TIMEOUT`].
pub(crate) fn clamp_timeout_ms(timeout_ms: u64) -> u64 {
    let max = u64::try_from(MAX_APPROVAL_TIMEOUT.as_millis()).unwrap_or(u64::MAX);
    timeout_ms.clamp(MIN_APPROVAL_TIMEOUT_MS, max)
}

/// `params` as compact JSON for the approver, whole: `serde_json` escapes
/// C0 controls, and everything else unsafe on a terminal is escaped by
/// [`display_json`], so the text stays valid JSON.
pub(crate) fn params_preview(params: &Value) -> String {
    display_json(&serde_json::to_string(params).unwrap_or_default())
}

/// The current time in Unix milliseconds (0 if the clock is before 1970).
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// A fresh approval id: the first 128 bits (32 hex digits) of a SHA-256 over
/// two SipHash outputs keyed by the standard library's per-thread random
/// keys (seeded from the operating system), the wall clock in nanoseconds,
/// a process-wide counter, the process id and a stack address. The counter
/// alone makes ids unique within the process; the random keys make them
/// hard to guess.
pub(crate) fn new_approval_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let first = RandomState::new().hash_one((count, nanos));
    let second = RandomState::new().hash_one((nanos, count, std::process::id()));
    let local = 0_u8;
    let address = (&raw const local).addr();
    let seed = format!(
        "{first:016x}:{second:016x}:{nanos}:{count}:{}:{address:x}",
        std::process::id()
    );
    let mut id = sha256_hex(seed);
    id.truncate(32);
    id
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
