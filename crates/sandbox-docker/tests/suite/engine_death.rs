//! A real Docker daemon dying mid-exec: a throwaway `dockerd` on its own
//! socket, data root and exec root (the shared engine other tests use is
//! never touched), killed with SIGKILL while a command runs in one of its
//! containers.

use super::common;

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{IMAGE, QUICK, backend, spec, workspace};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use talon_sandbox_core::{LaunchRequest, SandboxErrorKind, SandboxHandle};
use talon_sandbox_docker::DockerBackend;
use tokio::io::AsyncReadExt;

/// A `dockerd` of our own, cleaned up (daemon, leftover shims and
/// container processes, mounts, files) when dropped.
struct ThrowawayEngine {
    dir: tempfile::TempDir,
    daemon: Option<Child>,
    /// Host pids of container init processes to kill at the end.
    container_pids: Vec<i32>,
}

impl ThrowawayEngine {
    fn start() -> ThrowawayEngine {
        let dir = tempfile::tempdir().unwrap();
        let log = File::create(dir.path().join("dockerd.log")).unwrap();
        let path = |name: &str| dir.path().join(name).display().to_string();
        let daemon = Command::new("dockerd")
            .args([
                "--data-root",
                &path("data"),
                "--exec-root",
                &path("exec"),
                "--pidfile",
                &path("dockerd.pid"),
                "-H",
                &format!("unix://{}", path("engine.sock")),
                "--iptables=false",
                "--ip6tables=false",
                "--bridge=none",
            ])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .process_group(0)
            .spawn()
            .expect("dockerd must be installed (cargo xtask docker-up)");
        ThrowawayEngine {
            dir,
            daemon: Some(daemon),
            container_pids: Vec::new(),
        }
    }

    fn socket(&self) -> PathBuf {
        self.dir.path().join("engine.sock")
    }

    async fn connect(&self) -> DockerBackend {
        let started = Instant::now();
        loop {
            if self.socket().exists()
                && let Ok(backend) = DockerBackend::connect_unix(self.socket()).await
            {
                return backend;
            }
            if started.elapsed() > Duration::from_secs(30) {
                let log = std::fs::read_to_string(self.dir.path().join("dockerd.log"))
                    .unwrap_or_default();
                panic!("the throwaway dockerd did not come up in 30 s:\n{log}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn kill_daemon(&mut self) {
        if let Some(mut daemon) = self.daemon.take() {
            let _ = daemon.kill();
            let _ = daemon.wait();
        }
    }

    /// Processes started for this engine that outlive the daemon: the
    /// runtime shims, found by this engine's own containerd address.
    fn shim_pids(&self) -> Vec<i32> {
        let marker = self.dir.path().join("exec").display().to_string();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .map(|c| String::from_utf8_lossy(&c).contains(&marker))
                    .unwrap_or(false)
            })
            .collect()
    }

    fn mounts_below(dir: &Path) -> Vec<String> {
        let prefix = dir.display().to_string();
        let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let mut mounts: Vec<String> = info
            .lines()
            .filter_map(|line| line.split(' ').nth(4))
            .filter(|m| m.starts_with(&prefix))
            .map(str::to_owned)
            .collect();
        mounts.sort_by_key(|m| std::cmp::Reverse(m.len()));
        mounts
    }
}

impl Drop for ThrowawayEngine {
    fn drop(&mut self) {
        self.kill_daemon();
        // A container's init dying ends its whole PID namespace.
        for pid in self.container_pids.drain(..) {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
        for pid in self.shim_pids() {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(200));
        for mount in Self::mounts_below(self.dir.path()) {
            let _ = Command::new("umount").args(["-l", &mount]).output();
        }
    }
}

#[tokio::test]
async fn a_real_engine_killed_mid_exec_gives_a_clear_error_without_hanging() {
    // The shared engine must be there (it provides the test image).
    let _main = backend().await;
    let mut engine = ThrowawayEngine::start();
    let backend = engine.connect().await;
    let load = Command::new("sh")
        .args([
            "-c",
            &format!(
                "docker save {IMAGE} | docker -H unix://{} load",
                engine.socket().display()
            ),
        ])
        .output()
        .unwrap();
    assert!(
        load.status.success(),
        "{}",
        String::from_utf8_lossy(&load.stderr)
    );

    let ws = workspace();
    let s = spec("real-engine-death", ws.path(), "h");
    let sandbox = backend.ensure_container(&s).await.unwrap();
    let info = backend
        .docker()
        .inspect_container(&s.name, None)
        .await
        .unwrap();
    let init_pid = info.state.unwrap().pid.unwrap();
    engine.container_pids.push(i32::try_from(init_pid).unwrap());

    let mut proc = sandbox
        .launcher()
        .launch(LaunchRequest {
            command: "echo started; sleep 30".to_owned(),
            ..Default::default()
        })
        .await
        .unwrap();
    proc.stdin = None;
    let mut first = [0u8; 8];
    proc.stdout.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"started\n");

    engine.kill_daemon();
    let begun = Instant::now();
    let err = tokio::time::timeout(QUICK, proc.control.wait())
        .await
        .expect("wait must not hang when the daemon dies")
        .unwrap_err();
    assert!(begun.elapsed() < Duration::from_secs(5));
    match err.kind() {
        SandboxErrorKind::EngineUnavailable => {
            let m = err.message();
            assert!(m.contains(&engine.socket().display().to_string()), "{m}");
            assert!(m.contains("cargo xtask docker-up"), "{m}");
        }
        _ => panic!("expected EngineUnavailable, got {err:?}"),
    }
    // Killing (the timeout path) and the next ensure fail the same way,
    // promptly.
    let err = tokio::time::timeout(QUICK, proc.control.kill())
        .await
        .unwrap()
        .unwrap_err();
    assert!(err.kind() == SandboxErrorKind::EngineUnavailable, "{err}");
    let err = tokio::time::timeout(QUICK, sandbox.run_script("true", &[], None, QUICK))
        .await
        .unwrap()
        .unwrap_err();
    assert!(err.kind() == SandboxErrorKind::EngineUnavailable, "{err}");
    let err = tokio::time::timeout(QUICK, backend.ensure_container(&s))
        .await
        .unwrap()
        .unwrap_err();
    assert!(err.kind() == SandboxErrorKind::EngineUnavailable, "{err}");
}
