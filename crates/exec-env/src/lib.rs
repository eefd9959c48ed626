//! Talon's exec environment policy: every child environment is built
//! from a policy, never inherited whole.
//!
//! A child Talon starts (a host `exec` command, a sandboxed `exec`
//! command, a stdio MCP server, a command hook) gets, in order:
//!
//! 1. an inherited base, for host children only ([`EnvPolicy::inherited`]):
//!    the host variables `inherit` selects ([`InheritMode`]: `core`, the
//!    default, is [`CORE_VARS`] plus `LC_*`; `all`; `none`), minus every
//!    name matching a built-in credential pattern ([`DEFAULT_EXCLUDES`]:
//!    `*KEY*`, `*SECRET*`, `*TOKEN*`, `*PASSWORD*`, …), every variable
//!    Talon itself reads ([`TALON_READ`]: `TALON_*` with the gateway
//!    token, `DOCKER_HOST`, `SSH_AUTH_SOCK`, …), the configured
//!    `exclude` patterns and, when given, what matches no `includeOnly`
//!    pattern; then OpenClaw's host env lists ([`filter_inherited_env`],
//!    from the embedded `data/host-env-security-policy.json`);
//! 2. the configured variables (`tools.exec.env.set`, [`ExecEnvConfig`]);
//! 3. for `exec`, the model's own `env` when it passes
//!    [`check_model_env`], which refuses (never drops) OpenClaw's blocked
//!    keys in any case, `PATH` on the host, Talon's namespaces, variables
//!    that turn TLS verification off ([`TLS_VERIFICATION_VARS`]), and
//!    credential-looking names in sandboxed runs.
//!
//! Configured overrides of a stdio MCP server go through
//! [`sanitize_env_overrides`]; variables from `resolve_exec_env` plugins
//! through [`filter_plugin_env`]. Patterns use `*` as the only wildcard
//! and match ignoring case ([`NamePattern`]). Values are never logged.
//!
//! ```
//! use std::collections::BTreeMap;
//! use talon_exec_env::{EnvPolicy, ModelEnvRefusal, RunPlace, check_model_env};
//!
//! let base = EnvPolicy::default().host_env([
//!     ("HOME".to_owned(), "/home/op".to_owned()),
//!     ("ANTHROPIC_API_KEY".to_owned(), "fake".to_owned()),
//! ]);
//! assert!(base.contains_key("HOME") && !base.contains_key("ANTHROPIC_API_KEY"));
//!
//! let asked = BTreeMap::from([("node_tls_reject_unauthorized".to_owned(), "0".to_owned())]);
//! let check = check_model_env(&asked, RunPlace::Host);
//! assert_eq!(check.refused[0].reason, ModelEnvRefusal::TlsVerification);
//! ```
//!
//! The crate depends on no other Talon crate and no async runtime.

#![deny(missing_docs)]

pub use crate::base::{
    CORE_PREFIXES, CORE_VARS, DEFAULT_EXCLUDES, TALON_READ, TLS_VERIFICATION_VARS,
    is_credential_like,
};
pub use crate::classify::{EnvKeyVerdict, classify_override_key, is_valid_env_key, trim_key};
pub use crate::config::{AgentExecEnvConfig, EnvConfigError, ExecEnvConfig, InheritMode};
pub use crate::inherited::filter_inherited_env;
pub use crate::model::{ModelEnvCheck, ModelEnvRefusal, RefusedKey, RunPlace, check_model_env};
pub use crate::pattern::{NamePattern, PatternError};
pub use crate::plugin::{DropReason, DroppedKey, FilteredEnv, filter_plugin_env};
pub use crate::policy::{EnvPolicy, EnvPolicyExplain, Withheld, process_env};
pub use crate::sanitize::{SanitizedEnv, merge_exec_env, sanitize_env_overrides};

mod base;
mod classify;
mod config;
mod inherited;
mod lists;
mod model;
mod pattern;
mod plugin;
mod policy;
mod sanitize;
