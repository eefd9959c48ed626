//! What a `before_tool_call` handler receives and may return.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use talon_tool_catalog::Canceller;

use crate::approval::{ApprovalDecision, ApprovalScope, ApprovalSeverity};

/// The host-derived requester of the current run. Every field is optional:
/// a missing field means "not proven", never a false guarantee, so a policy
/// that needs one must fail closed when it is absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Requester {
    /// The channel (`discord`, `telegram`, `cli`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// The account the request came through: for the gateway, the id of
    /// the token the caller authenticated with (`gateway.auth.tokens[].id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<String>,
    /// The account's role: for the gateway, the token's scope
    /// (`read-only`, `runner`, `owner`, `operator`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The sender id (provider-local namespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_id: Option<String>,
    /// Whether the sender is the owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_is_owner: Option<bool>,
    /// Provider-native role ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role_ids: Option<Vec<String>>,
}

/// The run a tool call belongs to. Cloned into every event; cheap.
#[derive(Debug, Clone, Default)]
pub struct HookContext {
    /// The agent id.
    pub agent_id: String,
    /// The session key.
    pub session_key: String,
    /// The session id, when the host has one.
    pub session_id: Option<String>,
    /// The run id.
    pub run_id: Option<String>,
    /// Who started the run; `None` means nobody was proven.
    pub requester: Option<Requester>,
    /// The provider the run's messages come through (`telegram`, `cli`,
    /// `gateway`, …), when known.
    pub message_provider: Option<String>,
    /// The channel (group chat / channel id) the run's messages come from,
    /// when known.
    pub channel_id: Option<String>,
    /// Cancels the run and records why. Handlers pass its
    /// [`token`](Canceller::token) to cancellable I/O; the loop detector's
    /// circuit breaker cancels it.
    pub abort: Canceller,
    /// Where an `exec` call of this run would start, for binding an exec
    /// approval to its canonical working directory and file operands
    /// ([`ExecPin`](crate::exec_approvals::ExecPin)). Set by the runtime
    /// for runs whose `exec` runs on the host; without it an approval is
    /// not pinned.
    pub exec_workdir: Option<Arc<dyn crate::exec_approvals::ExecWorkdir>>,
}

impl HookContext {
    /// A context for an agent and session, with a fresh canceller.
    pub fn new(agent_id: impl Into<String>, session_key: impl Into<String>) -> Self {
        HookContext {
            agent_id: agent_id.into(),
            session_key: session_key.into(),
            ..HookContext::default()
        }
    }

    /// The context as JSON (for command hooks and logs); the canceller is
    /// left out.
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("agentId".into(), Value::String(self.agent_id.clone()));
        map.insert("sessionKey".into(), Value::String(self.session_key.clone()));
        if let Some(id) = &self.session_id {
            map.insert("sessionId".into(), Value::String(id.clone()));
        }
        if let Some(id) = &self.run_id {
            map.insert("runId".into(), Value::String(id.clone()));
        }
        if let Some(p) = &self.message_provider {
            map.insert("messageProvider".into(), Value::String(p.clone()));
        }
        if let Some(c) = &self.channel_id {
            map.insert("channelId".into(), Value::String(c.clone()));
        }
        if let Some(r) = &self.requester
            && let Ok(v) = serde_json::to_value(r)
        {
            map.insert("requester".into(), v);
        }
        Value::Object(map)
    }
}

/// The event every `before_tool_call` handler and trusted policy receives.
/// Each handler gets its own copy of the original event: a handler that
/// changes its copy changes nothing for the others.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BeforeToolCallEvent {
    /// The normalised tool name.
    pub tool_name: String,
    /// The call's parameters.
    pub params: Map<String, Value>,
    /// Host-authoritative discriminator for tools that share a name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_kind: Option<String>,
    /// The kind of input (e.g. `javascript` for a code-mode exec).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_input_kind: Option<String>,
    /// Best-effort target paths the host derived from the parameters
    /// (e.g. the files an `apply_patch` touches). May be incomplete.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub derived_paths: Vec<String>,
    /// The run id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The model's call id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl BeforeToolCallEvent {
    /// An event for `tool_name` with `params`; paths are derived from the
    /// parameters (see [`derive_paths`]).
    pub fn new(tool_name: impl Into<String>, params: Map<String, Value>) -> Self {
        let tool_name = tool_name.into();
        let derived_paths = derive_paths(&tool_name, &params);
        BeforeToolCallEvent {
            tool_name,
            params,
            tool_kind: None,
            tool_input_kind: None,
            derived_paths,
            run_id: None,
            tool_call_id: None,
        }
    }

    /// Builder: the call id.
    pub fn with_call_id(mut self, id: impl Into<String>) -> Self {
        self.tool_call_id = Some(id.into());
        self
    }

    /// Builder: the run id.
    pub fn with_run_id(mut self, id: Option<String>) -> Self {
        self.run_id = id;
        self
    }
}

