//! Integration tests of the built-in tools: exec (real processes), files (real directories), web (loopback servers).
//! One test binary (`suite/` modules) so the suite links once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
