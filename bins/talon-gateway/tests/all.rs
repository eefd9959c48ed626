//! End-to-end tests of the built `talon-gateway` daemon over real sockets: API, lifecycle, faults, containment, MCP and Docker.
//! One test binary (`suite/` modules) so the suite links once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
