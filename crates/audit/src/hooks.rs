//! Command hooks that cannot run: the runtime's `check_hooks`, the same
//! answer `talon config validate` and the gateway's health give.
//!
//! No setting makes a hook fail open: a `before_tool_call` hook that
//! cannot run blocks every call it matches, a `resolve_exec_env` hook is
//! skipped (exec runs without what it would add) and an `after_tool_call`
//! hook only observes. So a hook that cannot run is an outage or a lost
//! observer, never a widened policy: warn.

use talon_gateway_protocol::AuditSeverity;

use crate::findings::Findings;
use crate::input::AuditInput;

pub(crate) fn check(input: &AuditInput<'_>, out: &mut Findings) {
    let problems = match talon_runtime::check_hooks(input.config, &input.config_dir()) {
        Ok(p) => p,
        Err(e) => {
            out.incomplete("the command hooks", format!("tools.hooks: {e}"));
            return;
        }
    };
    for p in problems {
        out.push(
            "talon.hooks.cannot_run",
            AuditSeverity::Warn,
            format!(
                "command hook `{}` ({}) cannot run",
                p.hook_id,
                p.event.as_str()
            ),
            format!("{} [{}]: {}", p.key_path, p.code(), p.message),
            format!(
                "Fix {} (the program path, its execute bit, its cwd) or remove the hook; `talon config validate` checks it again, and a running gateway reports `degraded` until it is fixed.",
                p.key_path
            ),
        );
    }
}
