//! `cargo xtask fuzz [SECONDS]`: every cargo-fuzz target in `fuzz/`, each
//! run for SECONDS (default 10) from its hand-written seeds
//! (`fuzz/seeds/<target>`), the minimised corpus committed with the code
//! (`fuzz/corpus/<target>`, refreshed by hand with `cargo fuzz cmin`) and
//! what earlier local runs found (`target/fuzz/corpus/<target>`, where new
//! inputs are written). `cargo xtask test` runs it briefly; a
//! crash fails the run and names the input libFuzzer saved (turn it into a
//! regression test in the crate that owns the parser).
//!
//! Needs the nightly toolchain (libFuzzer's instrumentation) and
//! cargo-fuzz, which is installed from crates.io when missing. Talon has
//! no `unsafe`, so the targets are built without a sanitizer, unoptimised
//! and with debug assertions: panics, overflows and failed invariants are
//! what they look for.

use std::path::Path;
use std::process::Command;

/// The pinned cargo-fuzz, installed when `cargo fuzz` is missing.
const CARGO_FUZZ_VERSION: &str = "0.13.2";

/// Seconds each target runs in `cargo xtask test`.
pub const TEST_SECONDS: u64 = 10;

fn fuzz_cmd(args: &[&str]) -> Result<std::process::Output, String> {
    Command::new("cargo")
        .arg("+nightly")
        .arg("fuzz")
        .args(args)
        .current_dir("fuzz")
        .env(
            "CARGO_TARGET_DIR",
            Path::new("..").join("target").join("fuzz"),
        )
        .output()
        .map_err(|e| format!("cannot run cargo +nightly fuzz: {e}"))
}

/// Build every target, then run each for `seconds`.
pub fn run(seconds: u64) -> Result<(), String> {
    crate::checks::ensure_cargo_tool("fuzz", "cargo-fuzz", CARGO_FUZZ_VERSION)?;
    // `--dev`: unoptimised, so the (large) dependency graph builds fast;
    // libFuzzer's coverage instrumentation is the same.
    let flags = ["--dev", "--sanitizer", "none", "--debug-assertions"];
    let mut build = vec!["build"];
    build.extend(flags);
    let status = Command::new("cargo")
        .arg("+nightly")
        .arg("fuzz")
        .args(&build)
        .current_dir("fuzz")
        .env(
            "CARGO_TARGET_DIR",
            Path::new("..").join("target").join("fuzz"),
        )
        .status()
        .map_err(|e| format!("cannot run cargo +nightly fuzz: {e}"))?;
    if !status.success() {
        return Err(format!(
            "`cargo +nightly fuzz build` failed ({status}; is the nightly toolchain installed?)"
        ));
    }
    let list = fuzz_cmd(&["list"])?;
    let targets: Vec<String> = String::from_utf8_lossy(&list.stdout)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    if targets.is_empty() {
        return Err("cargo fuzz list found no targets in fuzz/".to_owned());
    }
    for target in &targets {
        let corpus = Path::new("target/fuzz/corpus").join(target);
        let artifacts = Path::new("target/fuzz/artifacts").join(target);
        for dir in [&corpus, &artifacts] {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let seeds = Path::new("fuzz/seeds").join(target);
        let from_fuzz = |p: &Path| Path::new("..").join(p).display().to_string();
        let mut args: Vec<String> = vec!["run".into()];
        args.extend(flags.iter().map(|f| (*f).to_owned()));
        args.push(target.clone());
        args.push(from_fuzz(&corpus));
        let kept = Path::new("fuzz/corpus").join(target);
        for dir in [&seeds, &kept] {
            if dir.is_dir() {
                args.push(from_fuzz(dir));
            }
        }
        args.push("--".into());
        args.push(format!("-max_total_time={seconds}"));
        args.push("-max_len=8192".into());
        args.push("-rss_limit_mb=2048".into());
        args.push(format!("-artifact_prefix={}/", from_fuzz(&artifacts)));
        println!("xtask: fuzzing {target} for {seconds} s");
        let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = fuzz_cmd(&arg_refs)?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let lines: Vec<&str> = stderr.lines().collect();
            // The panic and its message, then libFuzzer's summary.
            let panic: Vec<&str> = lines
                .iter()
                .position(|l| l.contains("panicked at"))
                .map(|i| lines[i..lines.len().min(i + 2)].to_vec())
                .unwrap_or_default();
            let summary: Vec<&str> = lines
                .iter()
                .filter(|l| l.starts_with("SUMMARY") || l.contains("Test unit written"))
                .copied()
                .collect();
            return Err(format!(
                "fuzz target {target} failed; the input is under {}:\n{}\n{}",
                artifacts.display(),
                panic.join("\n"),
                summary.join("\n")
            ));
        }
    }
    println!(
        "xtask: {} fuzz targets ran {seconds} s each without a failure",
        targets.len()
    );
    Ok(())
}

/// Deletes the fuzz targets' build trees when the disk is short of room
/// (see `disk`); the corpus and the saved crash inputs stay.
pub fn reclaim_builds() -> Result<(), String> {
    let root = Path::new("target").join("fuzz");
    crate::disk::reclaim(&root.join("debug"))?;
    let entries = match std::fs::read_dir(&root) {
        Ok(entries) => entries,
        Err(_) => return Ok(()),
    };
    for entry in entries.flatten() {
        let path = entry.path();
        // The per-triple trees (`x86_64-unknown-linux-gnu`, …).
        let is_triple = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.matches('-').count() >= 2);
        if is_triple && path.is_dir() {
            crate::disk::reclaim(&path)?;
        }
    }
    Ok(())
}
