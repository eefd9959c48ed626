//! CLI tests: run the built `talon` binary on fixture configs and check exit
//! codes and JSON shapes.

#![allow(
    clippy::disallowed_methods,
    reason = "test and tooling code starts its probes, engines and binaries directly; Talon's own children go through talon_proc_tree::ChildCommand"
)]
// Test helpers outside `#[test]` functions may unwrap: a failure is a test
// failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
