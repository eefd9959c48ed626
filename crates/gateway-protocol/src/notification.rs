//! Server-pushed notifications (JSON-RPC requests without an id).

use crate::scope::Scope;

/// Who receives a notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// Every connection whose token covers the scope.
    Scope(Scope),
    /// Only the runner connection a run was handed to.
    Runner,
}

macro_rules! notifications {
    ($( $(#[doc = $doc:literal])+ $variant:ident = $name:literal, $audience:expr; )+) => {
        /// Every notification the gateway sends.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Notification {
            $( $(#[doc = $doc])+ $variant, )+
        }

        impl Notification {
            /// Every notification.
            pub const ALL: &'static [Notification] = &[ $( Notification::$variant, )+ ];

            /// The wire method name.
            pub const fn as_str(self) -> &'static str {
                match self { $( Notification::$variant => $name, )+ }
            }

            /// Who receives it.
            pub const fn audience(self) -> Audience {
                match self { $( Notification::$variant => $audience, )+ }
            }

            /// What it says.
            pub fn doc(self) -> &'static str {
                match self { $( Notification::$variant => concat!($( $doc ),+).trim_ascii(), )+ }
            }
        }
    };
}

notifications! {
    /// An approval is waiting for a decision (the pending approval).
    ApprovalRequested = "approval.requested", Audience::Scope(Scope::ReadOnly);
    /// An approval was decided, expired or cancelled.
    ApprovalResolved = "approval.resolved", Audience::Scope(Scope::ReadOnly);
    /// A reload was attempted (`{ok, generation, error?}`).
    ConfigReloaded = "config.reloaded", Audience::Scope(Scope::ReadOnly);
    /// A task's record changed (`{task}`).
    TaskUpdated = "task.updated", Audience::Scope(Scope::ReadOnly);
    /// A cron job fired (`{jobId, jobName, runId, agentId, sessionKey}`).
    CronFired = "cron.fired", Audience::Scope(Scope::ReadOnly);
    /// A run for the runner to execute (`{runId, jobId, agentId, sessionKey, message, model, tools, timeoutMs, …}`); answer with `runner.complete`. The gateway binds `sessionKey` to the run: the session opened under it (`sessions.create`, or on first use by `tools.list`/`tools.invoke`) gets `trigger: cron` and at most the job's `tools`, whatever the runner asks, and exists only while the run is in flight.
    RunnerRun = "runner.run", Audience::Runner;
    /// A run handed out earlier is over without its result: stop it (`{runId, reason, message}`; `reason` is `timeout` when the job's `timeoutSeconds` ran out, the run then recorded `timeout`, else `cancelled`). Its session is closed and its calls in flight are cancelled; a later `runner.complete` for it is refused (`data.errorCode` `runner.run_timed_out` or `runner.run_cancelled`).
    RunnerCancel = "runner.cancel", Audience::Runner;
    /// A system event for an agent's session (`{agentId, sessionKey, text, wakeMode, jobId}`).
    RunnerSystemEvent = "runner.systemEvent", Audience::Runner;
}
