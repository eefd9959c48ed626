//! `ToolError`: why a tool call failed, as a kind, a stable code, a
//! message, the parameter at fault and details.
//!
//! The [`ToolErrorCode`] is what callers match on (and what the wire
//! carries); the [`ToolErrorKind`] follows from the code and decides how
//! every surface reports the failure. Nothing above this type looks at the
//! message text.

use std::fmt;

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

/// The class of a tool failure: what the caller can do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolErrorKind {
    /// The model's arguments were wrong; fixing the call can help.
    Input,
    /// The caller is not allowed to do this.
    Unauthorized,
    /// The call was aborted (the run was stopped or cancelled).
    Aborted,
    /// The call ran past a deadline.
    TimedOut,
    /// Something the tool needs (an engine, a server, a backend) cannot be
    /// reached or is shutting down; the same call may work later.
    Unavailable,
    /// The tool ran and failed.
    Execution,
}

impl ToolErrorKind {
    /// Every kind.
    pub const ALL: [ToolErrorKind; 6] = [
        ToolErrorKind::Input,
        ToolErrorKind::Unauthorized,
        ToolErrorKind::Aborted,
        ToolErrorKind::TimedOut,
        ToolErrorKind::Unavailable,
        ToolErrorKind::Execution,
    ];

    /// The kind as written on the wire (`errorClass`) and in diagnostics:
    /// `input`, `unauthorized`, `aborted`, `timed_out`, `unavailable`,
    /// `execution`.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolErrorKind::Input => "input",
            ToolErrorKind::Unauthorized => "unauthorized",
            ToolErrorKind::Aborted => "aborted",
            ToolErrorKind::TimedOut => "timed_out",
            ToolErrorKind::Unavailable => "unavailable",
            ToolErrorKind::Execution => "execution",
        }
    }

    /// The HTTP-like status OpenClaw attaches: 400 input, 403
    /// unauthorized, 499 aborted, 504 timed out, 503 unavailable, 500
    /// execution.
    pub fn status(self) -> u16 {
        match self {
            ToolErrorKind::Input => 400,
            ToolErrorKind::Unauthorized => 403,
            ToolErrorKind::Aborted => 499,
            ToolErrorKind::TimedOut => 504,
            ToolErrorKind::Unavailable => 503,
            ToolErrorKind::Execution => 500,
        }
    }
}

