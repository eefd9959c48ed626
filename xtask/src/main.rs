//! Repository automation: `cargo xtask test` runs what `.ci/run` runs.

use std::process::{Command, ExitCode};

fn run(args: &[&str]) -> bool {
    Command::new("cargo")
        .args(args)
        .status()
        .is_ok_and(|s| s.success())
}

fn main() -> ExitCode {
    let task = std::env::args().nth(1).unwrap_or_default();
    let ok = match task.as_str() {
        "test" => {
            run(&["fmt", "--all", "--check"])
                && run(&[
                    "clippy",
                    "--workspace",
                    "--all-targets",
                    "--",
                    "-D",
                    "warnings",
                ])
                && run(&["test", "--workspace"])
        }
        "bench" => run(&["bench", "-p", "talon-tool-policy", "--bench", "pipeline"]),
        _ => {
            eprintln!("usage: cargo xtask test|bench");
            false
        }
    };
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
