//! The journal handle: validation and the in-flight map on the caller's
//! side, a bounded queue to the single writer thread, and the engine's read
//! side for `get` and `history`.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;

use tokio::sync::mpsc::Permit;
use tokio::sync::{mpsc, oneshot};

use crate::backend::JournalBackend;
use crate::error::{JournalError, Result};
use crate::inflight::{InFlight, Phase};
use crate::options::JournalOptions;
use crate::record::{CallEnd, CallRecord, CallStart, FinishAck, RecoveryReport};
use crate::sqlite::{self, SqliteBackend};
use crate::validate;
use crate::writer::{Counters, Health, Job, Writer};

/// Jobs that may wait for the writer before `finish` / `record` report
/// [`JournalError::Overloaded`].
pub const QUEUE_CAPACITY: usize = 16 * 1024;

/// Counters for metrics, from [`CallJournal::stats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JournalStats {
    /// Transactions committed by the writer.
    pub committed_batches: u64,
    /// Records written (`started` records, terminal records, whole records).
    pub committed_records: u64,
    /// Terminal records ignored because the call already had one (or had no
    /// row): the first terminal record wins.
    pub ignored_terminals: u64,
    /// Commits that failed (each is retried).
    pub failed_commits: u64,
    /// Terminal records given up on: the last handle was dropped while the
    /// disk refused writes. (While the journal is open nothing is dropped:
    /// a full queue refuses new records with
    /// [`JournalError::Overloaded`] instead.)
    pub lost_records: u64,
    /// Terminal records deleted by [`Retention`](crate::Retention) (age or
    /// size); [`CallJournal::prune`] is not counted.
    pub pruned_records: u64,
    /// Calls open in this handle: started and not yet finished, or with a
    /// terminal record queued and not yet committed.
    pub in_flight: usize,
    /// Jobs waiting for the writer.
    pub queued: usize,
}

/// A handle to the call journal. Cheap to clone (`Arc`); every clone
/// writes through the same writer thread. The journal closes when the last
/// clone is dropped: that drop waits (blocking the dropping thread briefly)
/// until the writer has committed what is queued and released the lock, so
/// the journal can be reopened at once.
#[derive(Debug, Clone)]
pub struct CallJournal {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    backend: Arc<dyn JournalBackend>,
    tx: Option<mpsc::Sender<Job>>,
    writer: Option<JoinHandle<()>>,
    /// The fleet recovery thread and what stops it (PostgreSQL only).
    recovery: Option<(std::sync::mpsc::Sender<()>, JoinHandle<()>)>,
    inflight: Arc<InFlight>,
    counters: Arc<Counters>,
    health: Arc<Health>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Closing the queue lets the writer commit what is left and stop;
        // waiting for it releases the lock before the handle is gone, so the
        // journal can be reopened straight away.
        drop(self.tx.take());
        if let Some(writer) = self.writer.take()
            && writer.join().is_err()
        {
            tracing::error!("call journal writer thread panicked");
        }
        if let Some((stop, thread)) = self.recovery.take() {
            drop(stop);
            if thread.join().is_err() {
                tracing::error!("call journal recovery thread panicked");
            }
        }
    }
}

/// Drops a call from the in-flight map unless its `started` record was
/// confirmed.
struct OpenGuard<'a> {
    inflight: &'a InFlight,
    call_id: String,
    armed: bool,
}

impl Drop for OpenGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.inflight.forget_if(&self.call_id, Phase::Open);
        }
    }
}

impl CallJournal {
    /// Open (creating if needed, file mode 0600) the journal at `path`,
    /// take its lock (`<path>.lock`), bring the schema up to date, and mark
    /// every call left in flight by a previous process `interrupted` (never
    /// re-run). Fails with [`JournalError::Locked`] while another handle or
    /// process has the journal open.
    ///
    /// Commits use [`Durability::Full`](crate::Durability::Full); see
    /// [`open_with`](Self::open_with).
    pub fn open(path: &Path) -> Result<(CallJournal, RecoveryReport)> {
        Self::open_with(path, JournalOptions::default())
    }

