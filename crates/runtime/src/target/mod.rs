//! Where a run's file and exec tools act: the host workspace or a sandbox.

mod lazy_sandbox;

pub(crate) use lazy_sandbox::{LazySandbox, LazySandboxBridge, LazySandboxLauncher};