/// Best-effort paths a call will touch: the `path` / `file_path` parameter
/// of the file tools, and the `*** Add/Update/Delete File:` and `*** Move
/// to:` targets of an `apply_patch` input. Hooks must treat these as hints.
pub fn derive_paths(tool_name: &str, params: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    match tool_name {
        "read" | "write" | "edit" => {
            for key in ["path", "file_path", "filePath"] {
                if let Some(Value::String(p)) = params.get(key) {
                    out.push(p.clone());
                    break;
                }
            }
        }
        "apply_patch" => {
            if let Some(Value::String(input)) = params.get("input").or_else(|| params.get("patch"))
            {
                for line in input.lines() {
                    let line = line.trim_end();
                    for prefix in [
                        "*** Add File: ",
                        "*** Update File: ",
                        "*** Delete File: ",
                        "*** Move to: ",
                    ] {
                        if let Some(path) = line.strip_prefix(prefix) {
                            let path = path.trim();
                            if !path.is_empty() && !out.iter().any(|p| p == path) {
                                out.push(path.to_owned());
                            }
                        }
                    }
                }
            }
        }
        _ => {}
    }
    out
}

/// Called once with the final decision of an approval a handler asked for.
pub type OnResolution = Arc<dyn Fn(ApprovalDecision) + Send + Sync>;

/// A handler's request for human approval.
#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalSpec {
    /// Short title shown to the approver.
    pub title: String,
    /// What is being approved.
    pub description: String,
    /// How far an `allow-always` reaches (default: the session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<ApprovalScope>,
    /// How loudly to ask.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<ApprovalSeverity>,
    /// How long to wait before the approval times out (and denies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Which decisions the approver may choose (default: all three).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_decisions: Option<Vec<ApprovalDecision>>,
    /// The plugin that asked; stamped by the host, whatever the handler
    /// wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin_id: Option<String>,
    /// Told the final decision (`allow-once`, `allow-always`, `deny`,
    /// `timeout` or `cancelled`).
    #[serde(skip)]
    pub on_resolution: Option<OnResolution>,
    /// Set only by the gate's exec-approvals step (never by a hook): the
    /// exact command the approver is asked about. Such a request is shown
    /// the whole command and is never answered from, nor remembered in,
    /// the broker's grants (the exec allowlist file is the memory).
    #[serde(skip)]
    pub exec_command: Option<String>,
    /// Set only by the gate's exec-approvals step, with `exec_command`:
    /// the environment variables the call itself sets (names and values
    /// exactly as the model gave them; never a host value), shown whole.
    #[serde(skip)]
    pub exec_env: Option<std::collections::BTreeMap<String, String>>,
    /// Set only by the gate's exec-approvals step, with `exec_command`:
    /// the working directory and file operands the approval is bound to,
    /// taken when the approver is asked and checked by the exec tool
    /// immediately before the command starts.
    #[serde(skip)]
    pub exec_pin: Option<Arc<crate::exec_approvals::ExecPin>>,
}

impl std::fmt::Debug for ApprovalSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalSpec")
            .field("title", &self.title)
            .field("description", &self.description)
            .field("scope", &self.scope)
            .field("severity", &self.severity)
            .field("timeout_ms", &self.timeout_ms)
            .field("allowed_decisions", &self.allowed_decisions)
            .field("plugin_id", &self.plugin_id)
            .field("on_resolution", &self.on_resolution.is_some())
            .field("exec_command", &self.exec_command)
            .field("exec_env", &self.exec_env)
            .field("exec_pin", &self.exec_pin)
            .finish()
    }
}

impl PartialEq for ApprovalSpec {
    fn eq(&self, other: &Self) -> bool {
        self.title == other.title
            && self.description == other.description
            && self.scope == other.scope
            && self.severity == other.severity
            && self.timeout_ms == other.timeout_ms
            && self.allowed_decisions == other.allowed_decisions
            && self.plugin_id == other.plugin_id
            && self.exec_command == other.exec_command
            && self.exec_env == other.exec_env
            && self.exec_pin == other.exec_pin
    }
}

/// What a `before_tool_call` handler (or trusted policy) returns.
/// `None` / all-absent means "no decision".
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BeforeToolCallResult {
    /// Replacement parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Map<String, Value>>,
    /// `true` blocks the call (terminal); `false` is no decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<bool>,
    /// Why it was blocked (shown to the model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_reason: Option<String>,
    /// Ask a human first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_approval: Option<ApprovalSpec>,
}

impl BeforeToolCallResult {
    /// A block with a reason.
    pub fn block(reason: impl Into<String>) -> Self {
        BeforeToolCallResult {
            block: Some(true),
            block_reason: Some(reason.into()),
            ..Self::default()
        }
    }

    /// Rewrite the parameters.
    pub fn params(params: Map<String, Value>) -> Self {
        BeforeToolCallResult {
            params: Some(params),
            ..Self::default()
        }
    }

    /// Ask for approval.
    pub fn approval(spec: ApprovalSpec) -> Self {
        BeforeToolCallResult {
            require_approval: Some(spec),
            ..Self::default()
        }
    }
}