    /// [`open`](Self::open) with options (the durability of commits).
    pub fn open_with(
        path: &Path,
        options: JournalOptions,
    ) -> Result<(CallJournal, RecoveryReport)> {
        let (backend, created) = SqliteBackend::open(path, options.durability)?;
        Self::start(Arc::new(backend), options, created)
    }

    /// Open the journal on the fleet's PostgreSQL database as member
    /// `member_id` (the id this gateway registered with
    /// `talon_state::members` and heartbeats; several gateways share the
    /// table, each call row carries its member). Migrates the journal's
    /// tables (refusing a schema newer than this build,
    /// [`JournalError::State`] with code `schema_newer`), then marks
    /// `interrupted` the calls left in flight by members that are not live,
    /// never this member's or a live one's; that recovery runs again every
    /// `talon_state::members::LIVE_WINDOW` on a thread of the journal's
    /// own, and on demand with [`recover_departed`](Self::recover_departed).
    ///
    /// A database that cannot be reached is [`JournalError::Unavailable`]
    /// at open and later: a `started` then fails with it (the call must not
    /// run), terminal records are kept and retried, and writes resume once
    /// the pool has reconnected. [`Durability::ProcessCrash`](crate::Durability::ProcessCrash)
    /// commits with `synchronous_commit = off` (survives this gateway
    /// dying, not the database server crashing).
    #[cfg(feature = "postgres")]
    pub fn open_postgres(
        pool: &talon_state::PgPool,
        member_id: &str,
        options: JournalOptions,
    ) -> Result<(CallJournal, RecoveryReport)> {
        let (backend, created) =
            crate::postgres::PostgresBackend::open(pool, member_id, options.durability)?;
        Self::start(Arc::new(backend), options, created)
    }

    /// Mark `interrupted` the calls left in flight by fleet members that
    /// are no longer live, and report them (PostgreSQL; the gateway may call
    /// it on its heartbeat timer). A journal only this process writes (a
    /// SQLite file, recovered at open under its lock) has nothing to do.
    pub fn recover_departed(&self) -> Result<Vec<crate::InterruptedCall>> {
        if self.inner.backend.recovery_interval().is_none() {
            return Ok(Vec::new());
        }
        self.inner.backend.recover(sqlite::now_ms())
    }

    /// Recover what a previous process left in flight, apply retention once,
    /// and start the writer thread over `backend`.
    pub(crate) fn start(
        backend: Arc<dyn JournalBackend>,
        options: JournalOptions,
        created: bool,
    ) -> Result<(CallJournal, RecoveryReport)> {
        let interrupted = backend.recover(sqlite::now_ms())?;
        let report = RecoveryReport {
            interrupted,
            created,
        };
        let (tx, rx) = mpsc::channel(QUEUE_CAPACITY);
        let inflight = Arc::new(InFlight::default());
        let counters = Arc::new(Counters::default());
        let health = Arc::new(Health::default());
        let mut writer = Writer {
            backend: Arc::clone(&backend),
            rx,
            inflight: Arc::clone(&inflight),
            counters: Arc::clone(&counters),
            health: Arc::clone(&health),
            retention: options.retention,
            last_retention: None,
        };
        // The first retention check runs before the journal is handed out,
        // so what an open returns is already within the limits.
        writer.enforce_retention();
        let spawn_error = |what: &str, e: std::io::Error| JournalError::Open {
            path: backend
                .location()
                .path()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
            reason: format!("cannot start the {what} thread: {e}"),
        };
        let recovery = match backend.recovery_interval() {
            Some(every) => {
                let (stop, stopped) = std::sync::mpsc::channel();
                let engine = Arc::clone(&backend);
                let thread = std::thread::Builder::new()
                    .name("talon-journal-recovery".into())
                    .spawn(move || crate::writer::recovery_loop(engine, every, stopped))
                    .map_err(|e| spawn_error("recovery", e))?;
                Some((stop, thread))
            }
            None => None,
        };
        let handle = std::thread::Builder::new()
            .name("talon-journal".into())
            .spawn(move || writer.run())
            .map_err(|e| spawn_error("writer", e))?;
        if !report.interrupted.is_empty() {
            tracing::warn!(
                count = report.interrupted.len(),
                "call journal: calls in flight at the last stop are marked interrupted"
            );
        }
        let inner = Inner {
            backend,
            tx: Some(tx),
            writer: Some(handle),
            recovery,
            inflight,
            counters,
            health,
        };
        Ok((
            CallJournal {
                inner: Arc::new(inner),
            },
            report,
        ))
    }

