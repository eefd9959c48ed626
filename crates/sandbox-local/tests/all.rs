//! Tests of the local sandbox under real bubblewrap: isolation, escapes, Landlock, limits.
//! One test binary (`suite/` modules) so the suite links once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
