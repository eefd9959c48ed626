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
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
