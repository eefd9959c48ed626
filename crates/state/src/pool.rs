//! A pool of database connections, each owned by a worker thread.
//!
//! The `postgres` driver blocks on a runtime of its own, which must never
//! run on a thread that drives tokio tasks. So every connection lives on a
//! worker thread of the pool, and [`PgPool::run`] hands the work over and
//! waits for the answer: callers block like they do on SQLite today, from
//! any thread, inside tokio or not.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use std::collections::HashMap;

use postgres::error::SqlState;
use postgres::types::ToSql;
use postgres::{Client, NoTls, Row, Statement};

use crate::{PgConfig, StateError};

/// First wait before reconnecting after a failure; doubled each time.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// Longest wait between reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(2);
/// Slack on top of the statement and connect timeouts before a caller
/// stops waiting for a worker.
const REPLY_SLACK: Duration = Duration::from_secs(5);
/// A connection idle longer than this is checked before use.
const IDLE_CHECK_AFTER: Duration = Duration::from_secs(1);
/// How long that check may take.
const VALIDITY_TIMEOUT: Duration = Duration::from_secs(2);

type Job = Box<dyn FnOnce(&mut Slot) + Send>;

/// The most statements one connection keeps prepared; past it the cache
/// starts over (the stores' statements are a fixed set well below it).
const MAX_CACHED_STATEMENTS: usize = 256;

/// A pooled connection: the driver's [`Client`] (reached through `Deref`
/// for transactions, typed queries and the rest) and the statements
/// already prepared on it. [`Conn::query`], [`Conn::execute`],
/// [`Conn::query_one`] and [`Conn::query_opt`] prepare their SQL once per
/// connection and then run it in one round trip, where the driver's own
/// methods given SQL text prepare it again on every call (two round
/// trips). A statement from [`Conn::prepared`] may also be run inside a
/// transaction of the same connection.
pub struct Conn {
    client: Client,
    statements: HashMap<String, Statement>,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn")
            .field("statements", &self.statements.len())
            .finish_non_exhaustive()
    }
}

impl std::ops::Deref for Conn {
    type Target = Client;
    fn deref(&self) -> &Client {
        &self.client
    }
}

impl std::ops::DerefMut for Conn {
    fn deref_mut(&mut self) -> &mut Client {
        &mut self.client
    }
}

