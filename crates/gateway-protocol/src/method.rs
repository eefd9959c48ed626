//! Every method, declared once: its wire name, least scope, params and
//! response types. [`MethodName`], [`Request`], the marker types in
//! [`methods`] and the schema's method list are all generated from the one
//! table at the bottom of this file, so a method cannot exist without a
//! scope or types, and a match over either enum is exhaustive.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::frame::{INVALID_PARAMS, METHOD_NOT_FOUND, RpcError};
use crate::scope::Scope;
use crate::types::approvals::*;
use crate::types::common::*;
use crate::types::config::*;
use crate::types::cron::*;
use crate::types::gateway::*;
use crate::types::mcp::*;
use crate::types::runner::*;
use crate::types::sandbox::*;
use crate::types::security::*;
use crate::types::sessions::*;
use crate::types::skills::*;
use crate::types::tasks::*;
use crate::types::tools::*;

/// One method of the gateway protocol (implemented by the marker types in
/// [`methods`]). A Rust client builds `M::Params` and reads `M::Response`.
pub trait Method {
    /// The wire name (`tools.invoke`).
    const NAME: &'static str;
    /// The least scope a token needs to call it.
    const SCOPE: Scope;
    /// The method as a [`MethodName`].
    const METHOD: MethodName;
    /// What it takes.
    type Params: Serialize + DeserializeOwned + schemars::JsonSchema;
    /// What it answers.
    type Response: Serialize + DeserializeOwned + schemars::JsonSchema;
}

/// Decode `params` as `T`, answering with the existing "invalid params"
/// error (the method, then serde's message naming the field).
fn decode<T: DeserializeOwned>(method: MethodName, params: Value) -> Result<T, RpcError> {
    let params = if params.is_null() {
        Value::Object(Map::new())
    } else {
        params
    };
    serde_json::from_value(params).map_err(|e| {
        RpcError::new(
            INVALID_PARAMS,
            format!("{}: invalid params: {e}", method.as_str()),
        )
    })
}

/// One row of the schema's method list.
pub(crate) struct MethodEntry {
    pub(crate) method: MethodName,
    pub(crate) params: schemars::Schema,
    pub(crate) response: schemars::Schema,
}

fn entry<M: Method>(generator: &mut schemars::SchemaGenerator) -> MethodEntry {
    MethodEntry {
        method: M::METHOD,
        params: generator.subschema_for::<M::Params>(),
        response: generator.subschema_for::<M::Response>(),
    }
}

