//! The cron crate's error type.

/// Everything that can go wrong in cron.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CronError {
    /// Bad input: names the field (`schedule.expr`, `schedule.tz`, …), says
    /// what is wrong and how to fix it.
    #[error("invalid {field}: {message}")]
    Invalid {
        /// The field path.
        field: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A job kept changing under an update (another gateway fired or
    /// finished it between the read and the write, again and again):
    /// nothing was written.
    #[error(
        "cron job `{0}` changed while it was being updated (it was firing); nothing was changed, try again"
    )]
    Changed(String),
    /// No job has this id.
    #[error("no cron job with id `{0}`; list jobs with the `list` action or `talon cron list`")]
    NotFound(String),
    /// The SQLite store failed.
    #[error("cron store at {path}: {source}")]
    Db {
        /// The database file.
        path: String,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },
    /// The store's schema is newer than this binary knows: a newer Talon
    /// wrote it. Nothing is changed; run the newer binary.
    #[error(
        "cron store at {location} has schema version {found}, newer than the {known} this binary knows; run the Talon that wrote it (or a newer one)"
    )]
    SchemaNewer {
        /// Where the store lives.
        location: String,
        /// The version found.
        found: i64,
        /// The newest version this binary knows.
        known: i64,
    },
    /// The shared state database failed (PostgreSQL): unreachable
    /// (`unavailable`), fenced (this gateway no longer holds the cron
    /// timer lease, so its write was refused), a conflict, a query error.
    /// Keeps the state error with its kind and code.
    #[cfg(feature = "postgres")]
    #[error("cron store at {location}: {source}")]
    State {
        /// Where the store lives (`postgres user@host:port/db`, never the
        /// password).
        location: String,
        /// The state error.
        #[source]
        source: talon_state::StateError,
    },
    /// A stored job could not be decoded.
    #[error("invalid persisted cron job `{id}`: {message}")]
    Persisted {
        /// The job id.
        id: String,
        /// The decode error.
        message: String,
    },
    /// A quota would be exceeded: the change is refused and nothing is
    /// stored. Names the limit and the config key that sets it.
    #[error("{message} (limit {max}, set by `{config_key}`)")]
    Quota {
        /// Which limit.
        limit: QuotaLimit,
        /// The config key that sets it (`cron.quotas.maxJobsPerCreator`, …).
        config_key: &'static str,
        /// The limit in force.
        max: u64,
        /// What was refused and how to get under the limit.
        message: String,
    },
    /// A webhook URL the egress guard refuses (a private, loopback or
    /// metadata address, a blocked name, a scheme other than http(s)).
    /// Nothing is stored and no runner is told to post there.
    #[error("{field}: {blocked}")]
    Egress {
        /// The field holding the URL (`delivery.to`, ...).
        field: String,
        /// The guard's refusal (kind, code, reason, how to opt in).
        #[source]
        blocked: talon_egress::SsrfBlocked,
    },
    /// The task ledger failed.
    #[error(transparent)]
    Tasks(Box<talon_tasks::TaskError>),
    /// The service is not running inside a tokio runtime or was stopped.
    #[error("the cron service is not running: {0}")]
    NotRunning(String),
}

/// The cron quotas ([`CronError::Quota`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum QuotaLimit {
    /// Jobs held by one creating session.
    JobsPerCreator,
    /// Jobs held by one agent.
    JobsPerAgent,
    /// The shortest gap between two runs of a recurring job.
    MinInterval,
}

impl QuotaLimit {
    /// The stable code (`cron.quota.jobs_per_creator`, …).
    pub fn code(self) -> &'static str {
        match self {
            QuotaLimit::JobsPerCreator => "cron.quota.jobs_per_creator",
            QuotaLimit::JobsPerAgent => "cron.quota.jobs_per_agent",
            QuotaLimit::MinInterval => "cron.quota.min_interval",
        }
    }

    /// The config key that sets it.
    pub fn config_key(self) -> &'static str {
        match self {
            QuotaLimit::JobsPerCreator => "cron.quotas.maxJobsPerCreator",
            QuotaLimit::JobsPerAgent => "cron.quotas.maxJobsPerAgent",
            QuotaLimit::MinInterval => "cron.quotas.minIntervalSeconds",
        }
    }
}

impl CronError {
    /// An [`CronError::Invalid`] for `field`.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        CronError::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }

    /// Whether the shared store refused a write because this process no
    /// longer holds the cron timer lease (always `false` on SQLite).
    pub fn is_fenced(&self) -> bool {
        #[cfg(feature = "postgres")]
        if let CronError::State {
            source: talon_state::StateError::Fenced { .. },
            ..
        } = self
        {
            return true;
        }
        false
    }

    /// Whether the store could not be reached (retry later): the shared
    /// state database is down or the connection was lost.
    pub fn is_unavailable(&self) -> bool {
        #[cfg(feature = "postgres")]
        if let CronError::State { source, .. } = self {
            return source.is_unavailable();
        }
        false
    }

    /// The field path of an input error.
    pub fn field(&self) -> Option<&str> {
        match self {
            CronError::Invalid { field, .. } | CronError::Egress { field, .. } => Some(field),
            _ => None,
        }
    }
}

impl From<talon_tasks::TaskError> for CronError {
    fn from(e: talon_tasks::TaskError) -> Self {
        CronError::Tasks(Box::new(e))
    }
}

/// `Result` with [`CronError`].
pub type Result<T> = std::result::Result<T, CronError>;
