//! Real-kernel tests of process-tree containment: real cgroups, real
//! processes, checked by pid in `/proc`.

#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(
    clippy::disallowed_methods,
    reason = "test and tooling code starts its probes, engines and binaries directly; Talon's own children go through talon_proc_tree::ChildCommand"
)]

mod suite;
