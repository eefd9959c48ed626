//! Integration tests for `talon-schema-dialects`, one harness with the
//! suites under `suite/`.

mod suite;
