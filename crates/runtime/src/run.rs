//! `RunSpec`: everything `assemble` needs to know about one run.

use std::sync::Arc;

use talon_hooks::Requester;
use talon_tool_policy::RunContext;

use crate::sandbox_decision::RunSandbox;

/// One run: the policy context plus what the gate and the trigger-based
/// narrowing need.
///
/// Whether the run is sandboxed is not set here: [`crate::Runtime::assemble`]
/// decides it from the configuration ([`crate::resolve_run_sandbox`]).
/// `context.sandboxed = true` forces a sandbox; `false` never removes one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunSpec {
    /// Agent, session, provider, model, sender, group, forced sandboxing,
    /// sub-agent kind, inherited tools and trigger. After assembly,
    /// `context.sandboxed` holds the effective decision.
    pub context: RunContext,
    /// The run id (scopes loop detection).
    pub run_id: Option<String>,
    /// The session id.
    pub session_id: Option<String>,
    /// Who started the run; `None` means nobody was proven.
    pub requester: Option<Requester>,
    /// The construction plan: the ids of the families to build (`None`:
    /// every registered family).
    pub families: Option<Vec<String>>,
    /// For `trigger: memory`: the only file `write` may append to
    /// (workspace-relative). Without it, a memory run cannot write.
    pub memory_flush_path: Option<String>,
    /// For `trigger: cron`: the job whose run this is; the `cron` tool may
    /// only read and remove that job.
    pub cron_job_id: Option<String>,
    /// The agent workspace the file and shell tools act in, overriding the
    /// configured one (`agents.list[].workspace` /
    /// `agents.defaults.workspace`).
    pub workspace: Option<std::path::PathBuf>,
    /// Use OpenAI's strict schema dialect for OpenAI providers.
    pub openai_strict: bool,
    /// The tools that survived policy, in table order. Filled in by the
    /// runtime before any tool is constructed; empty before that.
    pub effective_tools: Vec<String>,
    /// The sandbox decision, taken by the runtime at assembly (`None`
    /// before that).
    pub(crate) sandbox: Option<Arc<RunSandbox>>,
    /// The parent run's policy context, for a child run (a sub-agent
    /// session). Assembly re-checks that the child's sandbox is no wider
    /// than this parent's ([`crate::check_child_confinement`]) and gives a
    /// child that would widen it no tools at all; front ends check first
    /// with [`crate::Runtime::child_sandbox`] to refuse it with a clear
    /// error.
    pub parent_context: Option<RunContext>,
}

impl RunSpec {
    /// A run with this policy context.
    pub fn new(context: RunContext) -> Self {
        RunSpec {
            context,
            ..RunSpec::default()
        }
    }

    /// The sandbox decision the runtime took for this run (`None` until
    /// [`crate::Runtime::assemble`]).
    pub fn sandbox(&self) -> Option<&RunSandbox> {
        self.sandbox.as_deref()
    }

    /// Builder: the run id.
    pub fn run_id(mut self, id: impl Into<String>) -> Self {
        self.run_id = Some(id.into());
        self
    }
}
