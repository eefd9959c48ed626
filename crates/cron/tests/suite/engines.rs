//! The engines the store suite runs on: each gives a fresh, empty store
//! and can reopen it (a second process, or a restart).

use talon_cron::*;

/// One engine's fresh store, kept alive with whatever it lives in.
pub(crate) struct Engine {
    pub(crate) store: CronStore,
    kind: Kind,
}

enum Kind {
    Sqlite(tempfile::TempDir),
    #[cfg(feature = "postgres")]
    Postgres {
        _db: talon_test_support::postgres::TestDb,
        pool: talon_state::PgPool,
    },
}

impl Engine {
    /// A store in a new SQLite file.
    pub(crate) fn sqlite() -> Engine {
        let dir = tempfile::tempdir().unwrap();
        let store = CronStore::open(&dir.path().join("talon.db")).unwrap();
        Engine {
            store,
            kind: Kind::Sqlite(dir),
        }
    }

    /// A store in a new database on the test PostgreSQL server.
    #[cfg(feature = "postgres")]
    pub(crate) fn postgres() -> Engine {
        let db = talon_test_support::postgres::shared_database().unwrap();
        let pool = db.pool().unwrap();
        let store = talon_cron::postgres::open_store(&pool).unwrap();
        Engine {
            store,
            kind: Kind::Postgres { _db: db, pool },
        }
    }

    /// The same store opened again.
    pub(crate) fn try_reopen(&self) -> Result<CronStore> {
        match &self.kind {
            Kind::Sqlite(dir) => CronStore::open(&dir.path().join("talon.db")),
            #[cfg(feature = "postgres")]
            Kind::Postgres { pool, .. } => talon_cron::postgres::open_store(pool),
        }
    }

    pub(crate) fn reopen(&self) -> CronStore {
        self.try_reopen().unwrap()
    }

    /// Record `version` as the store's schema, as a newer binary would.
    pub(crate) fn bump_schema(&self, version: i64) {
        match &self.kind {
            Kind::Sqlite(dir) => {
                let conn = talon_tasks::open_database(&dir.path().join("talon.db")).unwrap();
                talon_tasks::set_schema_version(&conn, "cron", version).unwrap();
            }
            #[cfg(feature = "postgres")]
            Kind::Postgres { pool, .. } => {
                let v = i32::try_from(version).unwrap();
                pool.run(move |c| {
                    c.execute(
                        "UPDATE talon_schema SET version = $1 WHERE store = 'cron'",
                        &[&v],
                    )?;
                    Ok(())
                })
                .unwrap();
            }
        }
    }
}
