//! Integration tests: real SQLite files in temp dirs, real threads, and a
//! real child process killed with SIGKILL for crash recovery.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
