//! A grant store in a SQLite database under the state directory, so an
//! `allow-always` survives a restart.

use std::fs::{DirBuilder, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::approval::grants::lock_ledger;
use crate::approval::pending::PendingLedger;
use crate::approval::request::now_ms;
use crate::approval::{
    ApprovalBinding, ApprovalDecision, ApprovalRequest, ApprovalScope, GrantKey, ResolveOutcome,
};
use crate::{Error, Result};

/// The file name of the database inside the state directory.
pub(crate) const DB_FILE_NAME: &str = "approvals.sqlite";

/// The schema this build writes (`PRAGMA user_version`).
///
/// - 1: grants keyed by (scope, scope value, plugin, tool).
/// - 2: grants keyed by (scope, scope value, plugin, tool, fingerprint).
pub(crate) const SCHEMA_VERSION: i64 = 2;

/// How many decision rows the audit table keeps; older rows are pruned.
pub(crate) const MAX_DECISION_ROWS: i64 = 10_000;

/// The current schema (version 2). Grants are keyed by the fingerprint of
/// the question as well; the decisions table is unchanged from version 1
/// and holds no parameters (only their hash).
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS grants (
    scope TEXT NOT NULL,
    scope_value TEXT NOT NULL,
    plugin_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    approval_id TEXT NOT NULL,
    granted_at_ms INTEGER NOT NULL,
    UNIQUE (scope, scope_value, plugin_id, tool_name, fingerprint)
);
CREATE TABLE IF NOT EXISTS decisions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    approval_id TEXT NOT NULL,
    call_id TEXT NOT NULL,
    params_hash TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    plugin_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    session_key TEXT NOT NULL,
    decision TEXT NOT NULL,
    requested_at_ms INTEGER NOT NULL,
    decided_at_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS pending (
    approval_id TEXT PRIMARY KEY NOT NULL,
    call_id TEXT NOT NULL,
    params_hash TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    plugin_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    session_key TEXT NOT NULL,
    requested_at_ms INTEGER NOT NULL
);
";

/// The migration from any older schema: the grants table is dropped and
/// recreated (the decisions table is kept).
///
/// A version-1 grant was keyed by plugin and tool only, so it answered any
/// question from that plugin and tool, whatever its title, description or
/// severity. It cannot be given a fingerprint after the fact (the question
/// it answered was not stored), so every old grant is discarded and the
/// approver is asked again. Forgetting a grant is the safe direction: it
/// can only cause a question, never an unasked call.
const MIGRATE_GRANTS: &str = "DROP TABLE IF EXISTS grants;";

/// Grants and decisions in a SQLite database (WAL mode, one connection
/// behind a mutex, every write in its own transaction). Pending requests
/// wait in memory, since this process alone decides them; each also leaves
/// a trace row (without its parameters) that
/// [`SqliteGrantStore::recover_pending`] denies after a crash.
#[derive(Debug)]
pub struct SqliteGrantStore {
    path: PathBuf,
    conn: Mutex<Connection>,
    pending: Mutex<PendingLedger>,
}

impl SqliteGrantStore {
    /// Open (or create) the database at `path`.
    ///
    /// A missing parent directory is created with mode 0700 and a new file
    /// with mode 0600 (on unix; an existing file is tightened to 0600). A
    /// file that is not a database, or has a schema newer than this build
    /// knows, is an [`Error::Store`] naming the path. An older schema is
    /// migrated: a version-1 database loses its grants (they were not bound
    /// to the question asked; see the schema notes) and keeps its decisions.
    pub fn open(path: &Path) -> Result<Self> {
        prepare_file(path)?;
        let conn = Connection::open(path)
            .map_err(|e| store_error(path, format!("cannot open the database: {e}")))?;
        let mut store = SqliteGrantStore {
            path: path.to_owned(),
            conn: Mutex::new(conn),
            pending: Mutex::new(PendingLedger::default()),
        };
        store.initialise()?;
        Ok(store)
    }

    /// Open (or create) `<state_dir>/approvals.sqlite`.
    pub fn open_in_state_dir(state_dir: &Path) -> Result<Self> {
        Self::open(&state_dir.join(DB_FILE_NAME))
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Set the pragmas and bring the schema up to date.
    fn initialise(&mut self) -> Result<()> {
        let path = self.path.clone();
        let conn = self
            .conn
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let err = |what: &str, e: rusqlite::Error| store_error(&path, format!("{what}: {e}"));
        conn.busy_timeout(Duration::from_secs(5))
            .map_err(|e| err("cannot set the busy timeout", e))?;
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(|e| {
                store_error(
                    &path,
                    format!(
                        "cannot read the schema version: {e}; if the file is damaged, move it \
                         aside and the store starts empty"
                    ),
                )
            })?;
        if version > SCHEMA_VERSION {
            return Err(store_error(
                &path,
                format!(
                    "schema version {version} is newer than this build supports ({SCHEMA_VERSION})"
                ),
            ));
        }
        let mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
            .map_err(|e| err("cannot enable WAL mode", e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(path = %path.display(), %mode, "approval store is not in WAL mode");
        }
        if version < SCHEMA_VERSION {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(|e| err("cannot start the schema migration", e))?;
            if version >= 1 {
                // The count is only for the log; failing to count is no
                // reason to keep the old grants.
                let discarded: Option<i64> = tx
                    .query_row("SELECT count(*) FROM grants", [], |row| row.get(0))
                    .ok();
                tracing::warn!(
                    path = %path.display(),
                    from = version,
                    to = SCHEMA_VERSION,
                    discarded = ?discarded,
                    "approval store migrated; allow-always grants from the old schema \
                     were not bound to the question asked and are discarded"
                );
            }
            tx.execute_batch(MIGRATE_GRANTS)
                .map_err(|e| err("cannot drop the old grants", e))?;
            tx.execute_batch(SCHEMA)
                .map_err(|e| err("cannot create the schema", e))?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)
                .map_err(|e| err("cannot set the schema version", e))?;
            tx.commit()
                .map_err(|e| err("cannot commit the schema migration", e))?;
        }
        Ok(())
    }

    /// After a crash: every approval that was still waiting for a human is
    /// resolved as `deny` (an audit row with decision `deny`) and cleared.
    /// Nothing is ever approved by a restart. Returns the approval ids.
    /// Call it once at start, before any request is made.
    pub fn recover_pending(&self) -> Result<Vec<String>> {
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.error("cannot start a transaction", e))?;
        let ids: Vec<String> = {
            let mut stmt = tx
                .prepare("SELECT approval_id FROM pending ORDER BY requested_at_ms, approval_id")
                .map_err(|e| self.error("cannot read pending approvals", e))?;
            let rows = stmt
                .query_map([], |row| row.get::<_, String>(0))
                .map_err(|e| self.error("cannot read pending approvals", e))?;
            rows.collect::<std::result::Result<_, _>>()
                .map_err(|e| self.error("cannot read pending approvals", e))?
        };
        tx.execute(
            "INSERT INTO decisions
                 (approval_id, call_id, params_hash, tool_name, plugin_id, scope,
                  agent_id, session_key, decision, requested_at_ms, decided_at_ms)
             SELECT approval_id, call_id, params_hash, tool_name, plugin_id, scope,
                    agent_id, session_key, ?1, requested_at_ms, ?2 FROM pending",
            params![ApprovalDecision::Deny.as_str(), ms_to_sql(now_ms())],
        )
        .map_err(|e| self.error("cannot resolve pending approvals", e))?;
        tx.execute("DELETE FROM pending", [])
            .map_err(|e| self.error("cannot clear pending approvals", e))?;
        tx.commit()
            .map_err(|e| self.error("cannot commit the recovery", e))?;
        Ok(ids)
    }

    /// The decisions recorded for `approval_id`, oldest first (audit).
    pub fn decisions_for(&self, approval_id: &str) -> Result<Vec<String>> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare("SELECT decision FROM decisions WHERE approval_id = ?1 ORDER BY id")
            .map_err(|e| self.error("cannot read decisions", e))?;
        let rows = stmt
            .query_map(params![approval_id], |row| row.get::<_, String>(0))
            .map_err(|e| self.error("cannot read decisions", e))?;
        rows.collect::<std::result::Result<_, _>>()
            .map_err(|e| self.error("cannot read decisions", e))
    }

    /// The connection; a poisoned lock is recovered, since an interrupted
    /// transaction rolls back when it is dropped.
    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A store error for this database.
    fn error(&self, what: &str, e: rusqlite::Error) -> Error {
        store_error(&self.path, format!("{what}: {e}"))
    }
}

