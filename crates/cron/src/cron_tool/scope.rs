//! What the tool knows about the run it belongs to.

/// The run a [`super::CronTool`] serves. Build it from the runtime's
/// `RunSpec`: `effective_tools` (the tools that survived policy: the cap of
/// any job this run creates) and, for `trigger: cron` runs, `cron_job_id`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CronToolScope {
    /// The agent.
    pub agent_id: String,
    /// The session key.
    pub session_key: String,
    /// The run's effective tools, in table order.
    pub effective_tools: Vec<String>,
    /// Whether a cron job started this run.
    pub cron_triggered: bool,
    /// For cron-triggered runs: the job whose run this is.
    pub cron_job_id: Option<String>,
}

impl CronToolScope {
    /// A user-triggered run's scope.
    pub fn new(
        agent_id: impl Into<String>,
        session_key: impl Into<String>,
        effective_tools: Vec<String>,
    ) -> Self {
        CronToolScope {
            agent_id: agent_id.into(),
            session_key: session_key.into(),
            effective_tools,
            cron_triggered: false,
            cron_job_id: None,
        }
    }

    /// Builder: this run was started by cron job `job_id` (`None`: the
    /// runtime did not say which; the tool then refuses everything).
    pub fn cron_triggered(mut self, job_id: Option<String>) -> Self {
        self.cron_triggered = true;
        self.cron_job_id = job_id;
        self
    }
}