impl fmt::Display for ToolErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ToolErrorKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Declares the code list once: variant, wire string, kind, doc.
macro_rules! tool_error_codes {
    ($( $(#[$doc:meta])* $variant:ident = $wire:literal => $kind:ident, )*) => {
        /// The stable machine code of a [`ToolError`]: what tests, hosts
        /// and clients match on. Written `<area>.<what>` in snake case;
        /// each code has one [`ToolErrorKind`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ToolErrorCode {
            $( $(#[$doc])* $variant, )*
        }

        impl ToolErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [ToolErrorCode] = &[ $( ToolErrorCode::$variant, )* ];

            /// The code as written on the wire (`fs.not_found`, ...).
            pub fn as_str(self) -> &'static str {
                match self {
                    $( ToolErrorCode::$variant => $wire, )*
                }
            }

            /// The kind every error with this code has.
            pub fn kind(self) -> ToolErrorKind {
                match self {
                    $( ToolErrorCode::$variant => ToolErrorKind::$kind, )*
                }
            }
        }
    };
}

tool_error_codes! {
    /// The arguments are wrong (the default input code).
    InputInvalid = "input.invalid" => Input,
    /// The arguments could not be decoded (not an object, broken JSON).
    InputMalformed = "input.malformed" => Input,
    /// The arguments carry a key the tool does not take (or two spellings
    /// of one parameter that disagree); `param` names the key.
    InputUnknownParam = "input.unknown_param" => Input,
    /// No tool of that name is in the run.
    ToolUnknown = "tool.unknown" => Input,
    /// The caller may not do this (the default unauthorized code).
    Unauthorized = "auth.unauthorized" => Unauthorized,
    /// The call was aborted by its abort signal.
    Aborted = "call.aborted" => Aborted,
    /// The call ran past its deadline (the default timeout code).
    TimedOut = "call.timed_out" => TimedOut,
    /// Something the call needs is unavailable (the default code).
    Unavailable = "call.unavailable" => Unavailable,
    /// The tool ran and failed (the default execution code).
    Failed = "tool.failed" => Execution,

    /// The path is not under any mount or the workspace root.
    FsOutsideMounts = "fs.outside_mounts" => Input,
    /// Resolving the path would leave the mount root.
    FsEscape = "fs.escape" => Input,
    /// A change in a read-only mount.
    FsReadOnly = "fs.read_only" => Input,
    /// Nothing exists at the path.
    FsNotFound = "fs.not_found" => Input,
    /// The path is not a regular file.
    FsNotAFile = "fs.not_a_file" => Input,
    /// A path component is not a directory.
    FsNotADirectory = "fs.not_a_directory" => Input,
    /// The target exists and the operation does not overwrite.
    FsAlreadyExists = "fs.already_exists" => Input,
    /// The path is malformed.
    FsInvalidPath = "fs.invalid_path" => Input,
    /// The content exceeds a size limit.
    FsTooLarge = "fs.too_large" => Input,
    /// The path is longer than `PATH_MAX`, has a name longer than
    /// `NAME_MAX`, or is (or would create) deeper than the depth cap.
    FsPathTooLong = "fs.path_too_long" => Input,
    /// The operation would remove, rename or replace a mount root.
    FsMountRoot = "fs.mount_root" => Input,
    /// An edit callback refused the content.
    FsRejected = "fs.rejected" => Input,
    /// The backend behind the file bridge cannot be reached.
    FsUnavailable = "fs.unavailable" => Unavailable,
    /// Any other file I/O failure.
    FsIo = "fs.io" => Execution,

    /// The sandbox engine (Docker daemon, remote host) cannot be reached.
    SandboxEngineUnavailable = "sandbox.engine_unavailable" => Unavailable,
    /// The sandbox image does not exist.
    SandboxImageMissing = "sandbox.image_missing" => Unavailable,
    /// The sandbox configuration (or a value the call gave it) is invalid.
    SandboxConfig = "sandbox.config" => Input,
    /// No sandbox backend is registered under the configured id.
    SandboxBackendMissing = "sandbox.backend_missing" => Unavailable,
    /// Launching or controlling a process in the sandbox failed.
    SandboxExec = "sandbox.exec" => Execution,
    /// The sandbox is gone or stopped.
    SandboxGone = "sandbox.gone" => Unavailable,
    /// A sandbox operation ran past its deadline.
    SandboxTimeout = "sandbox.timeout" => TimedOut,
    /// Any other sandbox I/O failure.
    SandboxIo = "sandbox.io" => Execution,

    /// A sandboxed session reached an exec tool that runs on the host.
    ExecHostRefused = "exec.host_refused" => Unauthorized,
    /// An environment override was refused by the exec-env policy.
    ExecEnvRejected = "exec.env_rejected" => Input,
    /// The exec registry is shut down (the gateway is stopping).
    ExecRegistryClosed = "exec.registry_closed" => Unavailable,
    /// The session already runs as many commands as it may.
    ExecSessionLimit = "exec.session_limit" => Unavailable,

    /// An approval could not be bound to what the command runs (its
    /// working directory does not resolve, or a file it runs is named only
    /// at run time); nothing was asked or run.
    ApprovalPinFailed = "approval.pin_failed" => Unauthorized,
    /// The command's canonical working directory changed between approval
    /// and run (e.g. a parent symlink was rebound); nothing was run.
    ApprovalCwdChanged = "approval.cwd_changed" => Unauthorized,
    /// A file the approved command runs (script, `./x`, sourced file)
    /// changed between approval and run; nothing was run.
    ApprovalOperandChanged = "approval.operand_changed" => Unauthorized,

    /// A cron quota (`cron.quotas.*`: jobs per creator or per agent, the
    /// minimum interval) refused the job; the message names the limit and
    /// its config key.
    CronQuota = "cron.quota" => Input,

    /// A session tool named a session the caller may not see (or that does
    /// not exist: the two answer alike).
    SessionNotVisible = "session.not_visible" => Unauthorized,
    /// `sessions_send` to another agent's session without
    /// `tools.agentToAgent` allowing both agents.
    SessionAgentToAgentDenied = "session.agent_to_agent_denied" => Unauthorized,
    /// `sessions_spawn` past `agents.defaults.subagents.maxSpawnDepth`.
    SubagentDepthExceeded = "subagent.depth_exceeded" => Unauthorized,
    /// `sessions_spawn` past `maxChildrenPerAgent` (active children of the
    /// session) or `maxConcurrent` (sub-agent runs in the gateway).
    SubagentLimit = "subagent.limit" => Unavailable,
    /// `sessions_spawn` of an agent `subagents.allowAgents` does not list.
    SubagentAgentNotAllowed = "subagent.agent_not_allowed" => Unauthorized,
    /// No runner took the turn (none subscribed, none registered).
    RunnerUnavailable = "runner.unavailable" => Unavailable,
    /// The turn handed to a runner did not end within its budget.
    RunnerTimedOut = "runner.timed_out" => TimedOut,
    /// The runner reported that the turn failed, or went away during it.
    RunnerFailed = "runner.failed" => Execution,

    /// `memory_get` was given a path that is not a memory file
    /// (`MEMORY.md`, `memory/**/*.md`, a configured extra path).
    MemoryPathRefused = "memory.path_refused" => Input,
    /// A memory file cannot be read as text (invalid UTF-8, too large).
    MemoryFileUnreadable = "memory.file_unreadable" => Input,
    /// The memory index could not be opened, read or updated.
    MemoryIndexFailed = "memory.index_failed" => Execution,
    /// A media file (PDF, image, audio) is malformed, encrypted or not
    /// of the expected type.
    MediaInvalid = "media.invalid" => Input,
    /// A media input or output is over a size limit (bytes, pages, pixels).
    MediaTooLarge = "media.too_large" => Input,
    /// The local engine a media tool runs (poppler, espeak-ng) is missing.
    MediaEngineMissing = "media.engine_missing" => Unavailable,
    /// The media engine ran and failed.
    MediaEngineFailed = "media.engine_failed" => Execution,
    /// The media engine ran past its time limit (it was killed).
    MediaTimeout = "media.timeout" => TimedOut,
    /// No provider is configured for this media tool; the message names
    /// the config key to set.
    MediaNoProvider = "media.no_provider" => Unavailable,
    /// A memory-flush run (`trigger: memory`) may only append: a `write`
    /// without `append: true` is refused.
    WriteAppendOnly = "write.append_only" => Unauthorized,

    /// The `message` action is not in OpenClaw's closed vocabulary
    /// (`CHANNEL_MESSAGE_ACTION_NAMES`).
    MessageUnknownAction = "message.unknown_action" => Input,
    /// The channel does not offer this action (its declared capabilities).
    MessageUnsupportedAction = "message.unsupported_action" => Input,
    /// No channel of that id is configured (`channels.<id>`).
    MessageUnknownChannel = "message.unknown_channel" => Input,
    /// The message is over the channel's size limit.
    MessageTooLarge = "message.too_large" => Input,
    /// The action needs a sender who is the owner, and this caller is
    /// known not to be.
    MessageOwnerRequired = "message.owner_required" => Unauthorized,
    /// The channel's configuration cannot be used (bad URL, missing
    /// secret, unsupported setting); the message names the key.
    MessageChannelConfig = "message.channel_config" => Unavailable,
    /// The channel cannot be reached (connection refused, reset, closed).
    MessageChannelUnavailable = "message.channel_unavailable" => Unavailable,
    /// The channel did not answer within its timeout.
    MessageTimeout = "message.timeout" => TimedOut,
    /// The channel answered with a refusal (an HTTP error status, an IRC
    /// error numeric).
    MessageRejected = "message.rejected" => Execution,
    /// An earlier send with the same idempotency key was started and not
    /// known to have finished (the process died mid-send): it is not
    /// repeated, since it may have gone out.
    MessageInterrupted = "message.interrupted" => Execution,
    /// The send ledger (idempotency keys) cannot be read or written, so
    /// nothing was sent.
    MessageLedgerFailed = "message.ledger_failed" => Execution,

    /// The SSRF guard refused the URL or an address it resolved to.
    WebSsrfBlocked = "web.ssrf_blocked" => Unauthorized,
    /// The URL or an address it resolved to is a cloud metadata endpoint,
    /// which no allowlist or private-network opt-in opens.
    WebMetadataBlocked = "web.metadata_blocked" => Unauthorized,
    /// The request could not be sent or the connection failed.
    WebRequestFailed = "web.request_failed" => Execution,
    /// The request ran past its deadline.
    WebTimeout = "web.timeout" => TimedOut,
    /// The server answered with a 4xx or 5xx status.
    WebHttpStatus = "web.http_status" => Execution,
    /// Too many redirects, or a redirect to an invalid location.
    WebRedirect = "web.redirect" => Execution,
    /// The content type cannot be read.
    WebUnsupportedContent = "web.unsupported_content" => Execution,
    /// The search provider has no API key configured.
    WebMissingApiKey = "web.missing_api_key" => Unavailable,
    /// The search provider failed or answered something unreadable.
    WebProviderFailed = "web.provider_failed" => Execution,

    /// Chromium is missing, did not start, or its DevTools connection
    /// closed (crashed or stopped).
    BrowserUnavailable = "browser.unavailable" => Unavailable,
    /// A browser action (start, navigation, snapshot, ...) ran past its
    /// time limit.
    BrowserTimeout = "browser.timeout" => TimedOut,
    /// The browser answered an action with an error, or a page failed to
    /// load.
    BrowserFailed = "browser.failed" => Execution,
    /// The tab named by `targetId` is not open (or no tab is open).
    BrowserNoTab = "browser.no_tab" => Input,
    /// The element ref is not in the tab's latest snapshot.
    BrowserUnknownRef = "browser.unknown_ref" => Input,
    /// A sandboxed run asked for the browser where no sandboxed browser
    /// can run (a backend other than `local`, or `sandbox.browser` not
    /// enabled), or asked a sandboxed session for the host browser;
    /// nothing was started, and the host browser is never used instead.
    BrowserSandboxUnsupported = "browser.sandbox_unsupported" => Unauthorized,
    /// The sandbox has no way out for the browser (`docker.network:
    /// "none"`): the sandboxed Chromium reaches the network only through
    /// the sandbox's egress proxy (`network: "bridge"`); nothing was
    /// started.
    BrowserSandboxNoEgress = "browser.sandbox_no_egress" => Unauthorized,

    /// The MCP server cannot be started or reached.
    McpServerUnavailable = "mcp.server_unavailable" => Unavailable,
    /// The connection to the MCP server was lost during the call.
    McpConnectionLost = "mcp.connection_lost" => Unavailable,
    /// The MCP server rejected the call with a protocol error.
    McpCallRejected = "mcp.call_rejected" => Execution,
    /// The MCP call failed for another reason.
    McpCallFailed = "mcp.call_failed" => Execution,
    /// The MCP server did not answer within its timeout.
    McpTimeout = "mcp.timeout" => TimedOut,
    /// The MCP tool ran and reported `isError`.
    McpToolError = "mcp.tool_error" => Execution,
}

impl ToolErrorCode {
    /// The default code of a kind (what the kind's plain constructor uses).
    pub fn default_for(kind: ToolErrorKind) -> ToolErrorCode {
        match kind {
            ToolErrorKind::Input => ToolErrorCode::InputInvalid,
            ToolErrorKind::Unauthorized => ToolErrorCode::Unauthorized,
            ToolErrorKind::Aborted => ToolErrorCode::Aborted,
            ToolErrorKind::TimedOut => ToolErrorCode::TimedOut,
            ToolErrorKind::Unavailable => ToolErrorCode::Unavailable,
            ToolErrorKind::Execution => ToolErrorCode::Failed,
        }
    }
}

impl fmt::Display for ToolErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ToolErrorCode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Why a tool call failed.
///
/// An input error names the parameter so the model can fix its call; the
/// [`code`](ToolError::code) says exactly what went wrong and decides the
/// [`kind`](ToolError::kind); `details` carry structured facts for the
/// host (a path, an exit code) that the message only describes.
///
/// ```
/// use talon_tool_catalog::{ToolError, ToolErrorCode, ToolErrorKind};
///
/// let e = ToolError::input("path", "path required");
/// assert_eq!(e.kind(), ToolErrorKind::Input);
/// assert_eq!(e.param(), Some("path"));
///
/// let e = ToolError::execution("the daemon is gone")
///     .with_code(ToolErrorCode::SandboxEngineUnavailable);
/// assert_eq!(e.kind(), ToolErrorKind::Unavailable);
/// assert_eq!(e.code().as_str(), "sandbox.engine_unavailable");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    code: ToolErrorCode,
    message: String,
    param: Option<String>,
    details: Option<Box<Map<String, Value>>>,
}

