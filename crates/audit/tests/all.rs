//! `talon-audit` on real files: the example configs under `fixtures/`
//! copied into a temp dir with the modes under test, a real state dir, a
//! real cron store.
// A failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