impl crate::approval::GrantStore for SqliteGrantStore {
    fn is_granted(&self, key: &GrantKey) -> Result<bool> {
        let conn = self.lock();
        conn.query_row(
            "SELECT 1 FROM grants
             WHERE scope = ?1 AND scope_value = ?2 AND plugin_id = ?3 AND tool_name = ?4
               AND fingerprint = ?5",
            params![
                key.scope.as_str(),
                key.scope_value,
                key.plugin_id,
                key.tool_name,
                key.fingerprint
            ],
            |_| Ok(()),
        )
        .optional()
        .map(|row| row.is_some())
        .map_err(|e| self.error("cannot look up a grant", e))
    }

    fn grant(&self, key: &GrantKey, approval_id: &str) -> Result<()> {
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.error("cannot start a transaction", e))?;
        tx.execute(
            "INSERT INTO grants
                 (scope, scope_value, plugin_id, tool_name, fingerprint, approval_id,
                  granted_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT (scope, scope_value, plugin_id, tool_name, fingerprint)
             DO UPDATE SET approval_id = excluded.approval_id",
            params![
                key.scope.as_str(),
                key.scope_value,
                key.plugin_id,
                key.tool_name,
                key.fingerprint,
                approval_id,
                ms_to_sql(now_ms())
            ],
        )
        .map_err(|e| self.error("cannot store a grant", e))?;
        tx.commit()
            .map_err(|e| self.error("cannot commit a grant", e))
    }