impl ToolError {
    /// An error with this code (its kind follows from the code).
    pub fn new(code: ToolErrorCode, message: impl Into<String>) -> Self {
        ToolError {
            code,
            message: message.into(),
            param: None,
            details: None,
        }
    }

    /// An input error about one parameter.
    pub fn input(param: impl Into<String>, message: impl Into<String>) -> Self {
        ToolError::new(ToolErrorCode::InputInvalid, message).with_param(param)
    }

    /// An input error not tied to one parameter.
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        ToolError::new(ToolErrorCode::InputInvalid, message)
    }

    /// An execution failure.
    pub fn execution(message: impl Into<String>) -> Self {
        ToolError::new(ToolErrorCode::Failed, message)
    }

    /// An authorization failure.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        ToolError::new(ToolErrorCode::Unauthorized, message)
    }

    /// The call was aborted; `reason` is what the abort gave (shown as
    /// `aborted: <reason>`).
    pub fn aborted(reason: impl Into<String>) -> Self {
        ToolError::new(ToolErrorCode::Aborted, reason)
    }

    /// The call ran past a deadline.
    pub fn timed_out(message: impl Into<String>) -> Self {
        ToolError::new(ToolErrorCode::TimedOut, message)
    }

    /// Something the call needs is unavailable.
    pub fn unavailable(message: impl Into<String>) -> Self {
        ToolError::new(ToolErrorCode::Unavailable, message)
    }

    /// Builder: set the code (and with it the kind).
    #[must_use]
    pub fn with_code(mut self, code: ToolErrorCode) -> Self {
        self.code = code;
        self
    }

    /// Builder: name the parameter at fault.
    #[must_use]
    pub fn with_param(mut self, param: impl Into<String>) -> Self {
        self.param = Some(param.into());
        self
    }

    /// Builder: set the structured details.
    #[must_use]
    pub fn with_details(mut self, details: Map<String, Value>) -> Self {
        self.details = (!details.is_empty()).then(|| Box::new(details));
        self
    }

    /// Builder: add one detail.
    #[must_use]
    pub fn with_detail(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.details
            .get_or_insert_with(Box::default)
            .insert(key.into(), value.into());
        self
    }

    /// Builder: put `prefix: ` before the message (for a wrapper that
    /// says which part of a larger call failed), keeping code, parameter
    /// and details.
    #[must_use]
    pub fn context(mut self, prefix: impl fmt::Display) -> Self {
        self.message = format!("{prefix}: {}", self.message);
        self
    }

    /// The class of the failure (decided by the code).
    pub fn kind(&self) -> ToolErrorKind {
        self.code.kind()
    }

    /// The stable machine code.
    pub fn code(&self) -> ToolErrorCode {
        self.code
    }

    /// The message (for an abort: the reason).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The parameter at fault, if any.
    pub fn param(&self) -> Option<&str> {
        self.param.as_deref()
    }

    /// The structured details, if any.
    pub fn details(&self) -> Option<&Map<String, Value>> {
        self.details.as_deref()
    }

    /// The HTTP-like status OpenClaw attaches (see [`ToolErrorKind::status`]).
    pub fn status(&self) -> u16 {
        self.kind().status()
    }

    /// Whether the model's input was at fault.
    pub fn is_input(&self) -> bool {
        self.kind() == ToolErrorKind::Input
    }

    /// Whether the call was aborted.
    pub fn is_aborted(&self) -> bool {
        self.kind() == ToolErrorKind::Aborted
    }

    /// Whether the call ran past a deadline.
    pub fn is_timeout(&self) -> bool {
        self.kind() == ToolErrorKind::TimedOut
    }

    /// Whether the caller was not allowed.
    pub fn is_unauthorized(&self) -> bool {
        self.kind() == ToolErrorKind::Unauthorized
    }

    /// Whether something the call needs was unavailable.
    pub fn is_unavailable(&self) -> bool {
        self.kind() == ToolErrorKind::Unavailable
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.kind() == ToolErrorKind::Aborted {
            write!(f, "aborted: {}", self.message)
        } else {
            f.write_str(&self.message)
        }
    }
}

impl std::error::Error for ToolError {}

/// `{kind, code, message, param?, details?}`.
impl Serialize for ToolError {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let len = 3 + usize::from(self.param.is_some()) + usize::from(self.details.is_some());
        let mut st = s.serialize_struct("ToolError", len)?;
        st.serialize_field("kind", &self.kind())?;
        st.serialize_field("code", &self.code)?;
        st.serialize_field("message", &self.message)?;
        if let Some(p) = &self.param {
            st.serialize_field("param", p)?;
        }
        if let Some(d) = &self.details {
            st.serialize_field("details", d)?;
        }
        st.end()
    }
}

#[cfg(test)]
#[path = "error_tests.rs"]
mod tests;
