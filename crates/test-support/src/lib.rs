//! Test doubles and harnesses shared by Talon's test suites, so each one
//! exists once. A dev-dependency only (`publish = false`); nothing here is
//! part of a normal build.
//!
//! - [`sshd::Sshd`]: a throwaway OpenSSH server on a loopback port with
//!   generated keys, killed (with every session process) on drop.
//! - [`docker`]: the check that the machine's Docker engine and the test
//!   image are there (a loud failure naming `cargo xtask docker-up`, never
//!   a skip), a `docker` CLI runner and container cleanup.
//! - [`ngircd::Ngircd`]: a throwaway IRC server (Debian's ngircd) on a
//!   loopback port with a generated config, plus [`ngircd::RawIrcClient`],
//!   a raw line client to talk to it as a second user.
//! - [`postgres::PgServer`]: a private PostgreSQL cluster under
//!   `target/talon-pg/` on a loopback port, and [`postgres::shared_database`],
//!   a fresh database per test on the run's shared server.
//! - [`http_receiver::HttpReceiver`]: a loopback HTTP receiver that
//!   records each request and answers OK, an error status or a stall.
//! - [`gateway::GatewayProcess`]: the real `talon-gateway` binary bound to
//!   port 0, its actual address read back from `--print-address`.
//! - [`cli::Cli`]: one runner for the `talon` binary that never reads the
//!   developer's own config.
//! - [`logs::LogCapture`]: what was logged through `tracing` on this
//!   thread, as text.
//! - [`snapshot::Redactions`]: volatile values and temp paths out of JSON
//!   before an insta snapshot.
//! - [`mounts`]: a writable tmpfs mounted beneath a test directory
//!   ([`mounts::TmpfsSubmount`], unmounted on drop) and an atomic swap of
//!   two paths ([`mounts::exchange`]), for the bind attacks.
//! - [`probe_tool::ProbeTool`]: one configurable tool (echo, fixed result,
//!   failure, slow) that records what it saw in a [`probe_tool::Probe`].
//!
//! Everything that cannot be set up panics or returns an error that says
//! how to fix the machine: a test that needs a real engine never skips.
//!
//! The crate depends only on `talon-tool-catalog` (for the `Tool` trait)
//! and `talon-state` (for the PostgreSQL config),
//! so any crate above it can take it as a dev-dependency without a cycle.
//! Helpers that need a backend's own types (an `SshTarget`, a
//! `DockerBackend`) stay in that backend's `tests/` and build on these.
//!
//! ```
//! use talon_test_support::cli::Cli;
//!
//! let run = Cli::new("/bin/echo").args(["hello"]).run();
//! assert_eq!(run.code, 0);
//! assert_eq!(run.stdout, "hello\n");
//! ```

#![allow(
    clippy::disallowed_methods,
    reason = "test and tooling code starts its probes, engines and binaries directly; Talon's own children go through talon_proc_tree::ChildCommand"
)]
pub mod cli;
pub mod docker;
pub mod gateway;
pub mod http_receiver;
pub mod logs;
pub mod mounts;
pub mod ngircd;
pub mod postgres;
pub mod probe_tool;
pub mod proc;
pub mod snapshot;
pub mod sshd;
