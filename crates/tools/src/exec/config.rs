//! `tools.exec`, typed by `talon-config` (plain data, so the config crate
//! does not depend on this one) and re-exported here.

pub(crate) use talon_config::sections::exec::YIELD_MS_RANGE;
pub use talon_config::sections::exec::{
    AgentExecConfig, DEFAULT_BACKGROUND_MS, DEFAULT_CLEANUP_MS, DEFAULT_MAX_OUTPUT_BYTES,
    DEFAULT_MAX_TIMEOUT_SEC, DEFAULT_TIMEOUT_SEC, ExecConfig, ExecConfigError,
};

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
