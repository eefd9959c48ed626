//! The `sandbox.browser` settings the sandboxed browser honours (parsed
//! and checked by `talon-config`, which refuses at load the keys Talon
//! cannot honour).

use std::time::Duration;

/// How a sandboxed session's browser runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxBrowserConfig {
    /// `sandbox.browser.enabled` (default false): without it a sandboxed
    /// session gets no browser at all.
    pub enabled: bool,
    /// `sandbox.browser.autoStart` (default true): start the browser on
    /// first use; when false only the `start` action starts it.
    pub auto_start: bool,
    /// `sandbox.browser.autoStartTimeoutMs`: from launch to a usable
    /// DevTools connection (default: the browser's start timeout).
    pub start_timeout: Option<Duration>,
}

impl Default for SandboxBrowserConfig {
    fn default() -> Self {
        SandboxBrowserConfig {
            enabled: false,
            auto_start: true,
            start_timeout: None,
        }
    }
}
