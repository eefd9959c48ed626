//! Integration tests: real SQLite files in temp dirs, real threads, and a
//! real child process killed with SIGKILL for crash recovery.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(
    clippy::disallowed_methods,
    reason = "test and tooling code starts its probes, engines and binaries directly; Talon's own children go through talon_proc_tree::ChildCommand"
)]

mod suite;
