//! Exec approvals: `tools.exec.security` / `tools.exec.ask`, the per-agent
//! allowlist in `<state dir>/exec-approvals.json`, and the gate step that
//! enforces them on every `exec` call.
//!
//! The command is split by a POSIX `sh` analyser ([`analyze`]) into the
//! simple commands it would run; the allowlist is satisfied only when
//! every one of them matches an entry (so `ls; rm -rf ~` does not match
//! `ls`), and anything the analyser cannot pin down (command substitution,
//! redirections, `eval`, …) is a miss. The [`Gate`](crate::Gate) runs
//! the [`ExecApprovals`] review after the plugin hooks, on the parameters that
//! will run:
//!
//! | security | ask | allowlisted | not allowlisted |
//! |---|---|---|---|
//! | `deny` | any | refused | refused |
//! | `allowlist` | `off` | runs | refused |
//! | `allowlist` | `on-miss` | runs | asked |
//! | `allowlist` / `full` | `always` | asked | asked |
//! | `full` | `off` / `on-miss` | runs | runs |
//!
//! A question goes to the approval broker with the exact command
//! ([`ApprovalRequest::command`](crate::approval::ApprovalRequest::command));
//! `allow-once` runs it, `allow-always` also adds each missed simple
//! command (program as written plus its exact arguments) to the agent's
//! allowlist, and deny, timeout or cancel refuse it. The broker never
//! remembers these answers itself: the file is the only memory. With no
//! approver attached, `askFallback` decides (default `deny`). An approvals
//! file that cannot be read or parsed refuses every command until fixed.
//!
//! ```
//! use talon_hooks::exec_approvals::{analyze, Segment};
//! let analysis = analyze("ls -la && rm -rf ~");
//! assert_eq!(analysis.segments.len(), 2);
//! assert!(matches!(&analysis.segments[1], Segment::Command { argv } if argv[0].text == "rm"));
//! ```

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::approval::{ApprovalDecision, ApprovalScope};
use crate::event::{ApprovalSpec, HookContext};
use crate::outcome::{BlockedCall, DeniedReason, GateOutcome};

pub use self::allowlist::{AllowlistEntry, AllowlistEvaluation};
pub use self::file::{
    ALL_AGENTS, AgentApprovals, AgentView, EXEC_APPROVALS_FILE, EXEC_APPROVALS_VERSION,
    ExecApprovalsError, ExecApprovalsFile, ExecApprovalsStore, FilePolicy,
};
pub use self::operands::{MAX_DEPTH, MAX_OPERANDS, Operand, OperandRole, Operands, file_operands};
pub use self::pin::{
    ExecPin, ExecPinError, ExecWorkdir, MAX_HASHED_BYTES, OperandState, PinnedOperand,
};
pub use self::policy::{ExecAsk, ExecPolicy, ExecSecurity, PolicyDecision};
pub use self::shell::{Analysis, OpaqueReason, Segment, Word, analyze};

mod allowlist;
mod file;
mod operands;
mod pin;
mod policy;
mod shell;

/// The plugin id exec approval requests carry.
pub const EXEC_APPROVALS_SOURCE: &str = "talon.exec-approvals";

/// The tool the step applies to.
const EXEC_TOOL: &str = "exec";

/// The exec policy of one agent plus the approvals file.
#[derive(Debug, Clone)]
pub struct ExecApprovals {
    policy: ExecPolicy,
    store: Arc<ExecApprovalsStore>,
}

/// What [`ExecApprovals::check`] found for one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecCheck {
    /// The effective policy (configured, tightened by the file).
    pub policy: ExecPolicy,
    /// The decision.
    pub decision: PolicyDecision,
    /// The allowlist evaluation.
    pub evaluation: AllowlistEvaluation,
    /// The entries `allow-always` would add (empty when nothing can be
    /// recorded, e.g. the command is not analysable).
    pub entries_to_add: Vec<AllowlistEntry>,
}

impl ExecApprovals {
    /// `policy` (from `tools.exec` / the agent's `tools.exec`) over `store`.
    pub fn new(policy: ExecPolicy, store: Arc<ExecApprovalsStore>) -> Self {
        ExecApprovals { policy, store }
    }

    /// The configured policy.
    pub fn policy(&self) -> ExecPolicy {
        self.policy
    }

    /// The store.
    pub fn store(&self) -> &Arc<ExecApprovalsStore> {
        &self.store
    }

