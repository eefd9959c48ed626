//! The Talon gateway's wire protocol, declared once.
//!
//! Every method of the WebSocket API is one row of one table
//! ([`MethodName`]): its wire name, the least [`Scope`] a token needs,
//! its params type and its response type. From that row come the
//! [`Request`] enum the gateway dispatches on (one exhaustive `match`),
//! the marker type in [`methods`] a Rust client names (`M::Params`,
//! `M::Response`), the scope check, and the JSON Schema and Markdown
//! reference ([`schema_json`], [`markdown`], checked in under `docs/`).
//! The JSON-RPC frames ([`frame`]), the HTTP bodies ([`http`]) and the
//! notifications ([`Notification`]) are here too, with the one parser of
//! a bearer token ([`bearer_token`]) and of a request's session
//! ([`session_key`]), so the gateway and its
//! clients (the `talon` CLI among them) share one definition.
//!
//! ```
//! use talon_gateway_protocol::{Method, MethodName, Request, Scope, methods};
//! use serde_json::json;
//!
//! let req = Request::parse("tools.list", json!({"sessionKey": "main"})).unwrap();
//! assert_eq!(req.method(), MethodName::ToolsList);
//! assert_eq!(req.scope(), Scope::ReadOnly);
//! assert_eq!(methods::ToolsInvoke::SCOPE, Scope::Runner);
//!
//! let err = Request::parse("tools.delete", json!({})).unwrap_err();
//! assert_eq!(err.message, "no method `tools.delete`");
//! ```
//!
//! The crate depends only on `serde`, `serde_json` and `schemars`: it
//! holds types, never behaviour. Records another crate owns (a task, a
//! cron job, a policy audit) are carried as JSON values and described in
//! the field's documentation.
#![deny(missing_docs)]

pub use crate::auth::{
    SESSION_HEADER, SESSION_QUERY_PARAM, authorization_header, bearer_token, session_key,
};
pub use crate::frame::{ERROR_CODES, RawRequest, ResponseFrame, RpcError};
pub use crate::http::{
    HttpError, HttpErrorDetail, HttpInvokeFailure, HttpInvokeOk, HttpInvokeRequest,
};
pub use crate::method::{Method, MethodName, Request, methods, required_scope, unknown_method};
pub use crate::notification::{Audience, Notification};
pub use crate::schema::{markdown, schema_file, schema_json};
pub use crate::scope::Scope;
pub use crate::types::approvals::{
    ApprovalsListResponse, ApprovalsResolveParams, ApprovalsResolveResponse,
};
pub use crate::types::common::{AgentRef, NoParams, OkResponse, SessionRef};
pub use crate::types::config::{
    ConfigGetResponse, ConfigSchemaLookupParams, ConfigSchemaLookupResponse,
};
pub use crate::types::cron::{
    CronAddParams, CronChangeResponse, CronJobRef, CronJobResponse, CronJobsResponse,
    CronListParams, CronRemoveResponse, CronRunMode, CronRunParams, CronRunResponse,
    CronRunsParams, CronRunsResponse, CronStatusResponse, CronUpdateParams, CronWakeParams,
};
pub use crate::types::gateway::{
    Containment, FleetLease, FleetMember, HealthResponse, HookProblem, ReloadReport, StateStatus,
};
pub use crate::types::mcp::McpStatusResponse;
pub use crate::types::runner::{
    RunnerCompleteParams, RunnerCompleteResponse, RunnerStatus, RunnerSubscribeResponse,
};
pub use crate::types::sandbox::{
    SandboxBackendError, SandboxExplainResponse, SandboxListResponse, SandboxRecreateParams,
    SandboxRecreateResponse, SandboxRemoval,
};
pub use crate::types::security::{
    AuditFinding, AuditSeverity, AuditSummary, SecurityAuditParams, SecurityAuditResponse,
};
pub use crate::types::sessions::{
    SessionInfo, SessionParams, SessionTrigger, SessionsCloseResponse, SessionsCreateResponse,
    SessionsHistoryParams, SessionsListParams, SessionsListResponse, SessionsSendParams,
    SessionsSpawnParams,
};
pub use crate::types::skills::{RejectedSkill, SkillsListResponse, SkillsPromptResponse};
pub use crate::types::tasks::{TaskRef, TaskResponse, TasksListParams, TasksListResponse};
pub use crate::types::tools::{
    CallResult, RecordedCall, RecordedStatus, ToolDescription, ToolsInvokeParams, ToolsListParams,
    ToolsListResponse, ToolsLookupParams, ToolsLookupResponse,
};

/// JSON-RPC 2.0 frames and error codes.
pub mod frame;
/// HTTP request and response bodies.
pub mod http;

mod auth;
mod method;
mod notification;
mod schema;
mod scope;
mod types;
