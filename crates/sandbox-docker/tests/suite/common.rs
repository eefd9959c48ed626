//! Shared helpers for the tests against the machine's real Docker engine.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use talon_sandbox_docker::{ContainerSpec, DockerBackend};
use tempfile::TempDir;
use tokio::net::{UnixListener, UnixStream};
use tokio::task::JoinSet;

pub(crate) use talon_test_support::docker::{Cleanup, IMAGE, MAIN_SOCKET, unique};

/// The real engine (checked by `talon_test_support::docker`, which names
/// the fix), connected. Never skips.
pub(crate) async fn backend() -> DockerBackend {
    talon_test_support::docker::require_engine();
    match DockerBackend::connect().await {
        Ok(b) => b,
        Err(e) => panic!("the Docker engine answers `docker info` but not the backend: {e}"),
    }
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
