//! The `process` tool and the registry of `exec`'s sessions.

pub(crate) mod registry;
pub(crate) mod session;
mod tool;

pub use registry::{ProcessRegistry, RegistryOptions};
pub use tool::{ProcessTool, process_spec};