    fn revoke(&self, key: &GrantKey) -> Result<bool> {
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.error("cannot start a transaction", e))?;
        let removed = tx
            .execute(
                "DELETE FROM grants
                 WHERE scope = ?1 AND scope_value = ?2 AND plugin_id = ?3 AND tool_name = ?4
                   AND fingerprint = ?5",
                params![
                    key.scope.as_str(),
                    key.scope_value,
                    key.plugin_id,
                    key.tool_name,
                    key.fingerprint
                ],
            )
            .map_err(|e| self.error("cannot revoke a grant", e))?;
        tx.commit()
            .map_err(|e| self.error("cannot commit a revocation", e))?;
        Ok(removed > 0)
    }

    fn list(&self) -> Result<Vec<GrantKey>> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare(
                "SELECT scope, scope_value, plugin_id, tool_name, fingerprint FROM grants
                 ORDER BY granted_at_ms, rowid",
            )
            .map_err(|e| self.error("cannot list grants", e))?;
        let rows = stmt
            .query_map([], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, String>(3)?,
                    row.get::<_, String>(4)?,
                ))
            })
            .map_err(|e| self.error("cannot list grants", e))?;
        let mut out = Vec::new();
        for row in rows {
            let (scope, scope_value, plugin_id, tool_name, fingerprint) =
                row.map_err(|e| self.error("cannot read a grant", e))?;
            // A row with an unknown scope was not written by this build; it
            // is skipped rather than guessed at.
            let Some(scope) = ApprovalScope::parse(&scope) else {
                tracing::warn!(path = %self.path.display(), %scope, "skipping a grant with an unknown scope");
                continue;
            };
            out.push(GrantKey {
                scope,
                scope_value,
                plugin_id,
                tool_name,
                fingerprint,
            });
        }
        Ok(out)
    }

    /// The request waits in memory (one process decides it); its trace row
    /// in the `pending` table, written first, holds the parameters' hash,
    /// never the parameters.
    fn add_pending(&self, request: &ApprovalRequest) -> Result<bool> {
        let mut ledger = lock_ledger(&self.pending);
        if ledger.knows(&request.id) {
            return Ok(false);
        }
        let conn = self.lock();
        conn.execute(
            "INSERT OR REPLACE INTO pending
                 (approval_id, call_id, params_hash, tool_name, plugin_id, scope,
                  agent_id, session_key, requested_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                request.id,
                request.call_id,
                request.params_hash,
                request.tool_name,
                request.plugin_id,
                request.scope.as_str(),
                request.agent_id,
                request.session_key,
                ms_to_sql(request.created_at_ms)
            ],
        )
        .map_err(|e| self.error("cannot record a pending approval", e))?;
        Ok(ledger.insert(request))
    }

    fn decide(
        &self,
        approval_id: &str,
        decision: ApprovalDecision,
        binding: Option<&ApprovalBinding>,
    ) -> Result<ResolveOutcome> {
        Ok(lock_ledger(&self.pending).decide(approval_id, decision, binding))
    }

    fn finish(&self, approval_id: &str, fallback: ApprovalDecision) -> Result<ApprovalDecision> {
        Ok(lock_ledger(&self.pending).finish(approval_id, fallback))
    }

    fn decision(&self, approval_id: &str) -> Result<Option<ApprovalDecision>> {
        Ok(lock_ledger(&self.pending).decision(approval_id))
    }

    fn pending(&self) -> Result<Vec<ApprovalRequest>> {
        Ok(lock_ledger(&self.pending).list())
    }

    fn recover_pending(&self) -> Result<Vec<String>> {
        SqliteGrantStore::recover_pending(self)
    }

    /// The audit row holds the parameters' hash, never the parameters (nor
    /// `params_preview`).
    fn record_decision(&self, request: &ApprovalRequest, decision: ApprovalDecision) -> Result<()> {
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.error("cannot start a transaction", e))?;
        tx.execute(
            "INSERT INTO decisions
                 (approval_id, call_id, params_hash, tool_name, plugin_id, scope,
                  agent_id, session_key, decision, requested_at_ms, decided_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                request.id,
                request.call_id,
                request.params_hash,
                request.tool_name,
                request.plugin_id,
                request.scope.as_str(),
                request.agent_id,
                request.session_key,
                decision.as_str(),
                ms_to_sql(request.created_at_ms),
                ms_to_sql(now_ms())
            ],
        )
        .map_err(|e| self.error("cannot record a decision", e))?;
        tx.execute(
            "DELETE FROM pending WHERE approval_id = ?1",
            params![request.id],
        )
        .map_err(|e| self.error("cannot clear a pending approval", e))?;
        tx.execute(
            "DELETE FROM decisions WHERE id <= (SELECT max(id) FROM decisions) - ?1",
            params![MAX_DECISION_ROWS],
        )
        .map_err(|e| self.error("cannot prune old decisions", e))?;
        tx.commit()
            .map_err(|e| self.error("cannot commit a decision", e))
    }
}