    /// The journal file (`None` on PostgreSQL).
    pub fn path(&self) -> Option<&Path> {
        self.inner.backend.location().path()
    }

    fn sender(&self) -> Result<&mpsc::Sender<Job>> {
        self.inner.tx.as_ref().ok_or(JournalError::Closed)
    }

    /// Write the `started` record of a non-idempotent call and wait until
    /// it is committed (synchronous, so it survives a crash or power loss).
    /// Run the tool only after `Ok`: an error means nothing durable exists
    /// and the call must not run ([`JournalError::WriteFailed`] when the
    /// disk refused the write, [`JournalError::Unavailable`] when the
    /// database cannot be reached; both fail at once for a second after a
    /// failed commit, then are tried again). A call id already journalled is refused
    /// with [`JournalError::DuplicateCall`].
    pub async fn started(&self, start: CallStart) -> Result<()> {
        validate::check_start(&start)?;
        self.fail_fast()?;
        {
            let mut calls = self.inner.inflight.lock();
            if calls.contains_key(&start.call_id) {
                return Err(JournalError::DuplicateCall {
                    call_id: start.call_id,
                });
            }
            calls.insert(start.call_id.clone(), Phase::Open);
        }
        // Forgets the call again unless the record is confirmed, also when
        // this future is dropped half way.
        let mut guard = OpenGuard {
            inflight: &self.inner.inflight,
            call_id: start.call_id.clone(),
            armed: true,
        };
        let (reply, answer) = oneshot::channel();
        self.sender()?
            .send(Job::Start { start, reply })
            .await
            .map_err(|_| JournalError::Closed)?;
        let result = answer.await.unwrap_or(Err(JournalError::Closed));
        if result.is_ok() {
            guard.armed = false;
        }
        result
    }

    /// Queue the terminal record of a call that has a `started` record. The
    /// writer commits it straight away (in a batch); [`flush`](Self::flush)
    /// waits for that. Exactly one terminal record is kept per call id: a
    /// second one is ignored and reported as [`FinishAck::AlreadyFinished`]
    /// with the outcome that stands. A call id with no record is refused
    /// with [`JournalError::NotStarted`]. Never waits: with
    /// [`QUEUE_CAPACITY`] records already queued (the disk stalls) it fails
    /// with [`JournalError::Overloaded`]; [`finish_wait`](Self::finish_wait)
    /// waits for room instead.
    pub fn finish(&self, call_id: &str, end: CallEnd) -> Result<FinishAck> {
        validate::check_call_id(call_id)?;
        let end = validate::normalise_end(end)?;
        self.finish_checked(call_id, end, None)
    }

    /// [`finish`](Self::finish), waiting for room in the queue instead of
    /// failing with [`JournalError::Overloaded`].
    pub async fn finish_wait(&self, call_id: &str, end: CallEnd) -> Result<FinishAck> {
        validate::check_call_id(call_id)?;
        let end = validate::normalise_end(end)?;
        let permit = self
            .sender()?
            .reserve()
            .await
            .map_err(|_| JournalError::Closed)?;
        self.finish_checked(call_id, end, Some(permit))
    }

