//! The single writer thread: it writes every call through the engine
//! ([`JournalBackend`]), takes jobs from a bounded queue and commits
//! whatever has queued up as one transaction (group commit), so a burst of
//! calls costs one sync (or one round trip), not one per call. Batching,
//! retry, fail-fast health and retention live here once, for every engine.
//! Where the database is shared by a fleet, a second thread recovers the
//! calls of members that have gone, on a timer ([`recovery_loop`]).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use crate::backend::{JournalBackend, Write};
use crate::error::{JournalError, Result};
use crate::inflight::{InFlight, Phase};
use crate::options::Retention;
use crate::record::{CallEnd, CallStart};

/// Most jobs committed in one transaction.
pub(crate) const MAX_BATCH: usize = 1024;
const FIRST_BACKOFF: Duration = Duration::from_millis(50);
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// One unit of work for the writer.
#[derive(Debug)]
pub(crate) enum Job {
    Start {
        start: CallStart,
        reply: oneshot::Sender<Result<()>>,
    },
    Finish {
        call_id: String,
        end: CallEnd,
    },
    Record {
        start: CallStart,
        end: CallEnd,
    },
    Flush {
        reply: oneshot::Sender<Result<()>>,
    },
    Prune {
        before_ms: u64,
        reply: oneshot::Sender<Result<u64>>,
    },
}

/// Counters the writer keeps; read with [`CallJournal::stats`](crate::CallJournal::stats).
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) committed_batches: AtomicU64,
    pub(crate) committed_records: AtomicU64,
    pub(crate) ignored_terminals: AtomicU64,
    pub(crate) failed_commits: AtomicU64,
    pub(crate) lost_records: AtomicU64,
    pub(crate) pruned_records: AtomicU64,
}

/// What a job did inside a committed transaction.
enum JobResult {
    Start(Result<()>),
    Terminal,
    Flush,
    Prune(u64),
}

/// Why a commit failed, kept so that every job of the batch (and every
/// caller while it lasts) gets the same typed error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The database cannot be reached ([`JournalError::Unavailable`]).
    Unavailable(String),
    /// The database refused the write ([`JournalError::WriteFailed`]).
    Refused(String),
}

impl Failure {
    pub(crate) fn of(error: &JournalError) -> Failure {
        match error {
            JournalError::Unavailable { reason } => Failure::Unavailable(reason.clone()),
            JournalError::Storage { source, .. } => Failure::Refused(source.to_string()),
            other => Failure::Refused(other.to_string()),
        }
    }

    pub(crate) fn to_error(&self) -> JournalError {
        match self {
            Failure::Unavailable(reason) => JournalError::Unavailable {
                reason: reason.clone(),
            },
            Failure::Refused(reason) => JournalError::WriteFailed {
                reason: reason.clone(),
            },
        }
    }
}

/// How long after a failed commit `started` and `flush` fail at once
/// without asking the writer. Past it the next one is tried for real, so
/// the journal heals even when no terminal record is left to retry (the
/// database came back, space was freed).
pub(crate) const FAIL_FAST_FOR: Duration = Duration::from_secs(1);

/// Whether the last commit failed, and why; `started` and `flush` fail fast
/// for [`FAIL_FAST_FOR`] after it did.
#[derive(Debug, Default)]
pub(crate) struct Health {
    failing: AtomicBool,
    failure: Mutex<Option<(Failure, Instant)>>,
}

impl Health {
    /// `Some(failure)` while a commit failed less than [`FAIL_FAST_FOR`] ago.
    pub(crate) fn failure(&self) -> Option<Failure> {
        if !self.failing.load(Ordering::Acquire) {
            return None;
        }
        self.failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .filter(|(_, at)| at.elapsed() < FAIL_FAST_FOR)
            .map(|(failure, _)| failure.clone())
    }

    fn set_failed(&self, failure: Failure) {
        *self.failure.lock().unwrap_or_else(PoisonError::into_inner) =
            Some((failure, Instant::now()));
        self.failing.store(true, Ordering::Release);
    }

    fn set_ok(&self) {
        self.failing.store(false, Ordering::Release);
    }
}

pub(crate) struct Writer {
    pub(crate) backend: Arc<dyn JournalBackend>,
    pub(crate) rx: mpsc::Receiver<Job>,
    pub(crate) inflight: Arc<InFlight>,
    pub(crate) counters: Arc<Counters>,
    pub(crate) health: Arc<Health>,
    pub(crate) retention: Retention,
    pub(crate) last_retention: Option<Instant>,
}

