//! Talon's configuration file loader (not yet implemented: see issue 2's
//! closing note). The policy sections' types live in
//! `talon_tool_policy::config`.