    fn finish_checked(
        &self,
        call_id: &str,
        end: CallEnd,
        mut permit: Option<Permit<'_, Job>>,
    ) -> Result<FinishAck> {
        let outcome = end.outcome;
        let job = |end| Job::Finish {
            call_id: call_id.to_owned(),
            end,
        };
        {
            let mut calls = self.inner.inflight.lock();
            match calls.get(call_id) {
                Some(Phase::Ending(first)) => return Ok(FinishAck::AlreadyFinished(*first)),
                Some(Phase::Open) => {
                    self.enqueue(permit.take(), job(end))?;
                    calls.insert(call_id.to_owned(), Phase::Ending(outcome));
                    return Ok(FinishAck::Queued);
                }
                None => {}
            }
        }
        // Not open in this handle: finished and committed already, or left
        // by an earlier process (then it is `interrupted`), or never started.
        match self.get(call_id)? {
            Some(CallRecord {
                end: Some(stored), ..
            }) => Ok(FinishAck::AlreadyFinished(stored.outcome)),
            Some(CallRecord { end: None, .. }) => {
                let mut calls = self.inner.inflight.lock();
                if let Some(Phase::Ending(first)) = calls.get(call_id) {
                    return Ok(FinishAck::AlreadyFinished(*first));
                }
                self.enqueue(permit.take(), job(end))?;
                calls.insert(call_id.to_owned(), Phase::Ending(outcome));
                Ok(FinishAck::Queued)
            }
            None => Err(JournalError::NotStarted {
                call_id: call_id.to_owned(),
            }),
        }
    }

    /// Queue the whole record (start and end at once) of a call journalled
    /// only at its end: an idempotent tool, or a call the gate blocked
    /// before anything ran. Cheap: no read, no wait. A call id this handle
    /// has open is refused ([`JournalError::DuplicateCall`]) or reported as
    /// [`FinishAck::AlreadyFinished`]; an id committed long ago is ignored
    /// by the writer (counted in [`JournalStats::ignored_terminals`]). Fails
    /// with [`JournalError::Overloaded`] when the queue is full, like
    /// [`finish`](Self::finish); [`record_wait`](Self::record_wait) waits.
    pub fn record(&self, start: CallStart, end: CallEnd) -> Result<FinishAck> {
        validate::check_start(&start)?;
        let end = validate::normalise_end(end)?;
        self.record_checked(start, end, None)
    }

    /// [`record`](Self::record), waiting for room in the queue instead of
    /// failing with [`JournalError::Overloaded`].
    pub async fn record_wait(&self, start: CallStart, end: CallEnd) -> Result<FinishAck> {
        validate::check_start(&start)?;
        let end = validate::normalise_end(end)?;
        let permit = self
            .sender()?
            .reserve()
            .await
            .map_err(|_| JournalError::Closed)?;
        self.record_checked(start, end, Some(permit))
    }

    fn record_checked(
        &self,
        start: CallStart,
        end: CallEnd,
        permit: Option<Permit<'_, Job>>,
    ) -> Result<FinishAck> {
        let mut calls = self.inner.inflight.lock();
        match calls.get(&start.call_id) {
            Some(Phase::Ending(first)) => return Ok(FinishAck::AlreadyFinished(*first)),
            Some(Phase::Open) => {
                return Err(JournalError::DuplicateCall {
                    call_id: start.call_id,
                });
            }
            None => {}
        }
        let call_id = start.call_id.clone();
        let outcome = end.outcome;
        self.enqueue(permit, Job::Record { start, end })?;
        calls.insert(call_id, Phase::Ending(outcome));
        Ok(FinishAck::Queued)
    }

    /// While the last commit failed, refuse at once what needs a commit to
    /// succeed (the writer keeps retrying and clears this when it works).
    fn fail_fast(&self) -> Result<()> {
        match self.inner.health.failure() {
            Some(failure) => Err(failure.to_error()),
            None => Ok(()),
        }
    }

    /// Send `job` with `permit`, or without waiting when there is none.
    /// Called with the in-flight map locked, so the writer cannot commit
    /// (and forget) the job before the map says it is ending.
    fn enqueue(&self, permit: Option<Permit<'_, Job>>, job: Job) -> Result<()> {
        if let Some(permit) = permit {
            permit.send(job);
            return Ok(());
        }
        self.sender()?.try_send(job).map_err(|e| match e {
            mpsc::error::TrySendError::Full(_) => JournalError::Overloaded {
                capacity: QUEUE_CAPACITY,
            },
            mpsc::error::TrySendError::Closed(_) => JournalError::Closed,
        })
    }

