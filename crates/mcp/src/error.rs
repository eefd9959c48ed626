//! `McpError`: what can go wrong configuring or starting MCP servers.

/// An MCP configuration or start-up failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// A config value is wrong.
    #[error("{key}: {message}")]
    Config {
        /// The dotted config path (e.g. `mcp.servers.github.timeoutMs`).
        key: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A server could not be started, initialised or listed.
    #[error("mcp server `{server}`: {message}")]
    Server {
        /// The configured server name.
        server: String,
        /// What failed.
        message: String,
    },
}

/// What kind of failure kept a server from starting ([`StartError`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StartErrorKind {
    /// The server is disabled (`enabled: false`).
    Disabled,
    /// A configured value cannot be used: an `env` or `headers` reference,
    /// a header name or value, the URL, an env key the exec env policy
    /// refuses.
    Config,
    /// The egress guard refused the server's URL.
    Egress,
    /// The program or the HTTP client could not be started.
    Start,
    /// The MCP handshake failed.
    Handshake,
    /// The first `tools/list` (or a re-list) failed.
    List,
    /// It did not start within its start-up timeout.
    Timeout,
}

/// Why a server did not start (or could not re-list its tools). The
/// message is what the server's `lastError` shows and what an
/// `mcp.server_unavailable` tool error quotes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct StartError {
    kind: StartErrorKind,
    message: String,
}

impl StartError {
    /// An error of `kind` saying `message` (what failed, with the config
    /// key where one is to blame).
    pub fn new(kind: StartErrorKind, message: impl Into<String>) -> Self {
        StartError {
            kind,
            message: message.into(),
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> StartErrorKind {
        self.kind
    }
}

/// Serialised as its message (what `lastError` shows).
impl serde::Serialize for StartError {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}
