//! Bubblewrap for the local sandbox backend (`backend: "local"`): its
//! tests and bench run real `bwrap`, and use `python3` inside the sandbox
//! (threads, a memory hog).
//!
//! `cargo xtask test`, `cargo xtask bench` and `cargo xtask bwrap-install`
//! install Debian's `bubblewrap` (and `python3-minimal`) with apt-get when
//! `/usr/bin/bwrap` (`/usr/bin/python3`) is missing.

use std::path::Path;

const BWRAP: &str = "/usr/bin/bwrap";
const PYTHON: &str = "/usr/bin/python3";

/// Install `bubblewrap` (and `python3-minimal`) when missing.
pub(crate) fn install() -> Result<(), String> {
    let mut packages = Vec::new();
    if !Path::new(BWRAP).exists() {
        packages.push("bubblewrap");
    }
    if !Path::new(PYTHON).exists() {
        packages.push("python3-minimal");
    }
    if packages.is_empty() {
        return Ok(());
    }
    println!(
        "xtask: installing {} for the local sandbox backend tests",
        packages.join(" ")
    );
    crate::sshd::apt_install(&packages)?;
    if Path::new(BWRAP).exists() {
        Ok(())
    } else {
        Err(format!(
            "{BWRAP} is still missing after installing bubblewrap"
        ))
    }
}
