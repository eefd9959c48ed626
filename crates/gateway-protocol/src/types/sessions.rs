//! `sessions.*`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Why a session's runs start (the policy's `trigger`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SessionTrigger {
    /// A person sent a message.
    User,
    /// A cron job fired.
    Cron,
    /// A heartbeat.
    Heartbeat,
    /// A memory-flush (compaction) run: only `read` and `write` survive.
    Memory,
}

/// What `sessions.create` takes (every field optional).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionParams {
    /// The session key (default: `agent:<agent>:gw:<random>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_key: Option<String>,
    /// The agent (default: the config's default agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The model provider (`openai`, `anthropic`, …): picks the schema
    /// dialect and the provider policy layers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The model id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The sender id (provider-local, as the front end relays it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender: Option<String>,
    /// Whether the sender is the owner (`false` removes the owner-only
    /// tools). The gateway decides it from the calling token: an `owner`
    /// or `operator` token is the owner (`false` is honoured, absent means
    /// `true`); for a `runner` token the sender is the owner only when it
    /// is in the owner list (`gateway.auth.ownerAllowFrom`,
    /// `commands.ownerAllowFrom`), and `true` is refused otherwise
    /// (forbidden, `errorCode` `session.owner_claim_refused`). The created
    /// session shows the decided value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_is_owner: Option<bool>,
    /// The sender's provider-native role ids (Discord roles, Slack user
    /// groups, …) as the front end relays them: at most 64, each 1–128
    /// printable characters. They reach hooks as `requester.roleIds`;
    /// they grant nothing by themselves (a hook or trusted policy decides
    /// what a role may do).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role_ids: Option<Vec<String>>,
    /// The group chat / channel id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The message channel (the message provider: `telegram`, `node`,
    /// ...): picks the `channels.<channel>` policies and the provider
    /// pre-filter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// The channel account (bot) that received the message (OpenClaw's
    /// `accountId`): picks `channels.<channel>.accounts.<account>.groups`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// The sender's display name (matches `toolsBySender` `name:` keys).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_name: Option<String>,
    /// The sender's handle (matches `toolsBySender` `username:` keys).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_username: Option<String>,
    /// The sender's phone number, E.164 (matches `toolsBySender` `e164:`
    /// keys).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_e164: Option<String>,
    /// Why the run started (`user`, `cron`, `heartbeat`, `memory`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<SessionTrigger>,
    /// The parent session: this one is its sub-agent and gets at most the
    /// parent's effective tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session_key: Option<String>,
    /// With a parent: a leaf sub-agent (may not spawn further).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf: Option<bool>,
    /// A label for the session (at most 128 characters, no control
    /// characters): kept with it, shown and filtered on by `sessions_list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// A session as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// The key.
    pub session_key: String,
    /// The agent.
    pub agent_id: String,
    /// What it was created with.
    pub params: SessionParams,
    /// Whether it runs sandboxed, as the runtime decided when the session
    /// was created (each tool table re-decides under the configuration it
    /// is built for).
    pub sandboxed: bool,
    /// When it was created (Unix ms).
    pub created_at_ms: u64,
    /// In `sessions.list`: `open`, or `closed` for a session kept as
    /// history (listed with `includeClosed`; its `sandboxed` is `false`,
    /// as nothing runs in it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// `sessions.list`'s params (all optional).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionsListParams {
    /// Also list the sessions kept as history (closed, or not reopened
    /// after a restart), from the state database.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_closed: Option<bool>,
    /// Only this agent's sessions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
}

/// `sessions.create`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SessionsCreateResponse {
    /// The session (an existing one when it was created with the same
    /// params).
    pub session: SessionInfo,
    /// The names of its tools, in table order.
    pub tools: Vec<String>,
}

/// `sessions.list`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SessionsListResponse {
    /// Every open session (and with `includeClosed` every stored one), by
    /// key.
    pub sessions: Vec<SessionInfo>,
}

/// `sessions.close`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionsCloseResponse {
    /// Always `true` (an unknown session is a not-found error).
    pub closed: bool,
    /// The closed session.
    pub session_key: String,
}

/// `sessions.spawn`'s params: `sessions_spawn` run as a call of
/// `sessionKey` (the parent), through the same gate as `tools.invoke`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionsSpawnParams {
    /// The parent session (the caller's).
    pub session_key: String,
    /// The caller's id for the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// What the child should do.
    pub task: String,
    /// A short title for the child.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// A stable alias for `subagents`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_name: Option<String>,
    /// The child's agent (its own, or one `subagents.allowAgents` lists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The run's budget in seconds (default
    /// `agents.defaults.subagents.runTimeoutSeconds`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_timeout_seconds: Option<u64>,
    /// `keep` (default) or `delete` the child session when it ends well.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleanup: Option<String>,
    /// A model for the runner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// A thinking level for the runner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
}

/// `sessions.send`'s params: `sessions_send` run as a call of
/// `sessionKey`, through the same gate as `tools.invoke`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionsSendParams {
    /// The sending session (the caller's).
    pub session_key: String,
    /// The caller's id for the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The target session (or `label`, or `agentId` for its main session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_session_key: Option<String>,
    /// The target's label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The target's agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The message.
    pub message: String,
    /// Seconds to wait for the reply (default 30; 0: do not wait).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
}

/// `sessions.history`'s params: `sessions_history` run as a call of
/// `sessionKey`, so the visibility rule is the tool's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionsHistoryParams {
    /// The reading session (the caller's).
    pub session_key: String,
    /// The caller's id for the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The session to read (default: the reading one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_session_key: Option<String>,
    /// At most this many records (default 20, at most 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    /// Whether tool calls are included (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_tools: Option<bool>,
}
