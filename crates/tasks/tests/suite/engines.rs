//! The storage engines every ledger test runs on: SQLite always, and
//! PostgreSQL with the `postgres` feature (a fresh database on the test
//! process's private server; a missing server is a failure naming the fix,
//! never a skip).

use std::sync::Arc;

use talon_tasks::{Clock, TaskLedger};

/// One engine's storage for one test.
pub(crate) trait Engine {
    /// A new ledger on this test's storage: a reopen, or another process
    /// (another gateway) on the same database.
    fn open(&self, clock: Arc<dyn Clock>) -> TaskLedger;

    /// Overwrite a stored task's persisted JSON with `data` (a corrupt row).
    fn corrupt(&self, task_id: &str, data: &str);
}

/// A SQLite file in a temporary directory.
pub(crate) struct Sqlite {
    dir: tempfile::TempDir,
}

pub(crate) fn sqlite() -> Sqlite {
    Sqlite {
        dir: tempfile::tempdir().unwrap(),
    }
}

impl Engine for Sqlite {
    fn open(&self, clock: Arc<dyn Clock>) -> TaskLedger {
        TaskLedger::open_with_clock(&self.dir.path().join("talon.db"), clock).unwrap()
    }

    fn corrupt(&self, task_id: &str, data: &str) {
        let conn = talon_tasks::open_database(&self.dir.path().join("talon.db")).unwrap();
        conn.execute(
            "UPDATE tasks SET data = ?2 WHERE task_id = ?1",
            [task_id, data],
        )
        .unwrap();
    }
}

/// A fresh database on the test process's PostgreSQL server; each
/// [`Engine::open`] is a new pool, as another gateway would have.
pub(crate) struct Postgres {
    db: talon_test_support::postgres::TestDb,
}

pub(crate) fn postgres() -> Postgres {
    Postgres {
        db: talon_test_support::postgres::shared_database().unwrap(),
    }
}

impl Postgres {
    pub(crate) fn pool(&self) -> talon_state::PgPool {
        talon_state::PgPool::connect(self.db.config().with_pool_size(2)).unwrap()
    }
}

impl Engine for Postgres {
    fn open(&self, clock: Arc<dyn Clock>) -> TaskLedger {
        TaskLedger::open_postgres_with_clock(&self.pool(), clock).unwrap()
    }

    fn corrupt(&self, task_id: &str, data: &str) {
        let (id, data) = (task_id.to_owned(), data.to_owned());
        self.pool()
            .run(move |c| {
                c.execute(
                    "UPDATE tasks SET data = $2 WHERE task_id = $1",
                    &[&id, &data],
                )?;
                Ok(())
            })
            .unwrap();
    }
}

/// Generate one `#[test]` per engine for each named test body
/// (`fn name(engine: &dyn Engine)`): `sqlite::name`, `postgres::name`.
macro_rules! on_every_engine {
    ($($name:ident),+ $(,)?) => {
        mod sqlite {
            $(
                #[test]
                fn $name() {
                    super::$name(&$crate::suite::engines::sqlite());
                }
            )+
        }
        mod postgres {
            $(
                #[test]
                fn $name() {
                    super::$name(&$crate::suite::engines::postgres());
                }
            )+
        }
    };
}
pub(crate) use on_every_engine;