/// Create the parent directory (0700) and the file (0600) before SQLite
/// opens it, so the database is never readable by others, even briefly.
fn prepare_file(path: &Path) -> Result<()> {
    if let Some(parent) = path.parent()
        && !parent.as_os_str().is_empty()
        && !parent.exists()
    {
        let mut builder = DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt as _;
            builder.mode(0o700);
        }
        builder.create(parent).map_err(|e| {
            store_error(
                path,
                format!("cannot create the directory {}: {e}", parent.display()),
            )
        })?;
    }
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let file = options
        .open(path)
        .map_err(|e| store_error(path, format!("cannot create the file: {e}")))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let metadata = file
            .metadata()
            .map_err(|e| store_error(path, format!("cannot read the file's metadata: {e}")))?;
        if metadata.permissions().mode() & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))
                .map_err(|e| store_error(path, format!("cannot restrict the file to 0600: {e}")))?;
        }
    }
    drop(file);
    Ok(())
}

/// Unix milliseconds as a SQLite integer (saturating).
fn ms_to_sql(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

/// An [`Error::Store`] for `path`.
fn store_error(path: &Path, message: String) -> Error {
    Error::Store {
        path: path.to_owned(),
        message,
    }
}

#[cfg(test)]
#[path = "sqlite_tests.rs"]
mod tests;
