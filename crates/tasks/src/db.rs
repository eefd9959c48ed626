//! Opening the shared state database: WAL, a busy timeout, and a schema
//! version per component so the ledger and cron migrate independently.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};

/// The database file name under the state dir, shared by tasks and cron.
pub const DB_FILE_NAME: &str = "talon.db";

/// Open (creating if needed) the SQLite database at `path` in WAL mode with
/// foreign keys on and a 5 s busy timeout, and make sure the
/// `schema_version` table exists.
pub fn open_database(path: &Path) -> rusqlite::Result<Connection> {
    if let Some(parent) = path.parent()
        && !parent.as_os_str().is_empty()
    {
        // The open below reports the real problem if this fails.
        let _ = std::fs::create_dir_all(parent);
    }
    let conn = Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(5))?;
    // `journal_mode` returns a row; read it rather than executing.
    let _mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
    conn.execute_batch(
        "PRAGMA synchronous=NORMAL;
         PRAGMA foreign_keys=ON;
         CREATE TABLE IF NOT EXISTS schema_version (
             component TEXT PRIMARY KEY,
             version INTEGER NOT NULL
         );",
    )?;
    Ok(conn)
}

/// The schema version recorded for `component` (0 when none).
pub fn schema_version(conn: &Connection, component: &str) -> rusqlite::Result<i64> {
    Ok(conn
        .query_row(
            "SELECT version FROM schema_version WHERE component = ?1",
            params![component],
            |r| r.get(0),
        )
        .optional()?
        .unwrap_or(0))
}

/// Record `version` for `component` (inside the caller's transaction).
pub fn set_schema_version(
    conn: &Connection,
    component: &str,
    version: i64,
) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO schema_version (component, version) VALUES (?1, ?2)
         ON CONFLICT(component) DO UPDATE SET version = excluded.version",
        params![component, version],
    )?;
    Ok(())
}
