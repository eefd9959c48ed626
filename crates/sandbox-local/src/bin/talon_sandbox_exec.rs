//! `talon-sandbox-exec`: runs inside a local sandbox as the command
//! bubblewrap starts. It applies the sandbox's Landlock file rules to
//! itself ([`talon_sandbox_local::FileRules`]) and then becomes the
//! command (`exec`), so the command and everything it starts stay within
//! them.
//!
//! `talon-sandbox-exec [--talon-sandbox-exec] [--require] [--ro P]... [--rw P]... [--list P]... [--egress SOCKET] -- CMD ARG...`
//! runs `CMD`; with `--check` instead of a command it prints the status
//! line (`landlock=full abi=7`) and exits 0. Exit codes: 125 when the
//! rules cannot be applied or the egress forwarder cannot start (the
//! command is not run), 127 when the command is not found, 126 when it
//! cannot be executed.
//!
//! With `--egress SOCKET` it also starts the egress forwarder
//! (`talon-sandbox-exec --forward SOCKET`, the listening socket on its
//! standard input; see `talon_sandbox_local::start_forwarder`), after the
//! rules apply, so it is held to them like the command: it relays
//! `127.0.0.1:3128` in the sandbox to the host's guarded proxy and nothing
//! else.
//!
//! The same program is built into `talon` and `talon-gateway`
//! ([`talon_sandbox_local::dispatch_multicall`]); this binary is for
//! embedders whose own executable does not dispatch it.

use std::process::ExitCode;

fn main() -> ExitCode {
    talon_sandbox_local::helper_main(std::env::args_os().skip(1).collect())
}
