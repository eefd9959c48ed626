//! The machine's Docker engine, for the suites that run real containers
//! (sandbox-docker, runtime, the CLI's `sandbox ls|rm|prune`, the
//! gateway's container faults).
//!
//! `cargo xtask docker-up` (and `cargo xtask test`) installs and starts
//! `dockerd` and builds [`IMAGE`]. [`require_engine`] checks both and
//! panics with that fix when either is missing: these tests never skip.

use std::process::{Command, Stdio};

/// The test image `cargo xtask docker-up` builds (busybox, imported from a
/// tarball; there is no registry on the test machines).
pub const IMAGE: &str = "talon-sandbox-test:busybox";

/// The engine's socket when `DOCKER_HOST` is not set.
pub const MAIN_SOCKET: &str = "/var/run/docker.sock";

/// The fix named by every failure here.
const FIX: &str = "run `cargo xtask docker-up` (as root) to install and start the engine and \
                   build the test image";

/// Run the `docker` client with `args`: whether it succeeded, and its
/// stdout. Panics (naming the fix) when the client cannot be started.
pub fn docker(args: &[&str]) -> (bool, String) {
    let out = Command::new("docker")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run the docker client ({e}): {FIX}"));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Panic, naming the fix, unless an engine answers and [`IMAGE`] exists.
pub fn require_engine() {
    assert!(
        docker(&["info", "--format", "{{.ServerVersion}}"]).0,
        "these tests need the machine's Docker engine and it is not reachable: {FIX}"
    );
    assert!(
        docker(&["image", "inspect", "--format", "{{.Id}}", IMAGE]).0,
        "the test image {IMAGE} is missing: {FIX}"
    );
}

/// A container name unique to this test process.
pub fn unique(name: &str) -> String {
    format!("talon-test-{}-{name}", std::process::id())
}

/// Removes the named containers (and their anonymous volumes) when
/// dropped, even when the test failed.
#[derive(Debug, Default)]
pub struct Cleanup(pub Vec<String>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for name in &self.0 {
            let _ = Command::new("docker")
                .args(["rm", "-f", "-v", name])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// Removes every container matching a `docker ps` filter (`label=k=v`,
/// `name=prefix`) when dropped, even when the test failed: for containers
/// a backend named itself.
#[derive(Debug)]
pub struct RemoveMatching(pub String);

impl Drop for RemoveMatching {
    fn drop(&mut self) {
        let (_, ids) = docker(&["ps", "-aq", "--filter", &self.0]);
        for id in ids.split_whitespace() {
            let _ = Command::new("docker")
                .args(["rm", "-f", "-v", id])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}
