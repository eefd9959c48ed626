//! Integration tests of the runtime: assembly, invoke, narrowing, config.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
