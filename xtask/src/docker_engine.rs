//! The Docker engine and the sandbox test image, for the sandbox-docker
//! tests (`cargo xtask test` calls [`up`] before `cargo test`; humans run
//! `cargo xtask docker-up`).
//!
//! On a fresh Debian machine, as root:
//! 1. installs Debian's `docker.io` when `dockerd` is missing (a
//!    `/usr/local/bin/docker` client alone does not count);
//! 2. when no engine answers on `/var/run/docker.sock`, starts
//!    `dockerd --iptables=false --ip6tables=false --bridge=none` detached
//!    (log in `target/dockerd.log`) and waits up to 60 s for `docker info`;
//! 3. builds the test image `talon-sandbox-test:busybox` when it is missing:
//!    Debian's `busybox-static` (downloaded once, cached under
//!    `target/docker-test-image/`), unpacked into a rootfs with the applet
//!    symlinks the tests use, tarred and `docker import`ed. There is no
//!    registry on these machines, so nothing is pulled.

use std::fs::File;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The image the sandbox-docker tests and benches use.
pub(crate) const TEST_IMAGE: &str = "talon-sandbox-test:busybox";
/// Bumped whenever the recipe below changes, so an old image is rebuilt.
const TEST_IMAGE_RECIPE: &str = "2";
const SOCKET: &str = "/var/run/docker.sock";
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// The busybox applets linked into the test image's `/bin`.
const APPLETS: &[&str] = &[
    "sh", "ash", "sleep", "cat", "echo", "true", "false", "id", "setsid", "kill", "ps", "touch",
    "ls", "mkdir", "stat", "env", "rm", "mv", "cp", "readlink", "realpath", "printf", "test", "[",
    "head", "tail", "wc", "grep", "sed", "tr", "chmod", "ln", "pwd", "dirname", "basename", "find",
    "xargs", "uname", "date", "pgrep", "pkill", "nohup", "timeout", "yes", "dd", "sort", "tee",
    "mktemp", "hostname", "whoami",
];

/// Make sure an engine answers and the test image exists.
pub(crate) fn up() -> Result<(), String> {
    ensure_installed()?;
    ensure_running()?;
    ensure_test_image()
}

