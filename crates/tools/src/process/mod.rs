//! The `process` tool and the registry of `exec`'s sessions.

pub(crate) mod registry;
pub(crate) mod session;
mod tool;

pub use registry::{DEFAULT_MAX_RUNNING_PER_KEY, ProcessRegistry, RegistryOptions};
pub use tool::{ProcessTool, process_spec};
