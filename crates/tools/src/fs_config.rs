//! `tools.fs`, typed by `talon-config` and re-exported here.

pub use talon_config::sections::fs::FsToolsConfig;
