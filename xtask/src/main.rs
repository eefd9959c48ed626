//! Repository automation, so CI logic lives in Rust rather than shell:
//!
//! - `cargo xtask test`: format check, clippy with `-D warnings`,
//!   `cargo deny check bans licenses sources` (installing cargo-deny from
//!   crates.io when missing), `cargo doc` with warnings as errors, then
//!   every test. `.ci/run` calls exactly this.
//! - `cargo xtask bench`: the criterion benchmarks, then a summary table.

use std::process::{Command, ExitCode};

mod docker_engine;

fn cargo(args: &[&str]) -> Result<(), String> {
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

fn has_cargo_deny() -> bool {
    Command::new("cargo")
        .args(["deny", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn test() -> Result<(), String> {
    cargo(&["fmt", "--all", "--check"])?;
    cargo(&[
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ])?;
    if !has_cargo_deny() {
        println!("xtask: cargo-deny is missing; installing it from crates.io");
        cargo(&["install", "cargo-deny", "--locked", "--version", "0.20.2"])?;
    }
    cargo(&["deny", "check", "bans", "licenses", "sources"])?;
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
    docker_engine::up()?;
    cargo(&["test", "--workspace"])
}

fn bench() -> Result<(), String> {
    for (package, bench) in [
        ("talon-tool-policy", "pipeline"),
        ("talon-hooks", "gate"),
        ("talon-runtime", "runtime"),
        ("talon-skills", "skills"),
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
    for name in [
        "policy_compile_config",
        "policy_evaluate_242_tools_all_layers",
        "policy_check_one_tool",
        "gate_check_nothing_configured",
        "baseline_gate_event_clone",
        "gate_check_3_plugin_hooks",
        "gate_check_loop_detection_30_history",
        "runtime_assemble_coding_run",
        "runtime_invoke_nothing_configured",
        "baseline_direct_tool_execute",
        "skills_load_1000",
        "baseline_read_1000_skill_files",
        "skills_snapshot_reuse",
        "skills_rebuild_after_change",
    ] {
        let path = format!("target/criterion/{name}/new/estimates.json");
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let median = text
                    .split("\"median\"")
                    .nth(1)
                    .and_then(|rest| rest.split("\"point_estimate\":").nth(1))
                    .and_then(|rest| rest.split([',', '}']).next())
                    .and_then(|n| n.trim().parse::<f64>().ok());
                let label = name.replacen('_', "/", 1);
                match median {
                    Some(ns) if ns < 1000.0 => println!("  {label:<40} {ns:>10.1} ns"),
                    Some(ns) => println!("  {label:<40} {:>10.2} µs", ns / 1000.0),
                    None => println!("  {name}: could not parse {path}"),
                }
            }
            Err(e) => println!("  {name}: no estimates at {path} ({e})"),
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let task = std::env::args().nth(1).unwrap_or_default();
    let result = match task.as_str() {
        "test" => test(),
        "bench" => bench(),
        "docker-up" => docker_engine::up(),
        _ => Err("usage: cargo xtask test|bench".to_owned()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}
