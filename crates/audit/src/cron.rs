//! Stored cron jobs whose creator cap is wider than their agent's current
//! policy.

use talon_cron::CronStore;
use talon_gateway_protocol::AuditSeverity;
use talon_tool_catalog::is_core_tool;
use talon_tool_policy::{PolicyEngine, RunContext};

use crate::findings::Findings;
use crate::input::AuditInput;

/// The shared database holding the cron store (`<state dir>/talon.db`).
const DB_FILE: &str = "talon.db";

pub(crate) fn check(input: &AuditInput<'_>, engine: &PolicyEngine, out: &mut Findings) {
    let path = input.state_dir.join(DB_FILE);
    match std::fs::metadata(&path) {
        Ok(_) => {}
        // No store yet: no job to check (opening would create one).
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            out.incomplete(
                "the cron store",
                format!("cannot stat {}: {e}", path.display()),
            );
            return;
        }
    }
    let jobs = match CronStore::open(&path).and_then(|s| s.list(true)) {
        Ok(jobs) => jobs,
        Err(e) => {
            out.incomplete("the cron store", format!("{}: {e}", path.display()));
            return;
        }
    };
    for job in jobs {
        // An operator job (no creator cap) runs with its agent's policy.
        if job.creator_tools.is_none() {
            continue;
        }
        let Some(capped) = job.effective_run_tools() else {
            continue;
        };
        let mut run = RunContext::new(job.agent_id.clone());
        run.session_key = format!("cron:{}", job.id);
        let (now, _) = crate::tools::effective(input, engine, run);
        // Only core tools are known without starting MCP servers.
        let wider: Vec<&String> = capped
            .iter()
            .filter(|t| is_core_tool(t) && !now.allows(t))
            .collect();
        if wider.is_empty() {
            continue;
        }
        out.push(
            "talon.cron.cap_wider_than_policy",
            AuditSeverity::Warn,
            format!(
                "cron job `{}` ({}) keeps tools agent `{}` no longer has",
                job.name, job.id, job.agent_id
            ),
            format!(
                "The job's stored tool cap (its creator's tools when it was created) holds {}, which agent `{}`'s current policy does not give a cron session: the run is still cut to the policy, but the stored cap no longer says what the job may do, and a later policy change would give them back.",
                wider
                    .iter()
                    .map(|t| format!("`{t}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                job.agent_id
            ),
            format!(
                "Remove the job (`talon cron remove {}`) and have it created again under the current policy.",
                job.id
            ),
        );
    }
}