    /// Decide about `command` for `agent_id` (reads the file).
    pub fn check(&self, agent_id: &str, command: &str) -> Result<ExecCheck, ExecApprovalsError> {
        let view = self.store.agent_view(agent_id)?;
        let mut policy = self.policy.stricter(view.overrides);
        policy.ask_fallback = view.ask_fallback.unwrap_or(ExecSecurity::Deny);
        let analysis = analyze(command);
        let evaluation = allowlist::evaluate(&analysis, &view.entries);
        // A command that runs a file (`python run.py`, `./x`) is never
        // remembered: an allowlist entry cannot say which contents of the
        // file were approved, so `allow-always` runs it once.
        let runs_files = !file_operands(command).operands.is_empty();
        let entries_to_add = if analysis.is_complete() && !runs_files {
            evaluation
                .misses
                .iter()
                .map(|argv| allowlist::entry_for_miss(argv))
                .collect::<Option<Vec<_>>>()
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        Ok(ExecCheck {
            decision: policy.decide(evaluation.satisfied),
            policy,
            evaluation,
            entries_to_add,
        })
    }

    /// The gate step: applied to the outcome of the plugin hooks for an
    /// `exec` call (other tools pass unchanged). `has_broker` tells whether
    /// a question can be asked at all.
    pub(crate) fn review(
        &self,
        tool: &str,
        outcome: GateOutcome,
        ctx: &HookContext,
        has_broker: bool,
    ) -> GateOutcome {
        if tool != EXEC_TOOL {
            return outcome;
        }
        let (params, rewritten, approvals) = match outcome {
            GateOutcome::Allow { params } => (params, false, Vec::new()),
            GateOutcome::AllowRewritten { params } => (params, true, Vec::new()),
            GateOutcome::NeedsApproval {
                params,
                rewritten,
                approvals,
            } => (params, rewritten, approvals),
            blocked @ (GateOutcome::Blocked(_) | GateOutcome::Failed(_)) => return blocked,
        };
        match self.review_params(&params, ctx, has_broker) {
            Review::Run => {}
            Review::Block(blocked) => return GateOutcome::Blocked(blocked),
            Review::Ask(spec) => {
                let mut approvals = approvals;
                approvals.push(*spec);
                return GateOutcome::NeedsApproval {
                    params,
                    rewritten,
                    approvals,
                };
            }
        }
        match (approvals.is_empty(), rewritten) {
            (true, false) => GateOutcome::Allow { params },
            (true, true) => GateOutcome::AllowRewritten { params },
            (false, _) => GateOutcome::NeedsApproval {
                params,
                rewritten,
                approvals,
            },
        }
    }

    fn review_params(
        &self,
        params: &Map<String, Value>,
        ctx: &HookContext,
        has_broker: bool,
    ) -> Review {
        let agent = ctx.agent_id.as_str();
        let block = |reason: String, key: &str| {
            Review::Block(
                BlockedCall::new(DeniedReason::ExecApproval, reason)
                    .source(EXEC_APPROVALS_SOURCE)
                    .config_key(key),
            )
        };
        // The same lookup the exec tool uses to read its `command`.
        let command = talon_tool_catalog::params::lookup(params, "command").and_then(Value::as_str);
        let check = match self.check(agent, command.unwrap_or_default()) {
            Ok(check) => check,
            Err(error) => {
                tracing::warn!(target: "talon::tools", agent, %error, "exec approvals file unusable; refusing exec (fail closed)");
                return block(error.to_string(), "tools.exec.security");
            }
        };
        if check.policy.is_open() {
            return Review::Run;
        }
        let Some(command) = command else {
            return block(
                "the exec call has no command string to check against tools.exec.security; nothing was run"
                    .to_owned(),
                "tools.exec.security",
            );
        };
        let why = describe_misses(&check);
        match check.decision {
            PolicyDecision::Run => Review::Run,
            PolicyDecision::Deny if check.policy.security == ExecSecurity::Deny => block(
                format!(
                    "exec is disabled for agent {agent} (tools.exec.security: deny); nothing was run"
                ),
                "tools.exec.security",
            ),
            PolicyDecision::Deny => block(
                format!(
                    "the command is not on agent {agent}'s exec allowlist ({why}; tools.exec.security: allowlist, \
                     ask: {}); nothing was run. An operator can allow it with `talon approvals allowlist add \
                     --agent {agent} PATTERN`",
                    check.policy.ask.as_str()
                ),
                "tools.exec.security",
            ),
            PolicyDecision::Ask if !has_broker => match check.policy.ask_fallback {
                ExecSecurity::Full => Review::Run,
                ExecSecurity::Allowlist if check.evaluation.satisfied => Review::Run,
                fallback => block(
                    format!(
                        "the command needs approval (tools.exec.ask: {}) and no approver is attached; \
                         askFallback is {} ({why}); nothing was run",
                        check.policy.ask.as_str(),
                        fallback.as_str()
                    ),
                    "tools.exec.ask",
                ),
            },
            PolicyDecision::Ask => {
                let mut spec = self.spec(agent, command, &check, &why);
                spec.exec_env = call_env(params);
                if let Some(resolver) = &ctx.exec_workdir {
                    match pin_command(resolver.as_ref(), params, command) {
                        Ok(pin) => {
                            spec.description = format!("{} {}.", spec.description, pin.summary());
                            spec.exec_pin = Some(Arc::new(pin));
                        }
                        Err(error) => {
                            tracing::warn!(target: "talon::tools", agent, code = error.code().as_str(), "exec approval cannot be pinned; refusing");
                            return block(
                                format!("{error}; nothing was asked or run"),
                                "tools.exec.ask",
                            );
                        }
                    }
                }
                Review::Ask(Box::new(spec))
            }
        }
    }

    fn spec(&self, agent: &str, command: &str, check: &ExecCheck, why: &str) -> ApprovalSpec {
        let description = if check.evaluation.satisfied {
            format!("Agent {agent} wants to run a command (tools.exec.ask: always).")
        } else {
            format!(
                "Agent {agent} wants to run a command that is not on its exec allowlist: {why}."
            )
        };
        let description = if check.entries_to_add.is_empty() {
            format!(
                "{description} allow-always cannot record this command (it runs a file whose \
                 contents an allowlist entry cannot fix, or it cannot be analysed); it would run once."
            )
        } else {
            let patterns: Vec<String> = check
                .entries_to_add
                .iter()
                .map(|e| format!("`{}`", crate::approval::display_text(&entry_text(e))))
                .collect();
            format!(
                "{description} allow-always adds {} to the allowlist.",
                patterns.join(", ")
            )
        };
        // `allow-always` is always offered; when nothing can be recorded
        // (an unanalysable command) it runs the command once, as OpenClaw
        // does for inline-eval commands.
        let allowed = ApprovalDecision::USER_DECISIONS.to_vec();
        let store = Arc::clone(&self.store);
        let entries = check.entries_to_add.clone();
        let agent_id = agent.to_owned();
        let on_resolution: crate::event::OnResolution = Arc::new(move |decision| {
            if decision != ApprovalDecision::AllowAlways || entries.is_empty() {
                return;
            }
            let entries = entries
                .iter()
                .cloned()
                .map(|mut e| {
                    e.source = Some("allow-always".to_owned());
                    e
                })
                .collect();
            match store.add(&agent_id, entries) {
                Ok(added) => {
                    tracing::info!(target: "talon::tools", agent = %agent_id, added, "exec allowlist: allow-always entries added")
                }
                Err(error) => {
                    tracing::warn!(target: "talon::tools", agent = %agent_id, %error, "exec allowlist: cannot record allow-always; the command runs once")
                }
            }
        });
        ApprovalSpec {
            title: "Run this command?".to_owned(),
            description,
            scope: Some(ApprovalScope::Agent),
            allowed_decisions: Some(allowed),
            plugin_id: Some(EXEC_APPROVALS_SOURCE.to_owned()),
            exec_command: Some(command.to_owned()),
            on_resolution: Some(on_resolution),
            ..ApprovalSpec::default()
        }
    }
}

/// Pin `command` in the directory its call's `workdir` resolves to.
fn pin_command(
    resolver: &dyn ExecWorkdir,
    params: &Map<String, Value>,
    command: &str,
) -> Result<ExecPin, ExecPinError> {
    // The same reading of `workdir` as the exec tool's.
    let workdir = talon_tool_catalog::params::read_string(
        params,
        "workdir",
        talon_tool_catalog::params::StringOpts::default(),
    )
    .map_err(|e| ExecPinError::Workdir {
        reason: e.to_string(),
    })?;
    let cwd = resolver.resolve(workdir.as_deref())?;
    ExecPin::take(cwd, command)
}

/// The variables the exec call sets (`env`), exactly as given, for the
/// approver: string values as they are, any other value as its JSON text
/// (the tool refuses such a call anyway). `None` when the call sets none.
fn call_env(params: &Map<String, Value>) -> Option<std::collections::BTreeMap<String, String>> {
    let env = talon_tool_catalog::params::lookup(params, "env")?.as_object()?;
    if env.is_empty() {
        return None;
    }
    Some(
        env.iter()
            .map(|(k, v)| {
                let shown = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), shown)
            })
            .collect(),
    )
}

