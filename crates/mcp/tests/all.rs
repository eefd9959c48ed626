//! Integration tests against real MCP servers: the rmcp fixture server
//! (stdio and streamable HTTP) and the published `mcp-server-time`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;
mod suite {
    mod bounds;
    pub(crate) mod calls;
    mod egress;
    mod lifecycle;
    mod listing;
    pub(crate) mod peers;
    mod runtime;
}
