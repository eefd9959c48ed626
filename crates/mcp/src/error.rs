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
