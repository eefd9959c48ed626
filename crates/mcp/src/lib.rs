//! Per-agent MCP servers, materialised into each run's tool table.
//!
//! (Skeleton: filled in by the MCP issue.)
