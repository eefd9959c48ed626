//! Cron for Talon: runs that start with nobody talking.
//!
//! - [`Schedule`]: `at` (one ISO-8601 instant), `every` (fixed interval on
//!   an anchored grid) and `cron` (5- or 6-field expressions in an IANA
//!   zone via `croner` + `chrono-tz`; daylight saving as OpenClaw does it:
//!   a time inside a spring-forward gap fires once, at the same offset past
//!   the shift (02:30 in a one-hour gap fires at 03:30); a fixed time inside
//!   a fall-back repeat fires once, on its first occurrence, while interval
//!   expressions keep their real cadence through both passes; see
//!   [`CronExpr::next_after`]). Bad input is a
//!   [`CronError::Invalid`] naming the field.
//! - [`CronStore`]: jobs and their run history behind one storage seam,
//!   [`CronBackend`], with two engines: SQLite (the embedded default, the
//!   shared state database, WAL, one transaction per change) and, with the
//!   `postgres` feature, PostgreSQL shared by a fleet of gateways
//!   (module `postgres`). Next-due selection is an index range scan. Both
//!   engines enforce in storage that a job runs once at a time, each
//!   schedule slot at most once (runs unique on `(job_id, slot)`), and that
//!   a run's first terminal record wins.
//! - [`CronService`]: one timer re-armed after every change (at least
//!   [`MIN_REFIRE_GAP_MS`] when already due, at most [`MAX_TIMER_DELAY_MS`]),
//!   a non-async timer callback, isolated runs through the embedder's
//!   [`AgentRunner`] with `trigger: cron`, a fresh session and the job's
//!   tools capped by its creator, OpenClaw's backoff
//!   ([`ERROR_BACKOFF_MS`]), restart recovery and catch-up (see
//!   [`CronService::start`]). A run is over at its deadline
//!   (`timeoutSeconds`): its token fires and it is recorded
//!   [`RunStatus::Timeout`].
//! - A fleet (`CronService::open_postgres`, or
//!   [`CronService::open_fleet`] over any store and [`TimerLease`]): every
//!   gateway edits jobs in the shared store, but only the holder of the
//!   `cron` lease has a timer (ttl [`DEFAULT_LEASE_TTL`], renewed every
//!   [`DEFAULT_LEASE_RENEW`]). It re-reads the due jobs from the database
//!   at least every renewal, and fires each under the lease's fencing
//!   token: the claim and the run record are one transaction that checks
//!   the token first, so a gateway that lost the lease runs nothing. A new
//!   owner marks the runs of earlier owners interrupted and never re-runs
//!   them; [`CronService::timer_lease`] says who owns the timer.
//! - [`CronQuotas`]: jobs per creating session and per agent, and the
//!   shortest recurring interval (`cron.quotas`); a job over a limit is
//!   refused with [`CronError::Quota`] naming the limit and its key.
//!
//! ```
//! use talon_cron::Schedule;
//!
//! let s = Schedule::Cron { expr: "30 9 * * *".into(), tz: Some("Europe/Berlin".into()), stagger_ms: None };
//! let now = 1_780_000_000_000; // 2026-05-28T20:26:40Z
//! let next = s.next_after(now, "job-1")?.unwrap();
//! assert_eq!(talon_cron::format_utc(next), "2026-05-29T07:30:00Z"); // 09:30 CEST
//! assert!(Schedule::Every { every_ms: 0, anchor_ms: None }.validate(now, "schedule").is_err());
//! # Ok::<(), talon_cron::CronError>(())
//! ```
//!
//! This crate does not run agents (the embedder's [`AgentRunner`] does),
//! does not deliver results (it hands the delivery target to the runner),
//! and does not assemble tool tables: [`IsolatedRun::run_context`] is the
//! policy context the embedder must use.
//! - [`CronTool`]: the model-facing `cron` tool over a [`CronService`]
//!   (status, list, get, add, update, remove, run, runs, wake), capped by
//!   its creator's tools and, in a run a cron job started, scoped to that
//!   job ([`CronToolScope`]). It lives here, not in `talon-tools`, so the
//!   tools crate never depends on the job store.
#![deny(missing_docs)]

pub use crate::clock::TokioClock;
pub use crate::config::{CronConfig, CronQuotasConfig, CronRetryConfig};
pub use crate::cron_tool::{
    CONTEXT_MARKER, ChatHistory, CronTool, CronToolScope, HistoryMessage, MAX_CONTEXT_LINE_CHARS,
    MAX_CONTEXT_MESSAGES, MAX_CONTEXT_TOTAL_CHARS, build_reminder_context,
};
pub use crate::error::{CronError, QuotaLimit, Result};
pub use crate::input::{
    Creator, JobPatch, JobSpec, MAX_NAME_CHARS, MAX_TEXT_CHARS, apply_patch, build_job, cap_tools,
    infer_delivery_from_session_key, parse_delivery, parse_payload, parse_schedule,
};
pub use crate::job::{
    CronJob, Delivery, DeliveryMode, JobState, Payload, RunRecord, RunStatus, WakeMode,
};
pub use crate::quota::{
    CronQuotas, DEFAULT_MAX_JOBS_PER_AGENT, DEFAULT_MAX_JOBS_PER_CREATOR, DEFAULT_MIN_INTERVAL_MS,
};
pub use crate::runner::{
    AgentRunner, IsolatedRun, RunFailure, RunReport, RunReportStatus, SystemEventRequest,
    is_transient_error,
};
pub use crate::schedule::{
    CronExpr, DEFAULT_TOP_OF_HOUR_STAGGER_MS, Schedule, TimeParseError, format_utc, host_time_zone,
    parse_absolute_time_ms, parse_tz, stagger_offset,
};
pub use crate::service::{
    CronOptions, CronService, CronStatus, DEFAULT_LEASE_RENEW, DEFAULT_LEASE_TTL,
    DEFAULT_RUN_TIMEOUT, DEFERRED_MISSED_DELAY_MS, ERROR_BACKOFF_MS, JobChange,
    MAX_MISSED_JOBS_PER_RESTART, MAX_TIMER_DELAY_MS, MIN_REFIRE_GAP_MS, MISSED_JOB_STAGGER_MS,
    RecoveryReport, RunNow, SCHEDULE_ERROR_LIMIT, STUCK_RUN_MS, TimerGrant, TimerLease,
    TimerLeaseStatus, TimerStats, parse_wake_mode,
};
pub use crate::store::{Admission, BeginRun, CronBackend, CronStore};
pub use crate::webhook::{WEBHOOK_ALLOWLIST_KEY, WebhookGuard};
pub use talon_tasks::{Clock, ManualClock, SystemClock};

mod clock;
mod config;
mod cron_tool;
mod error;
mod input;
mod job;
#[cfg(feature = "postgres")]
pub mod postgres;
mod quota;
mod runner;
mod schedule;
mod service;
mod store;
mod webhook;
