//! Versioned migrations, one sequence per store.

use crate::{PgPool, StateError};

/// The advisory lock every migration takes, so gateways starting at once
/// migrate one after the other.
const MIGRATION_LOCK: i64 = 0x7461_6c6f_6e00_0001;

impl PgPool {
    /// Bring `store`'s tables to the newest of `migrations` (version `i +
    /// 1` is `migrations[i]`, SQL that may hold several statements), in one
    /// transaction under an advisory lock. Returns the version now in the
    /// database. A database holding a newer version than this binary
    /// knows is refused ([`StateError::SchemaNewer`]) and left unchanged.
    pub fn migrate(
        &self,
        store: &'static str,
        migrations: &'static [&'static str],
    ) -> Result<u32, StateError> {
        let known = u32::try_from(migrations.len())
            .map_err(|_| StateError::query("too many migrations"))?;
        self.run(move |client| {
            let mut tx = client.transaction()?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
            tx.batch_execute(
                "CREATE TABLE IF NOT EXISTS talon_schema (
                    store TEXT PRIMARY KEY,
                    version INTEGER NOT NULL,
                    updated_at_ms BIGINT NOT NULL
                )",
            )?;
            let found: u32 = match tx.query_opt(
                "SELECT version FROM talon_schema WHERE store = $1",
                &[&store],
            )? {
                Some(row) => u32::try_from(row.get::<_, i32>(0))
                    .map_err(|_| StateError::query("a negative schema version"))?,
                None => 0,
            };
            if found > known {
                return Err(StateError::SchemaNewer {
                    store: store.to_owned(),
                    found,
                    known,
                });
            }
            for (n, sql) in migrations.iter().enumerate().skip(found as usize) {
                tx.batch_execute(sql).map_err(|e| {
                    StateError::query(format!("migration {} of store `{store}`: {e}", n + 1))
                })?;
            }
            if found < known {
                let version = i32::try_from(known)
                    .map_err(|_| StateError::query("schema version out of range"))?;
                tx.execute(
                    "INSERT INTO talon_schema (store, version, updated_at_ms)
                     VALUES ($1, $2, (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT)
                     ON CONFLICT (store) DO UPDATE SET version = EXCLUDED.version,
                         updated_at_ms = EXCLUDED.updated_at_ms",
                    &[&store, &version],
                )?;
                tracing::info!(store, from = found, to = known, "state schema migrated");
            }
            tx.commit()?;
            Ok(known)
        })
    }
}
