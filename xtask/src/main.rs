//! Repository automation, so CI logic lives in Rust rather than shell:
//!
//! - `cargo xtask test`: format check, clippy with `-D warnings`,
//!   `cargo deny check bans licenses sources` (installing cargo-deny from
//!   crates.io when missing), unused dependencies (`cargo machete`), the
//!   packaging check (`cargo package` of every shipped crate, and the
//!   manifest fields a registry page needs), the light-runtime check
//!   (`talon-runtime --no-default-features` has no bollard, openssh, rmcp,
//!   reqwest or rusqlite in its tree, passes clippy and its compiled-out
//!   tests), the MSRV check
//!   (`cargo +<rust-version> check`), `cargo doc` with warnings
//!   as errors, then every test with `cargo nextest run --workspace`
//!   (`.config/nextest.toml`: slow timeouts, one test at a time per
//!   engine) and the doctests with `cargo test --doc --workspace`.
//!   `.ci/run` calls exactly this.
//! - `cargo xtask msrv`, `cargo xtask unused-deps`, `cargo xtask package`,
//!   `cargo xtask light-runtime`: those checks alone.
//! - `cargo xtask bench`: the criterion benchmarks, then a summary table.
//! - `cargo xtask fuzz [SECONDS]`: every cargo-fuzz target in `fuzz/` for
//!   SECONDS each (default 60; `cargo xtask test` runs them 10 s each).
//! - `cargo xtask docker-up`: start the Docker engine and build the test image.
//! - `cargo xtask py-env`: create `target/talon-pyenv` (Python MCP SDK,
//!   `mcp-server-time`, `websockets`) and print its interpreter.
//! - `cargo xtask sshd-install`: install OpenSSH's server for the SSH
//!   backend tests (also run by `cargo xtask test`).
//! - `cargo xtask bwrap-install`: install bubblewrap (and the `python3`
//!   the local backend's tests use) for the local sandbox backend (also
//!   run by `cargo xtask test` and `cargo xtask bench`).
//! - `cargo xtask media-install`: install `poppler-utils` and `espeak-ng`
//!   for `talon-media`'s tests and bench, and `chromium` for
//!   `talon-browser`'s (also run by `cargo xtask test` and `cargo xtask
//!   bench`).
//! - `cargo xtask postgres-install`: install Debian's `postgresql` for
//!   the state stores' PostgreSQL tests (`cargo xtask test` also starts one
//!   server for the whole run).
//! - `cargo xtask ngircd-install`: install Debian's `ngircd` for
//!   `talon-channels`' IRC tests (also run by `cargo xtask test`).
//!
//! `cargo xtask test` deletes the one-shot build trees (MSRV, packaging,
//! fuzz builds) after their step when the disk has less than 48 GiB free,
//! so a clean run fits on a small CI disk (`disk`).

#![allow(
    clippy::disallowed_methods,
    reason = "test and tooling code starts its probes, engines and binaries directly; Talon's own children go through talon_proc_tree::ChildCommand"
)]
use std::path::Path;
use std::process::{Command, ExitCode};

mod bubblewrap;
mod checks;
mod disk;
mod docker_engine;
mod fuzz;
mod media;
mod ngircd;
mod postgres;
mod python_env;
mod sshd;
mod tidy;

