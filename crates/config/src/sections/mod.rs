//! The typed sections whose readers live in behaviour crates (the MCP
//! client, the exec and web tools, the cron scheduler, the skills loader). They are plain data
//! here, with the checks that need no I/O, so that `talon-config` does not
//! depend on `rmcp`, `reqwest` or `rusqlite`; each consumer crate
//! re-exports its section under its old path.

pub mod browser;
pub mod cron;
pub mod exec;
pub mod fs;
pub mod mcp;
pub mod media;
pub mod memory;
pub mod plugins;
pub mod sandbox_browser;
pub mod sessions;
pub mod skills;
pub mod state;
pub mod subagents;
pub mod web;
