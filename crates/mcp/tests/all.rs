//! Integration tests against real MCP servers: the rmcp fixture server
//! (stdio and streamable HTTP) and the published `mcp-server-time`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(
    clippy::disallowed_methods,
    reason = "test and tooling code starts its probes, engines and binaries directly; Talon's own children go through talon_proc_tree::ChildCommand"
)]

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
