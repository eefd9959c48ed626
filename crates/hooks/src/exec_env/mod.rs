//! The `resolve_exec_env` plugin hook. The key policy it applies (and
//! every other exec environment rule) lives in `talon-exec-env`.

mod hook;

pub use hook::{
    DEFAULT_RESOLVE_EXEC_ENV_TIMEOUT, ExecEnvEvent, ExecEnvHooks, ExecHost, ResolveExecEnvHandler,
    ResolvedExecEnv,
};
