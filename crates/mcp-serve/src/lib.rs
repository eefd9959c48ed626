//! Serves one Talon tool table to any MCP client over streamable HTTP.
//!
//! (Skeleton: filled in by the gateway issue.)