/// An entry as `pattern arg…` (arguments shell-quoted when needed).
pub fn entry_text(entry: &AllowlistEntry) -> String {
    let mut out = entry.pattern.clone();
    if let Some(args) = &entry.args {
        for a in args {
            out.push(' ');
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                out.push_str(a);
            } else {
                out.push('\'');
                out.push_str(&a.replace('\'', "'\\''"));
                out.push('\'');
            }
        }
    }
    if let Some(p) = &entry.arg_pattern {
        out.push_str(&format!(" (args matching /{p}/)"));
    }
    out
}

enum Review {
    Run,
    Ask(Box<ApprovalSpec>),
    Block(BlockedCall),
}

/// `misses \`rm -rf ~\`, \`curl x\`` and/or the opaque reason.
fn describe_misses(check: &ExecCheck) -> String {
    let mut parts = Vec::new();
    if !check.evaluation.misses.is_empty() {
        let list: Vec<String> = check
            .evaluation
            .misses
            .iter()
            .map(|argv| {
                let words: Vec<&str> = argv.iter().map(|w| w.text.as_str()).collect();
                format!("`{}`", crate::approval::display_text(&words.join(" ")))
            })
            .collect();
        parts.push(format!("no entry matches {}", list.join(", ")));
    }
    if let Some(reason) = check.evaluation.opaque {
        parts.push(format!(
            "it contains {}, which is never allowlisted",
            reason.describe()
        ));
    }
    if parts.is_empty() {
        parts.push("the command is empty".to_owned());
    }
    parts.join("; ")
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
