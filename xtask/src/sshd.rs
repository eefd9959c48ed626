//! The OpenSSH server the SSH sandbox backend's tests start (each test
//! suite runs its own sshd on a loopback port with throwaway keys; this
//! only makes sure the binaries are installed).
//!
//! `cargo xtask test` and `cargo xtask sshd-install` install Debian's
//! `openssh-server` (and `openssh-client` when `ssh` is missing) with
//! apt-get when `/usr/sbin/sshd` is missing, running `apt-get update` only
//! when the install fails without it.

use std::path::Path;
use std::process::Command;

const SSHD: &str = "/usr/sbin/sshd";

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// `apt-get install` `packages`, with one `apt-get update` and retry when
/// the first try fails.
pub(crate) fn apt_install(packages: &[&str]) -> Result<(), String> {
    let run = || {
        Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends"])
            .args(packages)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .map_err(|e| format!("cannot run apt-get: {e}"))
    };
    if run()?.success() {
        return Ok(());
    }
    println!("xtask: apt-get install failed; running apt-get update and retrying");
    let update = Command::new("apt-get")
        .arg("update")
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .map_err(|e| format!("cannot run apt-get update: {e}"))?;
    if !update.success() {
        return Err(format!("`apt-get update` failed ({update})"));
    }
    let status = run()?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "`apt-get install {}` failed ({status}); install it by hand",
            packages.join(" ")
        ))
    }
}

/// Install `openssh-server` (and `openssh-client`) when missing.
pub(crate) fn install() -> Result<(), String> {
    let mut packages = Vec::new();
    if !Path::new(SSHD).exists() {
        packages.push("openssh-server");
    }
    if !on_path("ssh") || !on_path("ssh-keygen") {
        packages.push("openssh-client");
    }
    if packages.is_empty() {
        return Ok(());
    }
    println!(
        "xtask: installing {} for the SSH backend tests",
        packages.join(" ")
    );
    apt_install(&packages)?;
    if Path::new(SSHD).exists() {
        Ok(())
    } else {
        Err(format!(
            "{SSHD} is still missing after installing openssh-server"
        ))
    }
}