    /// Wait until everything queued before this call is committed. Fails
    /// with [`JournalError::WriteFailed`] while the disk refuses writes, or
    /// [`JournalError::Unavailable`] while the database cannot be reached
    /// (the queued terminal records are kept and retried).
    pub async fn flush(&self) -> Result<()> {
        self.fail_fast()?;
        let (reply, answer) = oneshot::channel();
        self.sender()?
            .send(Job::Flush { reply })
            .await
            .map_err(|_| JournalError::Closed)?;
        answer.await.unwrap_or(Err(JournalError::Closed))
    }

    /// Delete terminal records that ended before `ended_before_ms` (Unix
    /// ms) and return how many went. Calls in flight are never deleted.
    pub async fn prune(&self, ended_before_ms: u64) -> Result<u64> {
        let (reply, answer) = oneshot::channel();
        self.sender()?
            .send(Job::Prune {
                before_ms: ended_before_ms,
                reply,
            })
            .await
            .map_err(|_| JournalError::Closed)?;
        answer.await.unwrap_or(Err(JournalError::Closed))
    }

    /// The newest `limit` (at most
    /// [`MAX_HISTORY_LIMIT`](crate::MAX_HISTORY_LIMIT)) committed calls of a
    /// session, newest first in journal order (a call is placed by its
    /// `started` record, or by its whole record), in flight ones included. Records still queued are not seen; call
    /// [`flush`](Self::flush) first to read your own writes.
    pub fn history(&self, session_key: &str, limit: usize) -> Result<Vec<CallRecord>> {
        validate::check_session_key(session_key)?;
        validate::check_history_limit(limit)?;
        if limit == 0 {
            return Ok(Vec::new());
        }
        self.inner.backend.history(session_key, limit)
    }

    /// One committed call by id (`None` when there is none). Records still
    /// queued are not seen; call [`flush`](Self::flush) first.
    pub fn get(&self, call_id: &str) -> Result<Option<CallRecord>> {
        validate::check_call_id(call_id)?;
        self.inner.backend.get(call_id)
    }

    /// A session's committed calls whose caller id
    /// ([`CallStart::tool_call_id`](crate::CallStart::tool_call_id)) is
    /// `tool_call_id`, newest first, at most
    /// [`MAX_HISTORY_LIMIT`](crate::MAX_HISTORY_LIMIT) (callers choose the
    /// id, so it may repeat). This is how a client that lost its reply
    /// finds what became of its call, an `interrupted` one included: the id
    /// has its own column, which recovery never rewrites. Records still
    /// queued are not seen; call [`flush`](Self::flush) first.
    pub fn find_tool_call(&self, session_key: &str, tool_call_id: &str) -> Result<Vec<CallRecord>> {
        validate::check_session_key(session_key)?;
        validate::check_tool_call_id(tool_call_id)?;
        self.inner
            .backend
            .by_tool_call_id(session_key, tool_call_id, crate::MAX_HISTORY_LIMIT)
    }

    /// Counters for metrics.
    pub fn stats(&self) -> JournalStats {
        let c = &self.inner.counters;
        JournalStats {
            committed_batches: c.committed_batches.load(Ordering::Relaxed),
            committed_records: c.committed_records.load(Ordering::Relaxed),
            ignored_terminals: c.ignored_terminals.load(Ordering::Relaxed),
            failed_commits: c.failed_commits.load(Ordering::Relaxed),
            lost_records: c.lost_records.load(Ordering::Relaxed),
            pruned_records: c.pruned_records.load(Ordering::Relaxed),
            in_flight: self.inner.inflight.len(),
            queued: self
                .inner
                .tx
                .as_ref()
                .map_or(0, |tx| tx.max_capacity() - tx.capacity()),
        }
    }
}
