//! The `talon-sandbox-exec` program, as a library function, so that any
//! Talon binary can be the helper too ("multicall"): `talon` and
//! `talon-gateway` call [`dispatch_multicall`] first thing in `main`, and
//! a backend in such a process uses the running executable as its helper
//! when no `talon-sandbox-exec` is installed. `cargo run -p talon-gateway`
//! therefore gets Landlock and egress without building a second binary.
//!
//! Every helper invocation starts with [`MULTICALL_ARG`]; the standalone
//! `talon-sandbox-exec` accepts (and skips) it too.

use std::error::Error;
use std::ffi::OsString;
use std::io::Write;
use std::os::fd::AsFd;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use talon_proc_tree::{ChildCommand, ChildEnv, ProcessGroup, SpawnErrorKind};

use crate::file_rules::FileRules;

/// The first argument of every helper invocation.
pub const MULTICALL_ARG: &str = "--talon-sandbox-exec";

/// Set once this process has said it can act as the helper.
static MULTICALL: AtomicBool = AtomicBool::new(false);

/// Call first thing in `main`: when the process was started as the
/// helper (`EXE --talon-sandbox-exec ...`), run it and return its exit
/// code; otherwise note that this executable can be the helper (see
/// [`crate::find_sandbox_exec`]) and return `None`.
pub fn dispatch_multicall() -> Option<ExitCode> {
    MULTICALL.store(true, Ordering::SeqCst);
    let mut args = std::env::args_os().skip(1);
    if args.next()? != MULTICALL_ARG {
        return None;
    }
    Some(helper_main(args.collect()))
}

/// Whether this process called [`dispatch_multicall`].
pub(crate) fn is_multicall() -> bool {
    MULTICALL.load(Ordering::SeqCst)
}

/// The helper: `[--talon-sandbox-exec] (--forward SOCKET | RULES... (--check | -- COMMAND...))`.
/// Exit codes: 125 when the rules cannot be applied or the egress
/// forwarder cannot start (the command is not run), 127 when the command
/// is not found, 126 when it cannot be executed.
pub fn helper_main(mut args: Vec<OsString>) -> ExitCode {
    if args.first().is_some_and(|a| a == MULTICALL_ARG) {
        args.remove(0);
    }
    if args.first().is_some_and(|a| a == "--forward") {
        return forward(args.into_iter().nth(1));
    }
    let rules = match FileRules::parse(args) {
        Ok(rules) => rules,
        Err(e) => return fail("", &e, 125),
    };
    let report = if rules.has_rules() || rules.check {
        match rules.restrict_self() {
            Ok(report) => Some(report),
            Err(e) => return fail("", &e, 125),
        }
    } else {
        None
    };
    // After the rules, so the forwarder is held to them too.
    if let Some(socket) = &rules.egress {
        let started =
            std::env::current_exe().and_then(|me| crate::egress::start_forwarder(&me, socket));
        if let Err(e) = started {
            return fail("cannot start the egress forwarder", &e, 125);
        }
    }
    let Some(report) = report.filter(|_| rules.check) else {
        return run(&rules);
    };
    match writeln!(std::io::stdout().lock(), "{report}") {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(125),
    }
}

/// `--forward SOCKET`: relay the listener on standard input to `SOCKET`
/// until the sandbox ends.
fn forward(socket: Option<OsString>) -> ExitCode {
    let Some(socket) = socket else {
        return ExitCode::from(125);
    };
    let listener = match std::io::stdin().as_fd().try_clone_to_owned() {
        Ok(fd) => std::net::TcpListener::from(fd),
        Err(e) => return fail("--forward", &e, 125),
    };
    match crate::egress::forward(listener, socket.into()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail("--forward", &e, 125),
    }
}

/// Become the command.
fn run(rules: &FileRules) -> ExitCode {
    let Some((program, args)) = rules.argv.split_first() else {
        return ExitCode::from(125);
    };
    // Only returns on failure. The environment is the one bubblewrap was
    // given (built by the policy), and stdin is the command's.
    let e = ChildCommand::new(program, ChildEnv::InheritParent, ProcessGroup::Parent)
        .args(args)
        .stdin(std::process::Stdio::inherit())
        .exec();
    let code = match e.kind() {
        SpawnErrorKind::NotFound => 127,
        _ => 126,
    };
    let e = e.into_io_error();
    let context = format!("cannot execute {}", program.to_string_lossy());
    fail(&context, &e, code)
}

/// Print `talon-sandbox-exec: CONTEXT: ERROR: SOURCE...` and exit `code`.
fn fail(context: &str, e: &dyn Error, code: u8) -> ExitCode {
    let mut line = String::from("talon-sandbox-exec");
    if !context.is_empty() {
        line.push_str(": ");
        line.push_str(context);
    }
    let mut next: Option<&dyn Error> = Some(e);
    while let Some(err) = next {
        let text = err.to_string();
        // FileRulesError's own messages already start with the name.
        line.push_str(": ");
        line.push_str(text.strip_prefix("talon-sandbox-exec: ").unwrap_or(&text));
        next = err.source();
    }
    let _ = writeln!(std::io::stderr().lock(), "{line}");
    ExitCode::from(code)
}