fn run(program: &str, args: &[&str]) -> Result<(), String> {
    let status = Command::new(program)
        .args(args)
        .status()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{program} {}` failed ({status})", args.join(" ")))
    }
}

fn quiet_ok(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn ensure_installed() -> Result<(), String> {
    if quiet_ok("dockerd", &["--version"]) {
        return Ok(());
    }
    println!("xtask: dockerd is missing; installing Debian's docker.io");
    run("apt-get", &["update"])?;
    let status = Command::new("apt-get")
        .args(["install", "-y", "docker.io"])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .map_err(|e| format!("cannot run apt-get: {e}"))?;
    if !status.success() {
        return Err(format!("`apt-get install -y docker.io` failed ({status})"));
    }
    if quiet_ok("dockerd", &["--version"]) {
        Ok(())
    } else {
        Err("docker.io is installed but `dockerd` is still not on PATH".to_owned())
    }
}

fn engine_answers() -> bool {
    Path::new(SOCKET).exists() && quiet_ok("docker", &["-H", &format!("unix://{SOCKET}"), "info"])
}

fn ensure_running() -> Result<(), String> {
    if engine_answers() {
        return Ok(());
    }
    std::fs::create_dir_all("target").map_err(|e| format!("cannot create target/: {e}"))?;
    let log_path = Path::new("target").join("dockerd.log");
    let log = File::create(&log_path)
        .map_err(|e| format!("cannot create {}: {e}", log_path.display()))?;
    let err_log = log
        .try_clone()
        .map_err(|e| format!("cannot reopen {}: {e}", log_path.display()))?;
    println!(
        "xtask: no Docker engine on {SOCKET}; starting dockerd (log: {})",
        log_path.display()
    );
    // Detached: its own process group, no stdin, output to the log, so it
    // outlives this command and a Ctrl-C here does not stop it.
    Command::new("nohup")
        .args([
            "dockerd",
            "--iptables=false",
            "--ip6tables=false",
            "--bridge=none",
        ])
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err_log)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start dockerd: {e}"))?;
    let started = Instant::now();
    while started.elapsed() < START_TIMEOUT {
        if engine_answers() {
            println!(
                "xtask: Docker engine up after {:.1} s",
                started.elapsed().as_secs_f64()
            );
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    let tail = std::fs::read_to_string(&log_path).unwrap_or_default();
    let tail: Vec<&str> = tail.lines().rev().take(15).collect();
    Err(format!(
        "dockerd did not answer on {SOCKET} within {} s; last lines of {}:\n{}",
        START_TIMEOUT.as_secs(),
        log_path.display(),
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    ))
}

fn ensure_test_image() -> Result<(), String> {
    let recipe = Command::new("docker")
        .args([
            "image",
            "inspect",
            "--format",
            "{{index .Config.Labels \"talon.test-image\"}}",
            TEST_IMAGE,
        ])
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    if recipe.as_deref() == Some(TEST_IMAGE_RECIPE) {
        return Ok(());
    }
    let outdated = Command::new("docker")
        .args(["image", "inspect", "--format", "{{.Id}}", TEST_IMAGE])
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    println!("xtask: building the sandbox test image {TEST_IMAGE} from busybox-static");
    let cache = Path::new("target").join("docker-test-image");
    std::fs::create_dir_all(&cache)
        .map_err(|e| format!("cannot create {}: {e}", cache.display()))?;
    let deb = match find_deb(&cache)? {
        Some(deb) => deb,
        None => {
            let status = Command::new("apt-get")
                .args(["download", "busybox-static"])
                .current_dir(&cache)
                .status()
                .map_err(|e| format!("cannot run apt-get download: {e}"))?;
            if !status.success() {
                // A fresh machine may have no package lists yet.
                run("apt-get", &["update"])?;
                let status = Command::new("apt-get")
                    .args(["download", "busybox-static"])
                    .current_dir(&cache)
                    .status()
                    .map_err(|e| format!("cannot run apt-get download: {e}"))?;
                if !status.success() {
                    return Err(format!(
                        "`apt-get download busybox-static` failed ({status})"
                    ));
                }
            }
            find_deb(&cache)?.ok_or("apt-get download left no busybox-static .deb")?
        }
    };
    let unpacked = cache.join("unpacked");
    let rootfs = cache.join("rootfs");
    for dir in [&unpacked, &rootfs] {
        if dir.exists() {
            std::fs::remove_dir_all(dir)
                .map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
        }
    }
    run("dpkg", &["-x", &path_str(&deb)?, &path_str(&unpacked)?])?;
    let busybox = unpacked.join("bin").join("busybox");
    if !busybox.is_file() {
        return Err(format!("{} has no bin/busybox", deb.display()));
    }
    for dir in [
        "bin",
        "tmp",
        "var/tmp",
        "run",
        "workspace",
        "agent",
        "proc",
        "sys",
        "dev",
        "etc",
        "root",
    ] {
        std::fs::create_dir_all(rootfs.join(dir))
            .map_err(|e| format!("cannot create rootfs/{dir}: {e}"))?;
    }
    // Like any distribution image: world-writable sticky scratch dirs (the
    // engine copies these modes onto the tmpfs mounted over them).
    for dir in ["tmp", "var/tmp"] {
        std::fs::set_permissions(rootfs.join(dir), std::fs::Permissions::from_mode(0o1777))
            .map_err(|e| format!("cannot chmod rootfs/{dir}: {e}"))?;
    }
    std::fs::copy(&busybox, rootfs.join("bin").join("busybox"))
        .map_err(|e| format!("cannot copy busybox: {e}"))?;
    for applet in APPLETS {
        symlink("busybox", rootfs.join("bin").join(applet))
            .map_err(|e| format!("cannot link bin/{applet}: {e}"))?;
    }
    std::fs::write(
        rootfs.join("etc").join("passwd"),
        "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n",
    )
    .map_err(|e| format!("cannot write etc/passwd: {e}"))?;
    std::fs::write(
        rootfs.join("etc").join("group"),
        "root:x:0:\nnogroup:x:65534:\n",
    )
    .map_err(|e| format!("cannot write etc/group: {e}"))?;
    let tar = cache.join("rootfs.tar");
    run(
        "tar",
        &["-C", &path_str(&rootfs)?, "-cf", &path_str(&tar)?, "."],
    )?;
    run(
        "docker",
        &[
            "import",
            "--change",
            "ENV PATH=/usr/local/bin:/usr/bin:/bin",
            "--change",
            &format!("LABEL talon.test-image={TEST_IMAGE_RECIPE}"),
            &path_str(&tar)?,
            TEST_IMAGE,
        ],
    )?;
    if let Some(old) = outdated {
        // The old recipe's image is untagged now; drop it (by id only).
        let _ = quiet_ok("docker", &["image", "rm", &old]);
    }
    println!("xtask: built {TEST_IMAGE}");
    Ok(())
}

fn find_deb(dir: &Path) -> Result<Option<PathBuf>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry
            .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
            .path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with("busybox-static_") && name.ends_with(".deb") {
            return Ok(Some(path));
        }
    }
    Ok(None)
}

fn path_str(path: &Path) -> Result<String, String> {
    path.to_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("path is not UTF-8: {}", path.display()))
}
