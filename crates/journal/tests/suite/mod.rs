use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use talon_journal::{
    CallEnd, CallJournal, CallStart, JournalError, JournalOptions, Outcome, RecoveryReport,
    params_digest,
};

/// Run a store test on each engine: `on_each_engine!(name)` for
/// `async fn name(store: Store)` (a current-thread runtime),
/// `on_each_engine!(name, threads = N)` for a multi-thread one,
/// `on_each_engine!(sync name)` for `fn name(store: Store)`. Each engine
/// gets its own test, `name::sqlite` and `name::postgres`, so a filter
/// picks one engine and a failure names it.
macro_rules! on_each_engine {
    ($name:ident $(, threads = $threads:expr)?) => {
        mod $name {
            #[test]
            fn sqlite() {
                crate::suite::run_async(crate::suite::Engine::Sqlite, 0 $(+ $threads)?, super::$name);
            }
            #[cfg(feature = "postgres")]
            #[test]
            fn postgres() {
                crate::suite::run_async(crate::suite::Engine::Postgres, 0 $(+ $threads)?, super::$name);
            }
        }
    };
    (sync $name:ident) => {
        mod $name {
            #[test]
            fn sqlite() {
                super::$name(crate::suite::Store::new(crate::suite::Engine::Sqlite));
            }
            #[cfg(feature = "postgres")]
            #[test]
            fn postgres() {
                super::$name(crate::suite::Store::new(crate::suite::Engine::Postgres));
            }
        }
    };
}

mod concurrency;
mod disk_full;
#[cfg(feature = "postgres")]
mod fleet;
mod lifecycle;
mod reader;
mod recovery;
mod refusals;
mod retention;

/// The engines a store test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Engine {
    /// A SQLite file in a temp dir.
    Sqlite,
    /// A fresh database on the test process's PostgreSQL server.
    #[cfg(feature = "postgres")]
    Postgres,
}

/// Build the store outside any runtime (the PostgreSQL helpers block),
/// then run `test` on a runtime (`threads` 0: current-thread).
pub(crate) fn run_async<F, Fut>(engine: Engine, threads: usize, test: F)
where
    F: FnOnce(Store) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let store = Store::new(engine);
    let keep = store.clone();
    let rt = if threads == 0 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_all()
            .build()
    }
    .unwrap();
    rt.block_on(test(store));
    drop(rt);
    drop(keep);
}

/// One journal's storage on one engine, opened as often as a test likes
/// (each open is a new process as far as recovery goes: on PostgreSQL a
/// new fleet member id that never registered, so it counts as gone).
#[derive(Clone)]
pub(crate) struct Store {
    inner: Arc<StoreInner>,
}

struct StoreInner {
    engine: Engine,
    dir: tempfile::TempDir,
    opens: AtomicU32,
    #[cfg(feature = "postgres")]
    pg: Option<(talon_test_support::postgres::TestDb, talon_state::PgPool)>,
}

impl Store {
    pub(crate) fn new(engine: Engine) -> Store {
        let dir = tempfile::tempdir().unwrap();
        #[cfg(feature = "postgres")]
        let pg = match engine {
            Engine::Postgres => {
                let db = talon_test_support::postgres::shared_database().unwrap();
                let pool = db.pool().unwrap();
                Some((db, pool))
            }
            Engine::Sqlite => None,
        };
        Store {
            inner: Arc::new(StoreInner {
                engine,
                dir,
                opens: AtomicU32::new(0),
                #[cfg(feature = "postgres")]
                pg,
            }),
        }
    }

    pub(crate) fn engine(&self) -> Engine {
        self.inner.engine
    }

    /// The SQLite file (also a scratch dir path on PostgreSQL).
    pub(crate) fn path(&self) -> PathBuf {
        journal_path(self.inner.dir.path())
    }

    pub(crate) fn open(&self) -> Result<(CallJournal, RecoveryReport), JournalError> {
        self.open_with(JournalOptions::default())
    }

    pub(crate) fn open_with(
        &self,
        options: JournalOptions,
    ) -> Result<(CallJournal, RecoveryReport), JournalError> {
        let n = self.inner.opens.fetch_add(1, Ordering::Relaxed);
        match self.inner.engine {
            Engine::Sqlite => {
                let _ = n;
                CallJournal::open_with(&self.path(), options)
            }
            #[cfg(feature = "postgres")]
            Engine::Postgres => {
                CallJournal::open_postgres(self.pool(), &format!("test-member-{n}"), options)
            }
        }
    }

    /// The journal's table on this engine.
    pub(crate) fn table(&self) -> &'static str {
        match self.inner.engine {
            Engine::Sqlite => "calls",
            #[cfg(feature = "postgres")]
            Engine::Postgres => "journal_calls",
        }
    }

    /// Run `sql` on an independent connection (`{calls}` stands for the
    /// table); the rows it changed, or the database's error as text.
    pub(crate) fn execute(&self, sql: &str) -> Result<u64, String> {
        let sql = sql.replace("{calls}", self.table());
        match self.inner.engine {
            Engine::Sqlite => raw(&self.path())
                .execute(&sql, [])
                .map(|n| n as u64)
                .map_err(|e| e.to_string()),
            #[cfg(feature = "postgres")]
            Engine::Postgres => self
                .pool()
                .run(move |client| Ok(client.execute(sql.as_str(), &[])))
                .unwrap()
                .map_err(|e| match e.as_db_error() {
                    Some(db) => db.message().to_owned(),
                    None => e.to_string(),
                }),
        }
    }

    /// Rows matching `condition` (SQL; `true` for all), as committed:
    /// read on an independent connection.
    pub(crate) fn count(&self, condition: &str) -> i64 {
        let sql = format!("SELECT COUNT(*) FROM {} WHERE {condition}", self.table());
        match self.inner.engine {
            Engine::Sqlite => raw(&self.path()).query_row(&sql, [], |r| r.get(0)).unwrap(),
            #[cfg(feature = "postgres")]
            Engine::Postgres => self
                .pool()
                .run(move |client| Ok(client.query_one(sql.as_str(), &[])))
                .unwrap()
                .unwrap()
                .get::<_, i64>(0),
        }
    }

    pub(crate) fn rows(&self) -> i64 {
        self.count("true")
    }

    /// The pool on the test database (PostgreSQL only).
    #[cfg(feature = "postgres")]
    pub(crate) fn pool(&self) -> &talon_state::PgPool {
        &self.inner.pg.as_ref().unwrap().1
    }
}

pub(crate) fn journal_path(dir: &Path) -> PathBuf {
    dir.join("state").join("journal.sqlite")
}

/// A minute ago, in Unix ms: well inside the default retention (30 days),
/// so reopening a journal in a test keeps its records.
pub(crate) fn recent_ms() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    u64::try_from(now.as_millis()).unwrap() - 60_000
}

pub(crate) fn start(call_id: &str, session: &str, tool: &str) -> CallStart {
    CallStart {
        call_id: call_id.into(),
        session_key: session.into(),
        agent_id: "main".into(),
        tool: tool.into(),
        params_digest: params_digest(&serde_json::json!({ "marker": call_id })),
        at_ms: recent_ms(),
        tool_call_id: Some(format!("tc-{call_id}")),
    }
}

pub(crate) fn end(outcome: Outcome, summary: &str) -> CallEnd {
    CallEnd {
        outcome,
        summary: summary.into(),
        at_ms: recent_ms() + 500,
        duration_us: 500_000,
    }
}

/// A second, independent connection: what it sees is committed.
pub(crate) fn raw(path: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(path).unwrap()
}
