//! Integration tests of the task ledger on a real SQLite file: the
//! transition rules, refusals, cancellation, sweeps and reopening.
//! One test binary (`suite/` modules) so the suite links once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
