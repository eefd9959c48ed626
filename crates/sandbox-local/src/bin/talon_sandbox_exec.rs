//! `talon-sandbox-exec`: runs inside a local sandbox as the command
//! bubblewrap starts. It applies the sandbox's Landlock file rules to
//! itself ([`FileRules`]) and then becomes the command (`exec`), so the
//! command and everything it starts stay within them.
//!
//! `talon-sandbox-exec [--require] [--ro P]... [--rw P]... [--list P]... -- CMD ARG...`
//! runs `CMD`; with `--check` instead of a command it prints the status
//! line (`landlock=full abi=7`) and exits 0. Exit codes: 125 when the
//! rules cannot be applied (the command is not run), 127 when the command
//! is not found, 126 when it cannot be executed.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::ExitCode;

use talon_sandbox_local::FileRules;

fn main() -> ExitCode {
    let rules = match FileRules::parse(std::env::args_os().skip(1)) {
        Ok(rules) => rules,
        Err(e) => return fail(&anyhow::Error::new(e), 125),
    };
    let report = match rules.restrict_self() {
        Ok(report) => report,
        Err(e) => return fail(&anyhow::Error::new(e), 125),
    };
    if rules.check {
        let mut out = std::io::stdout().lock();
        return match writeln!(out, "{report}") {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::from(125),
        };
    }
    let Some((program, args)) = rules.argv.split_first() else {
        return ExitCode::from(125);
    };
    // Only returns on failure.
    let e = std::process::Command::new(program).args(args).exec();
    let code = if e.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    };
    fail(
        &anyhow::Error::new(e).context(format!(
            "talon-sandbox-exec: cannot execute {}",
            program.to_string_lossy()
        )),
        code,
    )
}

fn fail(e: &anyhow::Error, code: u8) -> ExitCode {
    let _ = writeln!(std::io::stderr().lock(), "{e:#}");
    ExitCode::from(code)
}