macro_rules! protocol_methods {
    ($(
        $(#[doc = $doc:literal])+
        $variant:ident = $name:literal, $scope:ident, $params:ty => $response:ty;
    )+) => {
        /// Every method, by name. `match`es over it are exhaustive: adding
        /// a method to the table makes every consumer say how it handles
        /// it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum MethodName {
            $( $(#[doc = $doc])+ $variant, )+
        }

        impl MethodName {
            /// Every method, in table order.
            pub const ALL: &'static [MethodName] = &[ $( MethodName::$variant, )+ ];

            /// The wire name.
            pub const fn as_str(self) -> &'static str {
                match self { $( MethodName::$variant => $name, )+ }
            }

            /// The least scope a token needs to call it.
            pub const fn scope(self) -> Scope {
                match self { $( MethodName::$variant => Scope::$scope, )+ }
            }

            /// What it does (its doc line).
            pub fn doc(self) -> &'static str {
                match self { $( MethodName::$variant => concat!($( $doc ),+).trim_ascii(), )+ }
            }

            /// The method a wire name names; `None` for an unknown one.
            pub fn from_name(name: &str) -> Option<MethodName> {
                match name {
                    $( $name => Some(MethodName::$variant), )+
                    _ => None,
                }
            }

            /// Decode `params` for this method (`null` is `{}`); a bad
            /// value is an invalid-params error naming the method and the
            /// field.
            pub fn parse_params(self, params: Value) -> Result<Request, RpcError> {
                match self {
                    $( MethodName::$variant => Ok(Request::$variant(decode(self, params)?)), )+
                }
            }
        }

        /// One decoded request: the method and its typed params.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Request {
            $( $(#[doc = $doc])+ $variant($params), )+
        }

        impl Request {
            /// The method.
            pub fn method(&self) -> MethodName {
                match self { $( Request::$variant(_) => MethodName::$variant, )+ }
            }

            /// The params as their JSON object.
            pub fn params_json(&self) -> Result<Value, serde_json::Error> {
                match self { $( Request::$variant(p) => serde_json::to_value(p), )+ }
            }
        }

        /// One marker type per method, implementing [`Method`].
        pub mod methods {
            use super::*;
            $(
                $(#[doc = $doc])+
                #[derive(Debug, Clone, Copy)]
                pub struct $variant;

                impl Method for $variant {
                    const NAME: &'static str = $name;
                    const SCOPE: Scope = Scope::$scope;
                    const METHOD: MethodName = MethodName::$variant;
                    type Params = $params;
                    type Response = $response;
                }
            )+
        }

        /// Every method's params and response schema, in table order.
        pub(crate) fn method_entries(
            generator: &mut schemars::SchemaGenerator,
        ) -> Vec<MethodEntry> {
            vec![ $( entry::<methods::$variant>(generator), )+ ]
        }
    };
}

impl Request {
    /// Decode a request from its wire method name and params: an unknown
    /// method is "method not found", a bad value "invalid params".
    pub fn parse(method: &str, params: Value) -> Result<Request, RpcError> {
        MethodName::from_name(method)
            .ok_or_else(|| unknown_method(method))?
            .parse_params(params)
    }

    /// The least scope the request needs.
    pub fn scope(&self) -> Scope {
        self.method().scope()
    }
}

/// The "method not found" error for `method`.
pub fn unknown_method(method: &str) -> RpcError {
    RpcError::new(METHOD_NOT_FOUND, format!("no method `{method}`"))
}

/// The least scope `method` needs; `None` for an unknown method.
pub fn required_scope(method: &str) -> Option<Scope> {
    MethodName::from_name(method).map(MethodName::scope)
}

impl std::fmt::Display for MethodName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

// The table. Scopes follow least privilege: reading never needs more than
// read-only; side effects on the caller's own sessions need runner;
// administering (approvals, cron jobs, tasks, sandboxes, reloads) needs
// operator. No method needs owner as such: the owner scope is a runner
// with the owner capability (`Scope::is_owner`), which the gateway uses to
// decide `senderIsOwner`.
protocol_methods! {
    /// The gateway's state: generation, sessions, calls in flight, runners, pending approvals, containment, and `degraded` with every configured hook that cannot run.
    Health = "health", ReadOnly, NoParams => HealthResponse;
    /// The running configuration, secrets redacted, and the last reload.
    ConfigGet = "config.get", ReadOnly, NoParams => ConfigGetResponse;
    /// The configuration schema at a dotted path.
    ConfigSchemaLookup = "config.schema.lookup", ReadOnly, ConfigSchemaLookupParams => ConfigSchemaLookupResponse;
    /// Every open session; with `includeClosed`, the stored ones kept as history too.
    SessionsList = "sessions.list", ReadOnly, SessionsListParams => SessionsListResponse;
    /// Open a session (or return the one with the same key and params).
    SessionsCreate = "sessions.create", Runner, SessionParams => SessionsCreateResponse;
    /// Close a session, cancelling its calls in flight.
    SessionsClose = "sessions.close", Runner, SessionRef => SessionsCloseResponse;
    /// Spawn a sub-agent from a session: its `sessions_spawn` call, through the gate.
    SessionsSpawn = "sessions.spawn", Runner, SessionsSpawnParams => CallResult;
    /// Send a message to another session and wait for its reply: `sessions_send`, through the gate.
    SessionsSend = "sessions.send", Runner, SessionsSendParams => CallResult;
    /// Read a session's messages and calls as another session may: `sessions_history`, through the gate.
    SessionsHistory = "sessions.history", Runner, SessionsHistoryParams => CallResult;
    /// A session's tool table as the model sees it (with `audit`: the policy report).
    ToolsList = "tools.list", ReadOnly, ToolsListParams => ToolsListResponse;
    /// Run one tool call through the gate (policy, hooks, approvals, sandbox, journal).
    ToolsInvoke = "tools.invoke", Runner, ToolsInvokeParams => CallResult;
    /// What became of a call, by the `toolCallId` its caller gave it (for a client that lost the reply).
    ToolsLookup = "tools.lookup", ReadOnly, ToolsLookupParams => ToolsLookupResponse;
    /// The approvals waiting for a decision.
    ApprovalsList = "approvals.list", ReadOnly, NoParams => ApprovalsListResponse;
    /// Decide a pending approval.
    ApprovalsResolve = "approvals.resolve", Operator, ApprovalsResolveParams => ApprovalsResolveResponse;
    /// The cron service's state.
    CronStatus = "cron.status", ReadOnly, NoParams => CronStatusResponse;
    /// The cron jobs, by next run.
    CronList = "cron.list", ReadOnly, CronListParams => CronJobsResponse;
    /// One cron job.
    CronGet = "cron.get", ReadOnly, CronJobRef => CronJobResponse;
    /// A cron job's runs, newest first.
    CronRuns = "cron.runs", ReadOnly, CronRunsParams => CronRunsResponse;
    /// Add a cron job (capped by the default agent's main session's tools).
    CronAdd = "cron.add", Operator, CronAddParams => CronChangeResponse;
    /// Change a cron job.
    CronUpdate = "cron.update", Operator, CronUpdateParams => CronChangeResponse;
    /// Remove a cron job (cancelling its run in flight).
    CronRemove = "cron.remove", Operator, CronJobRef => CronRemoveResponse;
    /// Run a cron job now (if due, or forced).
    CronRun = "cron.run", Operator, CronRunParams => CronRunResponse;
    /// Send a system event to one of an agent's sessions.
    CronWake = "cron.wake", Operator, CronWakeParams => OkResponse;
    /// The task ledger, filtered.
    TasksList = "tasks.list", ReadOnly, TasksListParams => TasksListResponse;
    /// One task.
    TasksGet = "tasks.get", ReadOnly, TaskRef => TaskResponse;
    /// Cancel a task (fires the token its running work holds).
    TasksCancel = "tasks.cancel", Operator, TaskRef => TaskResponse;
    /// An agent's skills, and the skill files that were refused.
    SkillsList = "skills.list", ReadOnly, AgentRef => SkillsListResponse;
    /// An agent's skills index as the model's prompt holds it.
    SkillsPrompt = "skills.prompt", ReadOnly, AgentRef => SkillsPromptResponse;
    /// Whether a session runs sandboxed, why, and what the sandbox policy removed.
    SandboxExplain = "sandbox.explain", ReadOnly, SessionRef => SandboxExplainResponse;
    /// The sandboxes Talon owns on every backend.
    SandboxList = "sandbox.list", ReadOnly, NoParams => SandboxListResponse;
    /// Remove a sandbox Talon owns; the next sandboxed call recreates it.
    SandboxRecreate = "sandbox.recreate", Operator, SandboxRecreateParams => SandboxRecreateResponse;
    /// The security audit of the running configuration and state dir (`deep`: also the skills' code-safety scan).
    SecurityAudit = "security.audit", ReadOnly, SecurityAuditParams => SecurityAuditResponse;
    /// Every MCP server the runtime has started, and its state.
    McpStatus = "mcp.status", ReadOnly, NoParams => McpStatusResponse;
    /// Serve cron's agent runs on this connection (`runner.run` notifications).
    RunnerSubscribe = "runner.subscribe", Runner, NoParams => RunnerSubscribeResponse;
    /// Report the end of a run this connection was handed, while it is in flight (a run that timed out, was cancelled or already reported is refused with `data.errorCode`).
    RunnerComplete = "runner.complete", Runner, RunnerCompleteParams => RunnerCompleteResponse;
    /// Reload the configuration (the last good one stays on failure).
    GatewayReload = "gateway.reload", Operator, NoParams => ReloadReport;
}

#[cfg(test)]
#[path = "method_tests.rs"]
mod tests;
