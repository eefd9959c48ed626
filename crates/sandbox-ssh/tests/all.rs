//! Tests of the SSH backend against a throwaway sshd: exec, file bridge, sync, pruning, workspaces.
//! One test binary (`suite/` modules) so the suite links once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