pub(crate) fn cargo(args: &[&str]) -> Result<(), String> {
    let status = Command::new("cargo")
        .args(args)
        .status()
        .map_err(|e| format!("cannot run cargo {}: {e}", args.join(" ")))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo {}` failed ({status})", args.join(" ")))
    }
}

fn test() -> Result<(), String> {
    disk::warn_if_short();
    cargo(&["fmt", "--all", "--check"])?;
    cargo(&[
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ])?;
    checks::ensure_cargo_tool("deny", "cargo-deny", "0.20.2")?;
    cargo(&["deny", "check", "bans", "licenses", "sources"])?;
    checks::unused_dependencies()?;
    checks::package()?;
    disk::reclaim(Path::new("target/package"))?;
    checks::light_runtime()?;
    checks::msrv()?;
    disk::reclaim(Path::new("target/msrv"))?;
    // Broken intra-doc links are errors: the crate docs are the API guide.
    let status = Command::new("cargo")
        .args(["doc", "--no-deps", "--workspace"])
        .env("RUSTDOCFLAGS", "-D warnings")
        .status()
        .map_err(|e| format!("cannot run cargo doc: {e}"))?;
    if !status.success() {
        return Err(format!(
            "`cargo doc --no-deps --workspace` failed ({status})"
        ));
    }
    // Every parser of untrusted input, briefly (`cargo xtask fuzz` for longer).
    fuzz::run(fuzz::TEST_SECONDS)?;
    fuzz::reclaim_builds()?;
    docker_engine::up()?;
    let python = python_env::up()?;
    sshd::install()?;
    bubblewrap::install()?;
    media::install()?;
    ngircd::install()?;
    postgres::install()?;
    // Stopped and deleted when this function returns.
    let (_postgres, postgres_env) = postgres::shared()?;
    checks::ensure_cargo_tool("nextest", "cargo-nextest", NEXTEST_VERSION)?;
    // The MCP fixture server, which `talon-mcp`'s tests run: built here,
    // not by the first test that needs it while the others run.
    cargo(&["build", "--quiet", "-p", "talon-mcp-fixture-server"])?;
    // nextest runs every test in its own process, by the groups and
    // timeouts of `.config/nextest.toml`; it does not run doctests.
    for args in [
        &["nextest", "run", "--workspace", "--no-fail-fast"][..],
        &["test", "--doc", "--workspace"][..],
    ] {
        let status = Command::new("cargo")
            .args(args)
            .env("TALON_TEST_PYTHON", &python)
            .envs(postgres_env.iter().map(|(k, v)| (k, v)))
            .status()
            .map_err(|e| format!("cannot run cargo {}: {e}", args.join(" ")))?;
        if !status.success() {
            return Err(format!("`cargo {}` failed ({status})", args.join(" ")));
        }
    }
    Ok(())
}

/// The pinned cargo-nextest, installed when `cargo nextest` is missing.
const NEXTEST_VERSION: &str = "0.9.143";

fn bench() -> Result<(), String> {
    // The Docker benches need the engine and the test image; the SSH
    // bench starts its own sshd.
    docker_engine::up()?;
    sshd::install()?;
    bubblewrap::install()?;
    media::install()?;
    postgres::install()?;
    let started = std::time::SystemTime::now();
    for (package, bench) in [
        ("talon-tool-policy", "pipeline"),
        ("talon-hooks", "gate"),
        ("talon-runtime", "runtime"),
        ("talon-runtime", "docker_exec"),
        ("talon-skills", "skills"),
        ("talon-fs-bridge", "fs_bridge"),
        ("talon-tools", "files"),
        ("talon-tools", "exec"),
        ("talon-tools", "web"),
        ("talon-egress", "egress"),
        ("talon-sandbox-docker", "docker"),
        ("talon-sandbox-core", "sandbox_core"),
        ("talon-tasks", "ledger"),
        ("talon-sessions", "sessions"),
        ("talon-cron", "scheduling"),
        ("talon-mcp", "mcp"),
        ("talon-sandbox-ssh", "ssh"),
        ("talon-sandbox-local", "local"),
        ("talon-journal", "journal"),
        ("talon-mcp-serve", "mcp_serve"),
        ("talon-gateway", "gateway"),
        ("talon-gateway", "spawn"),
        ("talon-gateway", "fleet"),
        ("talon-state", "state"),
        ("talon-audit", "audit"),
        ("talon-memory", "memory"),
        ("talon-media", "media"),
        ("talon-channels", "channels"),
        ("talon-browser", "browser"),
    ] {
        cargo(&[
            "bench",
            "-p",
            package,
            "--bench",
            bench,
            "--",
            "--warm-up-time",
            "1",
            "--measurement-time",
            "3",
        ])?;
    }
    println!("\nSummary (median; see target/criterion for details):");
    let mut found = Vec::new();
    collect_estimates(std::path::Path::new("target/criterion"), &mut found);
    found.sort();
    for (label, path) in found {
        // Only what this run measured.
        let fresh = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t >= started);
        if !fresh {
            continue;
        }
        let median = std::fs::read_to_string(&path).ok().and_then(|text| {
            text.split("\"median\"")
                .nth(1)
                .and_then(|rest| rest.split("\"point_estimate\":").nth(1))
                .and_then(|rest| rest.split([',', '}']).next())
                .and_then(|n| n.trim().parse::<f64>().ok())
        });
        match median {
            Some(ns) if ns < 1000.0 => println!("  {label:<56} {ns:>10.1} ns"),
            Some(ns) if ns < 1_000_000.0 => println!("  {label:<56} {:>10.2} µs", ns / 1000.0),
            Some(ns) => println!("  {label:<56} {:>10.2} ms", ns / 1_000_000.0),
            None => println!("  {label}: could not parse {}", path.display()),
        }
    }
    Ok(())
}

/// Every `<bench>/new/estimates.json` under `dir`, labelled by its path.
fn collect_estimates(dir: &std::path::Path, out: &mut Vec<(String, std::path::PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if !path.is_dir() {
            continue;
        }
        if path.file_name().is_some_and(|n| n == "new") {
            let estimates = path.join("estimates.json");
            if estimates.is_file() {
                let label = dir
                    .strip_prefix("target/criterion")
                    .unwrap_or(dir)
                    .display()
                    .to_string();
                out.push((label, estimates));
            }
        } else if path
            .file_name()
            .is_some_and(|n| n != "report" && n != "base")
        {
            collect_estimates(&path, out);
        }
    }
}

fn main() -> ExitCode {
    let task = std::env::args().nth(1).unwrap_or_default();
    let result = match task.as_str() {
        "test" => test(),
        "bench" => bench(),
        "docker-up" => docker_engine::up(),
        "py-env" => python_env::up().map(|python| println!("{}", python.display())),
        "sshd-install" => sshd::install(),
        "bwrap-install" => bubblewrap::install(),
        "media-install" => media::install(),
        "ngircd-install" => ngircd::install(),
        "postgres-install" => postgres::install(),
        "fuzz" => match std::env::args().nth(2).map(|s| s.parse::<u64>()) {
            None => fuzz::run(60),
            Some(Ok(seconds)) if seconds > 0 => fuzz::run(seconds),
            Some(_) => Err("usage: cargo xtask fuzz [SECONDS > 0]".to_owned()),
        },
        "msrv" => checks::msrv(),
        "unused-deps" => checks::unused_dependencies(),
        "package" => checks::package(),
        "light-runtime" => checks::light_runtime(),
        _ => Err(
            "usage: cargo xtask test|bench|fuzz [SECONDS]|docker-up|py-env|sshd-install|bwrap-install|media-install|ngircd-install|postgres-install|msrv|unused-deps|package|light-runtime"
                .to_owned(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}