impl Writer {
    pub(crate) fn run(mut self) {
        let mut retry: Vec<Job> = Vec::new();
        let mut backoff = FIRST_BACKOFF;
        let mut open = true;
        while open || !retry.is_empty() {
            // Terminal records that failed are retried first. While there
            // are `MAX_BATCH` of them nothing new is taken, so the queue
            // fills and callers see `Overloaded` (or wait) instead of
            // records being dropped.
            let mut batch = std::mem::take(&mut retry);
            if batch.is_empty() {
                match self.rx.blocking_recv() {
                    Some(job) => batch.push(job),
                    None => break,
                }
            } else {
                std::thread::sleep(backoff);
            }
            while batch.len() < MAX_BATCH {
                match self.rx.try_recv() {
                    Ok(job) => batch.push(job),
                    Err(mpsc::error::TryRecvError::Empty) => break,
                    Err(mpsc::error::TryRecvError::Disconnected) => {
                        open = false;
                        break;
                    }
                }
            }
            match self.commit(&batch) {
                Ok(done) => {
                    if backoff != FIRST_BACKOFF {
                        tracing::info!("call journal writes again");
                    }
                    backoff = FIRST_BACKOFF;
                    self.health.set_ok();
                    self.reply(batch, done);
                    self.enforce_retention();
                }
                Err(e) => {
                    self.counters.failed_commits.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(error = %e, jobs = batch.len(), "call journal commit failed; retrying terminal records");
                    let failure = Failure::of(&e);
                    self.health.set_failed(failure.clone());
                    retry = self.fail(batch, &failure);
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    if !open {
                        // Closing: one last attempt was made; what is left is lost.
                        // Calls with a `started` record are marked interrupted at next open.
                        let lost = retry.len() as u64;
                        if lost > 0 {
                            self.counters
                                .lost_records
                                .fetch_add(lost, Ordering::Relaxed);
                            tracing::error!(
                                lost,
                                "call journal closed with unwritten terminal records"
                            );
                        }
                        break;
                    }
                }
            }
        }
    }

    /// Apply the retention limits when a check is due (at open, then at
    /// most once per `check_every`, after a commit). A failure is logged
    /// and retried at the next check; it never fails a call.
    pub(crate) fn enforce_retention(&mut self) {
        let due = self
            .last_retention
            .is_none_or(|t| t.elapsed() >= self.retention.check_every);
        if !due {
            return;
        }
        self.last_retention = Some(Instant::now());
        match self.apply_retention() {
            Ok(0) => {}
            Ok(n) => {
                self.counters.pruned_records.fetch_add(n, Ordering::Relaxed);
                tracing::debug!(
                    deleted = n,
                    "call journal retention deleted old terminal records"
                );
            }
            Err(e) => {
                tracing::warn!(error = %e, "call journal retention failed; it is retried at the next check");
            }
        }
    }

