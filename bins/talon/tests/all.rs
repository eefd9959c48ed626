//! CLI tests: run the built `talon` binary on fixture configs and check exit
//! codes and JSON shapes.
// Test helpers outside `#[test]` functions may unwrap: a failure is a test
// failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
