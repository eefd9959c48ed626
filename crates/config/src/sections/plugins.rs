//! The typed `plugins` section: OpenClaw's plugin switches, enforced by the
//! policy pipeline's `plugins` layer on the tools of plugin tool families
//! (a tool's plugin id, `ToolFamily::Plugin { plugin_id }`; MCP tools are
//! `bundle-mcp`). The types live in `talon-tool-policy`, which reads them;
//! OpenClaw's inert keys (`load`, `installs`, an entry's `config` and
//! `hooks`) are dropped with a notice before validation, `slots` set to
//! `"none"` is refused, and any other key is an error naming it.

pub use talon_tool_policy::config::{PluginEntryConfig, PluginsConfig};
