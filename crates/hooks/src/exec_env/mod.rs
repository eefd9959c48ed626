//! The exec environment key policy.
//!
//! Three sources feed an exec child's environment, and each has its own
//! filter built on OpenClaw's host env security lists (embedded from
//! `data/host-env-security-policy.json`):
//!
//! - the host environment the child inherits: [`filter_inherited_env`];
//! - the call's own `env` parameter: [`sanitize_env_overrides`], which
//!   reports what it rejected;
//! - variables contributed by `resolve_exec_env` plugins: [`ExecEnvHooks`]
//!   runs the handlers and [`filter_plugin_env`] filters their merged map.
//!
//! [`merge_exec_env`] layers the plugin environment over the call's own
//! overrides. Keys are compared trimmed and uppercased; env values are never
//! logged. If the embedded policy cannot be parsed every key is blocked.

mod classify;
mod hook;
mod inherited;
mod plugin;
mod policy;
mod sanitize;

pub use classify::{EnvKeyVerdict, classify_override_key, is_valid_env_key};
pub use hook::{
    DEFAULT_RESOLVE_EXEC_ENV_TIMEOUT, ExecEnvEvent, ExecEnvHooks, ExecHost, ResolveExecEnvHandler,
    ResolvedExecEnv,
};
pub use inherited::filter_inherited_env;
pub use plugin::{DropReason, DroppedKey, FilteredEnv, filter_plugin_env};
pub use sanitize::{SanitizedEnv, merge_exec_env, sanitize_env_overrides};