impl Conn {
    /// `sql`, prepared on this connection on first use.
    pub fn prepared(&mut self, sql: &str) -> Result<Statement, postgres::Error> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.client.prepare(sql)?;
        if self.statements.len() >= MAX_CACHED_STATEMENTS {
            self.statements.clear();
        }
        self.statements.insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }

    /// Run `sql`'s cached statement with `f`. A statement the server no
    /// longer accepts as prepared (a migration changed what it returns, or
    /// the server forgot it) is dropped from the cache on that error, so
    /// the next call prepares it again.
    fn with_statement<T>(
        &mut self,
        sql: &str,
        f: impl FnOnce(&mut Client, &Statement) -> Result<T, postgres::Error>,
    ) -> Result<T, postgres::Error> {
        let statement = self.prepared(sql)?;
        let result = f(&mut self.client, &statement);
        if let Err(e) = &result
            && e.code().is_some_and(|c| {
                *c == SqlState::FEATURE_NOT_SUPPORTED || *c == SqlState::INVALID_SQL_STATEMENT_NAME
            })
        {
            self.statements.remove(sql);
        }
        result
    }

    /// The rows of `sql` (prepared once per connection).
    pub fn query(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, postgres::Error> {
        self.with_statement(sql, |c, s| c.query(s, params))
    }

    /// The one row of `sql`; an error when there is none or more.
    pub fn query_one(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Row, postgres::Error> {
        self.with_statement(sql, |c, s| c.query_one(s, params))
    }

    /// The row of `sql`, if any; an error when there are more.
    pub fn query_opt(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, postgres::Error> {
        self.with_statement(sql, |c, s| c.query_opt(s, params))
    }

    /// Run `sql`; the number of rows it changed.
    pub fn execute(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, postgres::Error> {
        self.with_statement(sql, |c, s| c.execute(s, params))
    }

    /// The driver's client, for a helper generic over
    /// [`postgres::GenericClient`].
    pub fn client(&mut self) -> &mut Client {
        &mut self.client
    }
}

/// Pooled connections to one database; cheap to clone, every clone is the
/// same pool. The workers end when the last clone is dropped.
#[derive(Clone)]
pub struct PgPool {
    inner: Arc<Inner>,
}

struct Inner {
    jobs: Mutex<Sender<Job>>,
    target: String,
    reply_limit: Duration,
}

impl std::fmt::Debug for PgPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgPool")
            .field("target", &self.inner.target)
            .finish_non_exhaustive()
    }
}

/// One worker's connection and its reconnection state.
struct Slot {
    config: postgres::Config,
    statement_timeout: Duration,
    client: Option<Conn>,
    next_attempt: Instant,
    backoff: Duration,
    last_used: Instant,
}

impl Slot {
    fn client(&mut self) -> Result<&mut Conn, StateError> {
        if self.client.as_ref().is_some_and(|c| c.is_closed()) {
            self.client = None;
        }
        // The sync driver notices a connection the server dropped (a
        // restart, a failover) only when it next uses it: after an idle
        // spell, check it first, so work is not lost to a dead socket.
        if self.last_used.elapsed() > IDLE_CHECK_AFTER
            && let Some(client) = self.client.as_mut()
            && client.is_valid(VALIDITY_TIMEOUT).is_err()
        {
            tracing::debug!("a pooled state connection was dead after an idle spell; reconnecting");
            self.client = None;
        }
        self.last_used = Instant::now();
        if self.client.is_none() {
            let now = Instant::now();
            if now < self.next_attempt {
                return Err(StateError::unavailable(format!(
                    "reconnecting; next attempt in {} ms",
                    (self.next_attempt - now).as_millis()
                )));
            }
            match self.connect() {
                Ok(client) => {
                    self.backoff = FIRST_BACKOFF;
                    self.client = Some(Conn {
                        client,
                        statements: HashMap::new(),
                    });
                }
                Err(e) => {
                    self.next_attempt = Instant::now() + self.backoff;
                    self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
                    return Err(e);
                }
            }
        }
        self.client
            .as_mut()
            .ok_or_else(|| StateError::unavailable("no connection"))
    }

    fn connect(&self) -> Result<Client, StateError> {
        let mut client = self
            .config
            .connect(NoTls)
            .map_err(|e| StateError::unavailable(format!("cannot connect: {e}")))?;
        // Every commit waits for its WAL flush, whatever the server's
        // default (a store that wants less says so per transaction).
        client
            .batch_execute(&format!(
                "SET statement_timeout = {}; SET synchronous_commit = on",
                self.statement_timeout.as_millis()
            ))
            .map_err(StateError::from)?;
        tracing::debug!("state database connection opened");
        Ok(client)
    }
}

fn worker(jobs: Arc<Mutex<Receiver<Job>>>, mut slot: Slot) {
    loop {
        let job = {
            let rx = jobs.lock().unwrap_or_else(PoisonError::into_inner);
            rx.recv()
        };
        match job {
            Ok(job) => job(&mut slot),
            // Every pool handle is gone.
            Err(_) => return,
        }
    }
}

impl PgPool {
    /// Start the pool's workers, check the database answers, and bring the
    /// foundation's own tables (schema versions, leases, members) up to
    /// date. A database that cannot be reached is
    /// [`StateError::Unavailable`]; a bad URL is [`StateError::Config`].
    pub fn connect(config: PgConfig) -> Result<PgPool, StateError> {
        let driver = config.parse()?;
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        for n in 0..config.pool_size {
            let slot = Slot {
                config: driver.clone(),
                statement_timeout: config.statement_timeout,
                client: None,
                next_attempt: Instant::now(),
                backoff: FIRST_BACKOFF,
                last_used: Instant::now(),
            };
            let rx = Arc::clone(&rx);
            std::thread::Builder::new()
                .name(format!("talon-pg-{n}"))
                .spawn(move || worker(rx, slot))
                .map_err(|e| StateError::unavailable(format!("cannot start a pool thread: {e}")))?;
        }
        let pool = PgPool {
            inner: Arc::new(Inner {
                jobs: Mutex::new(tx),
                target: config.target(),
                reply_limit: config.connect_timeout + config.statement_timeout + REPLY_SLACK,
            }),
        };
        pool.run(|c| {
            c.simple_query("SELECT 1")
                .map(drop)
                .map_err(StateError::from)
        })?;
        pool.migrate("state", crate::STATE_MIGRATIONS)?;
        tracing::info!(target = %pool.inner.target, "state database connected");
        Ok(pool)
    }

    /// Where the pool points, without credentials.
    pub fn target(&self) -> &str {
        &self.inner.target
    }

    /// Run `f` on a pooled connection (its statements prepared once, see
    /// [`Conn`]), on the pool's worker thread, and wait for its answer. A lost connection is dropped and reopened with
    /// backoff by a later call; meanwhile calls fail with
    /// [`StateError::Unavailable`]. A caller never waits longer than the
    /// connect and statement timeouts plus a few seconds.
    pub fn run<T, F>(&self, f: F) -> Result<T, StateError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Conn) -> Result<T, StateError> + Send + 'static,
    {
        let (reply, answer): (SyncSender<Result<T, StateError>>, _) = mpsc::sync_channel(1);
        let job: Job = Box::new(move |slot: &mut Slot| {
            let result = match slot.client() {
                Ok(client) => f(client),
                Err(e) => Err(e),
            };
            if result.as_ref().is_err_and(StateError::is_unavailable)
                && slot.client.as_ref().is_some_and(|c| c.is_closed())
            {
                slot.client = None;
            }
            // The caller may have stopped waiting.
            let _ = reply.send(result);
        });
        self.inner
            .jobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .send(job)
            .map_err(|_| StateError::unavailable("the pool's workers have stopped"))?;
        match answer.recv_timeout(self.inner.reply_limit) {
            Ok(result) => result,
            Err(RecvTimeoutError::Timeout) => Err(StateError::unavailable(format!(
                "no answer from the state database within {} s",
                self.inner.reply_limit.as_secs()
            ))),
            Err(RecvTimeoutError::Disconnected) => Err(StateError::unavailable(
                "a pool worker stopped while running the statement",
            )),
        }
    }
}
