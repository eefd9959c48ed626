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
    /// A run for the runner to execute (`{runId, jobId, agentId, sessionKey, message, model, tools, timeoutMs, …}`); answer with `runner.complete`.
    RunnerRun = "runner.run", Audience::Runner;
    /// A run handed out earlier was cancelled (`{runId}`).
    RunnerCancel = "runner.cancel", Audience::Runner;
    /// A system event for an agent's session (`{agentId, sessionKey, text, wakeMode, jobId}`).
    RunnerSystemEvent = "runner.systemEvent", Audience::Runner;
}
