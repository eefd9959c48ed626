//! Integration tests of the built-in tools: exec (real processes), files (real directories), web (loopback servers).
//! One test binary (`suite/` modules) so the suite links once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(
    clippy::disallowed_methods,
    reason = "test and tooling code starts its probes, engines and binaries directly; Talon's own children go through talon_proc_tree::ChildCommand"
)]

mod suite;
