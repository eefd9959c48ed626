//! End-to-end tests of the built `talon-gateway` daemon over real sockets: API, lifecycle, faults, containment, MCP and Docker.
//! One test binary (`suite/` modules) so the suite links once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(
    clippy::disallowed_methods,
    reason = "test and tooling code starts its probes, engines and binaries directly; Talon's own children go through talon_proc_tree::ChildCommand"
)]

mod suite;
