//! Shared helpers for the tests against the machine's real Docker engine.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use talon_sandbox_docker::{ContainerSpec, DockerBackend};
use tempfile::TempDir;
use tokio::net::{UnixListener, UnixStream};
use tokio::task::JoinSet;

/// Built by `cargo xtask docker-up` (and `cargo xtask test`).
pub(crate) const IMAGE: &str = "talon-sandbox-test:busybox";
pub(crate) const MAIN_SOCKET: &str = "/var/run/docker.sock";

/// The real engine, or a failure that says how to get one. Never skips.
pub(crate) async fn backend() -> DockerBackend {
    let backend = match DockerBackend::connect().await {
        Ok(b) => b,
        Err(e) => panic!(
            "these tests need the machine's Docker engine and it is not reachable: {e}\n\
             Run `cargo xtask docker-up` (as root) to install and start it and to build the \
             test image {IMAGE}."
        ),
    };
    if let Err(e) = backend.docker().inspect_image(IMAGE).await {
        panic!("the test image {IMAGE} is missing ({e}); run `cargo xtask docker-up` to build it");
    }
    backend
}

/// A container name unique to this test process.
pub(crate) fn unique(name: &str) -> String {
    format!("talon-test-{}-{name}", std::process::id())
}

/// A spec on the test image, labelled `talon.test=1`.
pub(crate) fn spec(name: &str, workspace: &Path, hash: &str) -> ContainerSpec {
    let mut spec = ContainerSpec::new(unique(name), format!("test:{name}"), workspace, hash);
    spec.image = IMAGE.to_owned();
    spec.extra_labels
        .insert("talon.test".to_owned(), "1".to_owned());
    spec
}

/// A temp workspace owned by 1000:1000 (like a normal user's checkout).
pub(crate) fn workspace() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::chown(dir.path(), Some(1000), Some(1000)).unwrap();
    dir
}

/// Removes the named containers when dropped (even when a test fails).
pub(crate) struct Cleanup(pub(crate) Vec<String>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for name in &self.0 {
            let _ = std::process::Command::new("docker")
                .args(["rm", "-f", "-v", name])
                .output();
        }
    }
}

/// The command lines `docker top` shows for a container.
pub(crate) async fn top(backend: &DockerBackend, name: &str) -> Vec<String> {
    let top = backend.docker().top_processes(name, None).await.unwrap();
    let titles = top.titles.unwrap_or_default();
    let cmd = titles
        .iter()
        .position(|t| t == "CMD" || t == "COMMAND")
        .unwrap();
    top.processes
        .unwrap_or_default()
        .into_iter()
        .map(|row| row[cmd].clone())
        .collect()
}

/// A unix-socket relay in front of the real engine: the backend under
/// test connects to it, and `stop` makes the "engine" vanish mid-run
/// (socket removed, every connection cut) without touching the shared
/// engine other tests use.
pub(crate) struct EngineRelay {
    pub(crate) path: PathBuf,
    _dir: TempDir,
    tasks: JoinSet<()>,
}

impl EngineRelay {
    pub(crate) async fn start() -> EngineRelay {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("engine.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let mut tasks = JoinSet::new();
        tasks.spawn(async move {
            let mut conns = JoinSet::new();
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    break;
                };
                conns.spawn(async move {
                    if let Ok(mut engine) = UnixStream::connect(MAIN_SOCKET).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut engine).await;
                    }
                });
            }
        });
        EngineRelay {
            path,
            _dir: dir,
            tasks,
        }
    }

    /// The engine goes away: no socket, all connections closed.
    pub(crate) async fn stop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        self.tasks.abort_all();
        while self.tasks.join_next().await.is_some() {}
    }
}

pub(crate) const QUICK: Duration = Duration::from_secs(10);