    /// Delete terminal records past the age limit, then the oldest ones
    /// (read-only and refused calls first) while the live data is over the
    /// size limit, and give the freed pages back. Calls in flight have no
    /// terminal record and are never touched.
    fn apply_retention(&mut self) -> Result<u64> {
        let mut deleted = 0;
        if let Some(age) = self.retention.max_age {
            let age_ms = u64::try_from(age.as_millis()).unwrap_or(u64::MAX);
            let before_ms = crate::sqlite::now_ms().saturating_sub(age_ms);
            deleted += self
                .backend
                .apply(&[Write::Prune { before_ms }])?
                .first()
                .copied()
                .unwrap_or(0);
        }
        if let Some(max) = self.retention.max_bytes
            && self.backend.live_bytes()? > max
        {
            // Down to 90%, so a journal at its limit is not trimmed on
            // every check.
            let target = max - max / 10;
            'classes: for compactable_only in [true, false] {
                // Deleting rows frees whole pages only; a few rounds reach
                // the target even when pages were partly filled.
                for _ in 0..16 {
                    let live = self.backend.live_bytes()?;
                    if live <= target {
                        break 'classes;
                    }
                    let rows = self.backend.row_count()?.max(1);
                    let per_row = (live / rows).max(1);
                    let want = (live - target).div_ceil(per_row).max(1);
                    let n = self
                        .backend
                        .delete_oldest_terminal(want, compactable_only)?;
                    deleted += n;
                    if n == 0 {
                        continue 'classes;
                    }
                    // `live_bytes` counts free pages once they are freed:
                    // vacuum so the next round sees what is left.
                    self.backend.shrink()?;
                }
            }
        }
        if deleted > 0 {
            self.backend.shrink()?;
        }
        Ok(deleted)
    }

    /// Run every job of `batch` in one transaction.
    fn commit(&mut self, batch: &[Job]) -> Result<Vec<JobResult>> {
        let writes: Vec<Write<'_>> = batch
            .iter()
            .filter_map(|job| match job {
                Job::Start { start, .. } => Some(Write::Start(start)),
                Job::Finish { call_id, end } => Some(Write::Finish { call_id, end }),
                Job::Record { start, end } => Some(Write::Record { start, end }),
                Job::Prune { before_ms, .. } => Some(Write::Prune {
                    before_ms: *before_ms,
                }),
                Job::Flush { .. } => None,
            })
            .collect();
        let mut changed = self.backend.apply(&writes)?.into_iter();
        let mut results = Vec::with_capacity(batch.len());
        let mut ignored = 0u64;
        let mut written = 0u64;
        for job in batch {
            if matches!(job, Job::Flush { .. }) {
                results.push(JobResult::Flush);
                continue;
            }
            let n = changed.next().unwrap_or(0);
            let result = match job {
                Job::Start { start, .. } => {
                    if n == 1 {
                        written += 1;
                        JobResult::Start(Ok(()))
                    } else {
                        JobResult::Start(Err(JournalError::DuplicateCall {
                            call_id: start.call_id.clone(),
                        }))
                    }
                }
                Job::Finish { call_id, .. } => {
                    if n == 1 {
                        written += 1;
                    } else {
                        ignored += 1;
                        tracing::debug!(
                            call_id,
                            "terminal record ignored: the call already has one, or has no row"
                        );
                    }
                    JobResult::Terminal
                }
                Job::Record { start, .. } => {
                    if n == 1 {
                        written += 1;
                    } else {
                        ignored += 1;
                        tracing::debug!(
                            call_id = start.call_id,
                            "whole record ignored: the call id is already journalled"
                        );
                    }
                    JobResult::Terminal
                }
                Job::Prune { .. } => JobResult::Prune(n),
                Job::Flush { .. } => JobResult::Flush,
            };
            results.push(result);
        }
        self.counters
            .committed_batches
            .fetch_add(1, Ordering::Relaxed);
        self.counters
            .committed_records
            .fetch_add(written, Ordering::Relaxed);
        self.counters
            .ignored_terminals
            .fetch_add(ignored, Ordering::Relaxed);
        Ok(results)
    }

    /// Forget the batch's finished calls, then answer its jobs (in that
    /// order, so whoever a flush wakes sees the in-flight map up to date).
    fn reply(&self, batch: Vec<Job>, results: Vec<JobResult>) {
        self.inflight
            .forget_committed(batch.iter().filter_map(|job| match job {
                Job::Finish { call_id, .. } => Some(call_id.as_str()),
                Job::Record { start, .. } => Some(start.call_id.as_str()),
                Job::Start { .. } | Job::Flush { .. } | Job::Prune { .. } => None,
            }));
        for (job, result) in batch.into_iter().zip(results) {
            match (job, result) {
                (Job::Start { reply, .. }, JobResult::Start(r)) => {
                    // The caller may have gone away; the record stands.
                    let _ = reply.send(r);
                }
                (Job::Flush { reply }, _) => {
                    let _ = reply.send(Ok(()));
                }
                (Job::Prune { reply, .. }, JobResult::Prune(n)) => {
                    let _ = reply.send(Ok(n));
                }
                // Terminal records need no answer. A start or prune always
                // has its own kind of result; a dropped reply reads as
                // `Closed` to its caller.
                (
                    Job::Finish { .. } | Job::Record { .. } | Job::Start { .. } | Job::Prune { .. },
                    _,
                ) => {}
            }
        }
    }

    /// The batch was rolled back: refuse the `started` records (their calls
    /// must not run), fail flushes and prunes, keep terminal records to retry.
    fn fail(&self, batch: Vec<Job>, failure: &Failure) -> Vec<Job> {
        let mut keep = Vec::new();
        for job in batch {
            match job {
                Job::Start { start, reply } => {
                    self.inflight.forget_if(&start.call_id, Phase::Open);
                    let _ = reply.send(Err(failure.to_error()));
                }
                Job::Flush { reply } => {
                    let _ = reply.send(Err(failure.to_error()));
                }
                Job::Prune { reply, .. } => {
                    let _ = reply.send(Err(failure.to_error()));
                }
                job @ (Job::Finish { .. } | Job::Record { .. }) => keep.push(job),
            }
        }
        keep
    }
}

/// Recover the calls of fleet members that have gone, every `every`, until
/// `stop`'s sender is dropped (the journal closes). A failure is logged
/// and retried at the next tick; it never fails a call.
pub(crate) fn recovery_loop(
    backend: Arc<dyn JournalBackend>,
    every: Duration,
    stop: std::sync::mpsc::Receiver<()>,
) {
    loop {
        match stop.recv_timeout(every) {
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
        }
        match backend.recover(crate::sqlite::now_ms()) {
            Ok(calls) if calls.is_empty() => {}
            Ok(calls) => tracing::warn!(
                count = calls.len(),
                "call journal: calls of fleet members that stopped are marked interrupted"
            ),
            Err(e) => {
                tracing::warn!(error = %e, "call journal recovery failed; it is retried at the next check");
            }
        }
    }
}
