//! Where a run's file and exec tools act: the host workspace or a sandbox.

mod lazy_sandbox;

#[allow(unused_imports)]
pub(crate) use lazy_sandbox::{EnsureFn, LazySandbox, LazySandboxBridge, LazySandboxLauncher};
