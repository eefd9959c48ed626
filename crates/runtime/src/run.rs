//! `RunSpec`: everything `assemble` needs to know about one run.

use talon_hooks::Requester;
use talon_tool_policy::RunContext;

/// One run: the policy context plus what the gate and the trigger-based
/// narrowing need.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunSpec {
    /// Agent, session, provider, model, sender, group, sandboxing,
    /// sub-agent kind, inherited tools and trigger.
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
}

impl RunSpec {
    /// A run with this policy context.
    pub fn new(context: RunContext) -> Self {
        RunSpec {
            context,
            ..RunSpec::default()
        }
    }

    /// Builder: the run id.
    pub fn run_id(mut self, id: impl Into<String>) -> Self {
        self.run_id = Some(id.into());
        self
    }
}
