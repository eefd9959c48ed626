//! Integration tests of the skills crate.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
