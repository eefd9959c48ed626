//! The Python virtual environment that tests use for real third-party
//! peers: the reference MCP SDK (`mcp`, as a client of the gateway's `/mcp`
//! and as a server), a published MCP server (`mcp-server-time`) and a
//! WebSocket client (`websockets`).
//!
//! It lives in `target/talon-pyenv` and is created (or repaired) by
//! `cargo xtask test` and `cargo xtask py-env`. Tests find it through the
//! `TALON_TEST_PYTHON` environment variable (the venv's `python`), which
//! `cargo xtask test` sets; a test that needs it and finds it missing fails
//! with the command that creates it — it never skips.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Pinned so every machine tests against the same peers.
const PACKAGES: &[&str] = &[
    "mcp==2.3.0",
    "mcp-server-time==2026.10.19",
    "websockets==17.4",
];

/// The venv directory, relative to the workspace root.
pub(crate) fn venv_dir() -> PathBuf {
    Path::new("target").join("talon-pyenv")
}

/// The venv's interpreter (absolute, so tests can run it from any cwd).
pub(crate) fn python() -> Result<PathBuf, String> {
    let dir =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    Ok(dir.join(venv_dir()).join("bin").join("python"))
}

/// A marker recording which package set the venv holds.
fn stamp_path() -> PathBuf {
    venv_dir().join("talon-packages.txt")
}

/// Create the venv and install the pinned packages unless already done.
pub(crate) fn up() -> Result<PathBuf, String> {
    let wanted = PACKAGES.join("\n");
    let python = python()?;
    if python.is_file() && std::fs::read_to_string(stamp_path()).is_ok_and(|s| s == wanted) {
        return Ok(python);
    }
    println!(
        "xtask: creating the Python test environment in {}",
        venv_dir().display()
    );
    let status = Command::new("python3")
        .args(["-m", "venv", "--clear"])
        .arg(venv_dir())
        .status()
        .map_err(|e| format!("cannot run python3 -m venv (is python3 installed?): {e}"))?;
    if !status.success() {
        return Err(format!(
            "`python3 -m venv {}` failed ({status})",
            venv_dir().display()
        ));
    }
    let status = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(PACKAGES)
        .status()
        .map_err(|e| format!("cannot run pip in {}: {e}", venv_dir().display()))?;
    if !status.success() {
        return Err(format!(
            "pip install {} failed ({status}); PyPI must be reachable",
            PACKAGES.join(" ")
        ));
    }
    std::fs::write(stamp_path(), wanted)
        .map_err(|e| format!("cannot write {}: {e}", stamp_path().display()))?;
    Ok(python)
}
