//! `ServeConfig`: the limits and knobs of the MCP endpoint.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// How the MCP endpoint is bounded. [`ServeConfig::default`] suits a
/// loopback gateway.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Largest accepted POST body, in bytes (HTTP 413 beyond it).
    pub max_body_bytes: usize,
    /// Most MCP sessions alive at once; an `initialize` beyond it is
    /// answered HTTP 503 with `Retry-After`.
    pub max_sessions: usize,
    /// An MCP session with no traffic for this long is closed (its in-flight
    /// calls are cancelled).
    pub session_idle: Duration,
    /// An MCP session that does not finish its `initialize` handshake within
    /// this long is closed.
    pub init_timeout: Duration,
    /// Interval of SSE keep-alive comments. It also bounds how long a client
    /// disconnect can go unnoticed while a call runs.
    pub sse_keep_alive: Duration,
    /// Tools per `tools/list` page (at least 1).
    pub page_size: usize,
    /// Accepted `Host` header values (`host` or `host:port`); empty accepts
    /// any (DNS-rebinding protection off). Defaults to the loopback names.
    pub allowed_hosts: Vec<String>,
    /// Browser origins (`scheme://host:port`, `:*` for any port) allowed to
    /// call. A request carrying any other `Origin` header is refused (HTTP
    /// 403); requests without one (every non-browser MCP client) pass. The
    /// default, empty, refuses every browser origin.
    pub allowed_origins: Vec<String>,
    /// Cancelling this token closes every MCP session and their streams
    /// (the gateway's shutdown).
    pub shutdown: CancellationToken,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            max_body_bytes: 4 * 1024 * 1024,
            max_sessions: 256,
            session_idle: Duration::from_secs(300),
            init_timeout: Duration::from_secs(30),
            sse_keep_alive: Duration::from_secs(5),
            page_size: 100,
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            allowed_origins: Vec::new(),
            shutdown: CancellationToken::new(),
        }
    }
}

impl ServeConfig {
    /// Builder: the largest accepted POST body.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Builder: the session cap.
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions;
        self
    }

    /// Builder: the idle expiry of sessions.
    pub fn session_idle(mut self, idle: Duration) -> Self {
        self.session_idle = idle;
        self
    }

    /// Builder: the SSE keep-alive interval.
    pub fn sse_keep_alive(mut self, interval: Duration) -> Self {
        self.sse_keep_alive = interval;
        self
    }

    /// Builder: tools per `tools/list` page.
    pub fn page_size(mut self, size: usize) -> Self {
        self.page_size = size;
        self
    }

    /// Builder: the accepted `Host` values (empty: any).
    pub fn allowed_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts = hosts.into_iter().map(Into::into).collect();
        self
    }

    /// Builder: the browser origins allowed to call.
    pub fn allowed_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_origins = origins.into_iter().map(Into::into).collect();
        self
    }

    /// Builder: the shutdown token.
    pub fn shutdown(mut self, token: CancellationToken) -> Self {
        self.shutdown = token;
        self
    }
}
