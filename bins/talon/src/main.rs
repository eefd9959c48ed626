//! `talon`: inspect tool policy, tool schemas and configuration.
//!
//! Exit status: 0 for allowed / valid / found, 1 for denied / invalid / not
//! found, 2 for usage or load errors.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

mod approvals_cmd;
mod call;
mod cli;
mod commands;
mod cron_cmd;
mod gateway_cmd;
mod mcp_cmd;
mod memory_cmd;
mod sandbox_cmd;
mod sandbox_manage;
mod sandbox_prune_cmd;
mod security_cmd;
mod sessions_cmd;
mod skills_cmd;
mod table;
mod tasks_cmd;

/// What a command decided, mapped to the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// Allowed / valid / found.
    Ok,
    /// Denied / invalid / not found.
    No,
    /// An error whose report is already in the output (exit 2).
    Error,
}

fn main() -> ExitCode {
    // This binary is also the local sandbox's helper (Landlock, egress
    // forwarder) when started as `EXE --talon-sandbox-exec ...`.
    if let Some(code) = talon_sandbox_local::dispatch_multicall() {
        return code;
    }
    let cli = cli::Cli::parse();
    // Every part of the CLI reads the state directory (and the config in
    // it) from TALON_STATE_DIR: `--state-dir` re-runs this program with it.
    if let Some(dir) = &cli.state_dir
        && let Err(err) = talon_config::reexec_with_state_dir(dir)
    {
        let _ = writeln!(
            std::io::stderr().lock(),
            "talon: cannot re-run itself with --state-dir: {err}"
        );
        return ExitCode::from(2);
    }
    let mut out = String::new();
    match commands::run(&cli, &mut out) {
        Ok(status) => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (e.g. `| head`) is not an error worth reporting.
            let _ = stdout.write_all(out.as_bytes());
            let _ = stdout.flush();
            match status {
                Status::Ok => ExitCode::SUCCESS,
                Status::No => ExitCode::from(1),
                Status::Error => ExitCode::from(2),
            }
        }
        Err(err) => {
            // With --json the error is a JSON object on stdout too, so a
            // script reading stdout never gets half a report or nothing.
            if cli.wants_json() {
                let doc = serde_json::json!({"error": {"message": format!("{err:#}")}});
                let mut stdout = std::io::stdout().lock();
                let _ = writeln!(stdout, "{doc:#}");
            }
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "talon: {err:#}");
            ExitCode::from(2)
        }
    }
}
