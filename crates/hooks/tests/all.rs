//! Integration tests of the gate and the hooks around it.
// Test helpers outside `#[test]` functions may unwrap: a failure is a test
// failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
