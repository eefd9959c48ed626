//! The crate's error type.

/// What can go wrong building a runtime.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The policy configuration does not compile.
    #[error("tool policy: {0}")]
    Policy(#[from] talon_tool_policy::PolicyError),
    /// A hook or trusted policy could not be registered.
    #[error("hooks: {0}")]
    Hooks(#[from] talon_hooks::Error),
    /// `tools.exec.env` does not compile (a config that did not pass
    /// validation).
    #[error("tools.exec.env.{}: {}", .0.key, .0.message)]
    ExecEnv(#[from] talon_exec_env::EnvConfigError),
    /// The state directory's secrets file (`${secret:NAME}` references)
    /// cannot be used.
    #[error("{0}")]
    Secrets(#[from] talon_config::secrets::SecretsError),
    /// The configuration asks for a part this build of the runtime was
    /// compiled without (e.g. `mcp.servers` without the `mcp` feature).
    #[error(
        "{key} asks for {what}, but talon-runtime was built without its `{feature}` cargo feature. To fix: enable it (`features = [\"{feature}\"]` on the talon-runtime dependency), or remove {key} from the configuration"
    )]
    FeatureDisabled {
        /// The cargo feature that brings the part.
        feature: &'static str,
        /// The config key that asks for it.
        key: String,
        /// What the configuration asks for.
        what: String,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
