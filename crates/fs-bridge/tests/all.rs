//! Integration tests of the file bridge on real directories: mounts, operations, escapes, races, normalisation.
//! One test binary (`suite/` modules) so the suite links once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
