//! Integration tests of the `exec` and `process` tools and the host
//! launcher, with real processes. Every test is bounded in time.

mod common;

mod basics;
mod containment;
mod env;
mod launcher;
mod lifecycle;
mod sessions;
