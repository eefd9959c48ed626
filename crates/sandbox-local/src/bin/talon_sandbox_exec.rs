//! `talon-sandbox-exec`: runs inside a local sandbox as the command
//! bubblewrap starts. It applies the sandbox's Landlock file rules to
//! itself ([`FileRules`]) and then becomes the command (`exec`), so the
//! command and everything it starts stay within them.
//!
//! `talon-sandbox-exec [--require] [--ro P]... [--rw P]... [--list P]... [--egress SOCKET] -- CMD ARG...`
//! runs `CMD`; with `--check` instead of a command it prints the status
//! line (`landlock=full abi=7`) and exits 0. Exit codes: 125 when the
//! rules cannot be applied or the egress forwarder cannot start (the
//! command is not run), 127 when the command is not found, 126 when it
//! cannot be executed.
//!
//! With `--egress SOCKET` it first starts the egress forwarder
//! (`talon-sandbox-exec --forward SOCKET`, the listening socket on its
//! standard input; see `talon_sandbox_local::start_forwarder`), after the
//! rules apply, so it is held to them like the command: it relays
//! `127.0.0.1:3128` in the sandbox to the host's guarded proxy and nothing
//! else.

use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::process::ExitCode;

use talon_sandbox_local::FileRules;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1).peekable();
    if args.peek().is_some_and(|a| a == "--forward") {
        return forward(args.nth(1));
    }
    let rules = match FileRules::parse(args) {
        Ok(rules) => rules,
        Err(e) => return fail(&anyhow::Error::new(e), 125),
    };
    let report = if rules.has_rules() || rules.check {
        match rules.restrict_self() {
            Ok(report) => Some(report),
            Err(e) => return fail(&anyhow::Error::new(e), 125),
        }
    } else {
        None
    };
    // After the rules, so the forwarder is held to them too.
    if let Some(socket) = &rules.egress {
        let started = std::env::current_exe()
            .and_then(|me| talon_sandbox_local::start_forwarder(&me, socket));
        if let Err(e) = started {
            return fail(
                &anyhow::Error::new(e)
                    .context("talon-sandbox-exec: cannot start the egress forwarder"),
                125,
            );
        }
    }
    let Some(report) = report.filter(|_| rules.check) else {
        return run(&rules);
    };
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{report}") {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(125),
    }
}

/// `--forward SOCKET`: relay the listener on standard input to `SOCKET`
/// until the sandbox ends.
fn forward(socket: Option<std::ffi::OsString>) -> ExitCode {
    let Some(socket) = socket else {
        return ExitCode::from(125);
    };
    let listener = match std::io::stdin().as_fd().try_clone_to_owned() {
        Ok(fd) => std::net::TcpListener::from(fd),
        Err(e) => return fail(&anyhow::Error::new(e), 125),
    };
    match talon_sandbox_local::forward(listener, socket.into()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(
            &anyhow::Error::new(e).context("talon-sandbox-exec --forward"),
            125,
        ),
    }
}

/// Become the command.
fn run(rules: &FileRules) -> ExitCode {
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
