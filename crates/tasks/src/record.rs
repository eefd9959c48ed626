//! A task record and its enums (facts §13).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::TaskError;

macro_rules! string_enum {
    ($(#[$m:meta])* $name:ident, $field:literal { $($(#[$vm:meta])* $var:ident = $s:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vm])* #[serde(rename = $s)] $var,)+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$var),+];

            /// The persisted / wire spelling.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$var => $s,)+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = TaskError;
            fn from_str(s: &str) -> Result<Self, TaskError> {
                match s {
                    $($s => Ok($name::$var),)+
                    other => Err(TaskError::Invalid {
                        field: $field,
                        message: format!(
                            "`{other}` is not one of {}",
                            [$($s),+].join(", ")
                        ),
                    }),
                }
            }
        }
    };
}

string_enum!(
    /// Where a task runs.
    TaskRuntime, "runtime" {
        /// A sub-agent run.
        Subagent = "subagent",
        /// An ACP run.
        Acp = "acp",
        /// A CLI-started run.
        Cli = "cli",
        /// A cron-fired run.
        Cron = "cron",
    }
);

string_enum!(
    /// A task's state. `queued` and `running` are active; the rest terminal.
    TaskStatus, "status" {
        /// Recorded, not started.
        Queued = "queued",
        /// Started.
        Running = "running",
        /// Finished well.
        Succeeded = "succeeded",
        /// Finished with an error.
        Failed = "failed",
        /// Ran out of time.
        TimedOut = "timed_out",
        /// Cancelled by someone.
        Cancelled = "cancelled",
        /// Its process vanished (maintenance sweep).
        Lost = "lost",
    }
);

string_enum!(
    /// Whether the task's result reached its requester.
    DeliveryStatus, "deliveryStatus" {
        /// Not yet delivered.
        Pending = "pending",
        /// Delivered.
        Delivered = "delivered",
        /// Queued into the requester's session.
        SessionQueued = "session_queued",
        /// Delivery failed.
        Failed = "failed",
        /// The parent is gone.
        ParentMissing = "parent_missing",
        /// Nothing to deliver.
        NotApplicable = "not_applicable",
    }
);

string_enum!(
    /// When the requester is told about the task.
    NotifyPolicy, "notifyPolicy" {
        /// Only when it is done.
        DoneOnly = "done_only",
        /// On every state change.
        StateChanges = "state_changes",
        /// Never.
        Silent = "silent",
    }
);

string_enum!(
    /// Whose task it is.
    ScopeKind, "scopeKind" {
        /// A session's.
        Session = "session",
        /// The system's.
        System = "system",
    }
);

impl TaskStatus {
    /// Whether the status is final (everything but queued / running).
    pub fn is_terminal(self) -> bool {
        !matches!(self, TaskStatus::Queued | TaskStatus::Running)
    }

    /// Whether it counts as a failure in summaries (failed, timed_out, lost).
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            TaskStatus::Failed | TaskStatus::TimedOut | TaskStatus::Lost
        )
    }
}

/// One detached task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRecord {
    /// The task id.
    pub task_id: String,
    /// Where it runs.
    pub runtime: TaskRuntime,
    /// A finer kind (free text, e.g. `agentTurn`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_kind: Option<String>,
    /// What started it (e.g. the cron job id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_id: Option<String>,
    /// The session that asked for it.
    pub requester_session_key: String,
    /// The owner key (defaults to the requester session).
    pub owner_key: String,
    /// Session or system scope.
    pub scope_kind: ScopeKind,
    /// The session the work runs in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_session_key: Option<String>,
    /// The parent task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_task_id: Option<String>,
    /// The agent doing the work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The run id (finalisation looks tasks up by it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// A short label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// What the task is about.
    pub task: String,
    /// Its state.
    pub status: TaskStatus,
    /// Delivery of its result.
    pub delivery_status: DeliveryStatus,
    /// When the requester hears about it.
    pub notify_policy: NotifyPolicy,
    /// Created (epoch ms).
    pub created_at: i64,
    /// Started (epoch ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<i64>,
    /// Ended (epoch ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<i64>,
    /// Last progress or state change (epoch ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_event_at: Option<i64>,
    /// Explicit prune time (epoch ms); wins over the retention periods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleanup_after: Option<i64>,
    /// Tool calls made so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_count: Option<u64>,
    /// The last tool called.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_tool_name: Option<String>,
    /// The error, for failures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The latest progress line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_summary: Option<String>,
    /// The final summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal_summary: Option<String>,
    /// Free-form details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<serde_json::Value>,
    /// The fleet member (gateway process) that started the work and holds
    /// its cancellation token, when the ledger was opened with one
    /// ([`TaskLedger::with_member`](crate::TaskLedger::with_member)). Only
    /// that member can stop the work; recovery after a restart marks
    /// `lost` only the running tasks of members that are gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member_id: Option<String>,
}

/// What a caller supplies to create a task.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NewTask {
    /// The id; generated when `None`.
    pub task_id: Option<String>,
    /// Where it runs (required).
    pub runtime: Option<TaskRuntime>,
    /// A finer kind.
    pub task_kind: Option<String>,
    /// What started it.
    pub source_id: Option<String>,
    /// The requesting session (required).
    pub requester_session_key: String,
    /// The owner key; the requester session when `None`.
    pub owner_key: Option<String>,
    /// System scope instead of session scope.
    pub system_scope: bool,
    /// The session the work runs in.
    pub child_session_key: Option<String>,
    /// The parent task.
    pub parent_task_id: Option<String>,
    /// The agent doing the work.
    pub agent_id: Option<String>,
    /// The run id.
    pub run_id: Option<String>,
    /// A short label.
    pub label: Option<String>,
    /// What the task is about (required).
    pub task: String,
    /// Notification policy; `done_only` when `None`.
    pub notify_policy: Option<NotifyPolicy>,
    /// Start in `running` instead of `queued`.
    pub start_running: bool,
}

impl TaskStatus {
    /// A status read back from the database (an unknown one is
    /// [`TaskError::InvalidPersisted`]).
    pub(crate) fn parse_persisted(s: &str) -> Result<TaskStatus, TaskError> {
        s.parse().map_err(|_| TaskError::InvalidPersisted {
            field: "status",
            value: s.to_owned(),
        })
    }
}

/// The persisted form of a record (JSON text; every engine stores it).
pub(crate) fn encode(r: &TaskRecord) -> Result<String, TaskError> {
    serde_json::to_string(r).map_err(|e| TaskError::Invalid {
        field: "record",
        message: format!("cannot encode: {e}"),
    })
}

/// A record from its persisted form.
pub(crate) fn decode(data: &str) -> Result<TaskRecord, TaskError> {
    serde_json::from_str(data).map_err(|e| TaskError::InvalidPersisted {
        field: "record",
        value: e.to_string(),
    })
}
