//! Integration tests of the `exec` and `process` tools and the host
//! launcher, with real processes. Every test is bounded in time.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "exec/common.rs"]
mod common;

#[path = "exec/basics.rs"]
mod basics;
#[path = "exec/containment.rs"]
mod containment;
#[path = "exec/env.rs"]
mod env;
#[path = "exec/launcher.rs"]
mod launcher;
#[path = "exec/lifecycle.rs"]
mod lifecycle;
#[path = "exec/sessions.rs"]
mod sessions;
