//! The approval store a fleet of gateways shares, on PostgreSQL: pending
//! requests, `allow-always` grants and the decision audit in one database,
//! so a request raised on one gateway is listed and resolved on another.
//!
//! Every rule that a single process enforces by holding the only copy is a
//! statement here: an approval id is single-use (its primary key, `INSERT
//! … ON CONFLICT DO NOTHING`), the first decision wins (`UPDATE … WHERE
//! decision IS NULL`, under the row's lock), a timeout after a human's
//! decision keeps the human's, and a recovery denies only what a member
//! that is gone left waiting.

use talon_state::Conn;
use talon_state::postgres::Row;
use talon_state::{PgPool, StateError, members};

use crate::approval::pending::{Entry, refusal};
use crate::approval::{
    ApprovalBinding, ApprovalDecision, ApprovalRequest, ApprovalScope, GrantKey, GrantStore,
    ResolveOutcome,
};
use crate::{Error, Result};

/// The store's name in the schema versions table.
pub(crate) const STORE: &str = "approvals";

/// How many decision rows the audit table keeps, and how many ended
/// requests are remembered (to tell a duplicate decision from an unknown
/// id); older rows are pruned.
pub(crate) const MAX_ENDED_ROWS: i64 = 10_000;

/// The schema, one entry per version.
///
/// - 1: grants, decisions (with the member that concluded them) and the
///   pending requests. A pending row holds the whole request as JSON
///   (`request`, the parameters' preview included, since an approver on
///   another gateway must see what they allow) only while it waits: every
///   statement that ends it clears that column.
pub(crate) const MIGRATIONS: &[&str] = &["
CREATE TABLE approval_grants (
    scope TEXT NOT NULL,
    scope_value TEXT NOT NULL,
    plugin_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    approval_id TEXT NOT NULL,
    granted_at_ms BIGINT NOT NULL,
    seq BIGSERIAL NOT NULL UNIQUE,
    PRIMARY KEY (scope, scope_value, plugin_id, tool_name, fingerprint)
);
CREATE TABLE approval_decisions (
    id BIGSERIAL PRIMARY KEY,
    approval_id TEXT NOT NULL,
    call_id TEXT NOT NULL,
    params_hash TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    plugin_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    session_key TEXT NOT NULL,
    decision TEXT NOT NULL,
    requested_at_ms BIGINT NOT NULL,
    decided_at_ms BIGINT NOT NULL,
    member_id TEXT NOT NULL
);
CREATE INDEX approval_decisions_by_approval ON approval_decisions (approval_id);
CREATE TABLE approval_pending (
    approval_id TEXT PRIMARY KEY,
    seq BIGSERIAL NOT NULL UNIQUE,
    member_id TEXT NOT NULL,
    call_id TEXT NOT NULL,
    params_hash TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    plugin_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    session_key TEXT NOT NULL,
    allowed TEXT NOT NULL,
    request TEXT,
    requested_at_ms BIGINT NOT NULL,
    decision TEXT,
    decided_at_ms BIGINT,
    decided_by TEXT
);
CREATE INDEX approval_pending_waiting ON approval_pending (seq) WHERE decision IS NULL;
"];

/// The database's clock in Unix milliseconds, as SQL.
const NOW_MS: &str = talon_state::lease::NOW_MS_SQL;

/// Grants, decisions and pending requests in a PostgreSQL database shared
/// by the fleet. Each gateway opens it with its member id
/// ([`talon_state::members`]); a pending row carries the id of the member
/// waiting for it.
#[derive(Debug, Clone)]
pub struct PostgresGrantStore {
    pool: PgPool,
    member_id: String,
}

impl PostgresGrantStore {
    /// Open the store on `pool` for the fleet member `member_id` (the id
    /// this gateway registered with [`talon_state::members::register`]),
    /// running the store's migrations. A database holding a newer schema
    /// than this build is refused, unchanged; a database that cannot be
    /// reached is an [`Error::State`] whose [`Error::is_unavailable`] is
    /// true.
    pub fn open(pool: &PgPool, member_id: impl Into<String>) -> Result<Self> {
        let store = PostgresGrantStore {
            pool: pool.clone(),
            member_id: member_id.into(),
        };
        pool.migrate(STORE, MIGRATIONS)
            .map_err(|source| store.error("migrate the approval tables", source))?;
        Ok(store)
    }

    /// The fleet member this store waits for requests as.
    pub fn member_id(&self) -> &str {
        &self.member_id
    }

    /// The decisions recorded for `approval_id`, oldest first (audit).
    pub fn decisions_for(&self, approval_id: &str) -> Result<Vec<String>> {
        let id = approval_id.to_owned();
        self.run("read decisions", move |c| {
            let rows = c.query(
                "SELECT decision FROM approval_decisions WHERE approval_id = $1 ORDER BY id",
                &[&id],
            )?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })
    }

    /// Run `f` on a pooled connection; a failure is an [`Error::State`]
    /// saying what was being done.
    fn run<T, F>(&self, what: &'static str, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Conn) -> std::result::Result<T, StateError> + Send + 'static,
    {
        self.pool.run(f).map_err(|source| self.error(what, source))
    }

    /// An [`Error::State`] for this database.
    fn error(&self, what: &'static str, source: StateError) -> Error {
        Error::State {
            target: self.pool.target().to_owned(),
            what,
            source,
        }
    }
}

/// The pieces of a grant key, owned, for a query's parameters.
fn key_parts(key: &GrantKey) -> [String; 5] {
    [
        key.scope.as_str().to_owned(),
        key.scope_value.clone(),
        key.plugin_id.clone(),
        key.tool_name.clone(),
        key.fingerprint.clone(),
    ]
}

/// Unix milliseconds as a BIGINT (saturating).
fn ms_to_sql(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

/// A stored decision's wire name; one this build does not know is read as
/// `deny` (never as an approval).
fn parse_decision(name: &str) -> ApprovalDecision {
    ApprovalDecision::parse(name).unwrap_or_else(|| {
        tracing::warn!(decision = %name, "an approval row holds an unknown decision; read as deny");
        ApprovalDecision::Deny
    })
}

/// The allowed decisions as stored (`allow-once,deny`).
fn allowed_to_sql(allowed: &[ApprovalDecision]) -> String {
    allowed
        .iter()
        .map(|d| d.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// The allowed decisions read back; unknown names are dropped (they can
/// only narrow what is allowed).
fn allowed_from_sql(allowed: &str) -> Vec<ApprovalDecision> {
    allowed
        .split(',')
        .filter_map(ApprovalDecision::parse)
        .collect()
}

impl GrantStore for PostgresGrantStore {
    fn is_granted(&self, key: &GrantKey) -> Result<bool> {
        let [scope, value, plugin, tool, fingerprint] = key_parts(key);
        self.run("look up a grant", move |c| {
            let row = c.query_opt(
                "SELECT 1 FROM approval_grants
                 WHERE scope = $1 AND scope_value = $2 AND plugin_id = $3 AND tool_name = $4
                   AND fingerprint = $5",
                &[&scope, &value, &plugin, &tool, &fingerprint],
            )?;
            Ok(row.is_some())
        })
    }

    fn grant(&self, key: &GrantKey, approval_id: &str) -> Result<()> {
        let [scope, value, plugin, tool, fingerprint] = key_parts(key);
        let id = approval_id.to_owned();
        self.run("store a grant", move |c| {
            let sql = format!(
                "INSERT INTO approval_grants
                     (scope, scope_value, plugin_id, tool_name, fingerprint, approval_id,
                      granted_at_ms)
                 VALUES ($1, $2, $3, $4, $5, $6, {NOW_MS})
                 ON CONFLICT (scope, scope_value, plugin_id, tool_name, fingerprint)
                 DO UPDATE SET approval_id = EXCLUDED.approval_id"
            );
            c.execute(&sql, &[&scope, &value, &plugin, &tool, &fingerprint, &id])?;
            Ok(())
        })
    }

    fn revoke(&self, key: &GrantKey) -> Result<bool> {
        let [scope, value, plugin, tool, fingerprint] = key_parts(key);
        self.run("revoke a grant", move |c| {
            let removed = c.execute(
                "DELETE FROM approval_grants
                 WHERE scope = $1 AND scope_value = $2 AND plugin_id = $3 AND tool_name = $4
                   AND fingerprint = $5",
                &[&scope, &value, &plugin, &tool, &fingerprint],
            )?;
            Ok(removed > 0)
        })
    }

    fn list(&self) -> Result<Vec<GrantKey>> {
        let rows = self.run("list grants", |c| {
            Ok(c.query(
                "SELECT scope, scope_value, plugin_id, tool_name, fingerprint
                 FROM approval_grants ORDER BY seq",
                &[],
            )?)
        })?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let scope: String = row.get(0);
            // A row with an unknown scope was not written by this build; it
            // is skipped rather than guessed at.
            let Some(scope) = ApprovalScope::parse(&scope) else {
                tracing::warn!(%scope, "skipping a grant with an unknown scope");
                continue;
            };
            out.push(GrantKey {
                scope,
                scope_value: row.get(1),
                plugin_id: row.get(2),
                tool_name: row.get(3),
                fingerprint: row.get(4),
            });
        }
        Ok(out)
    }

    /// The audit row holds the parameters' hash, never the parameters; the
    /// request's pending row, if it somehow still waits, ends with the
    /// same decision. Old audit rows and ended requests are pruned.
    fn record_decision(&self, request: &ApprovalRequest, decision: ApprovalDecision) -> Result<()> {
        // Owned for the closure on a pool worker.
        let request = request.clone();
        let decision = decision.as_str();
        let member = self.member_id.clone();
        self.run("record a decision", move |c| {
            let mut tx = c.transaction()?;
            let insert = format!(
                "INSERT INTO approval_decisions
                     (approval_id, call_id, params_hash, tool_name, plugin_id, scope, agent_id,
                      session_key, decision, requested_at_ms, decided_at_ms, member_id)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, {NOW_MS}, $11)"
            );
            tx.execute(
                &insert,
                &[
                    &request.id,
                    &request.call_id,
                    &request.params_hash,
                    &request.tool_name,
                    &request.plugin_id,
                    &request.scope.as_str(),
                    &request.agent_id,
                    &request.session_key,
                    &decision,
                    &ms_to_sql(request.created_at_ms),
                    &member,
                ],
            )?;
            let end = format!(
                "UPDATE approval_pending
                 SET decision = $2, decided_at_ms = {NOW_MS}, decided_by = $3, request = NULL
                 WHERE approval_id = $1 AND decision IS NULL"
            );
            tx.execute(&end, &[&request.id, &decision, &member])?;
            tx.execute(
                "DELETE FROM approval_decisions
                 WHERE id <= (SELECT max(id) FROM approval_decisions) - $1",
                &[&MAX_ENDED_ROWS],
            )?;
            tx.execute(
                "DELETE FROM approval_pending
                 WHERE decision IS NOT NULL
                   AND seq <= (SELECT max(seq) FROM approval_pending) - $1",
                &[&MAX_ENDED_ROWS],
            )?;
            tx.commit()?;
            Ok(())
        })
    }

    fn add_pending(&self, request: &ApprovalRequest) -> Result<bool> {
        let json = serde_json::to_string(request).map_err(|e| {
            self.error(
                "record a pending approval",
                StateError::query(format!("cannot encode the request: {e}")),
            )
        })?;
        // Owned for the closure on a pool worker.
        let allowed = allowed_to_sql(&request.allowed_decisions);
        let request = request.clone();
        let member = self.member_id.clone();
        self.run("record a pending approval", move |c| {
            let added = c.execute(
                "INSERT INTO approval_pending
                     (approval_id, member_id, call_id, params_hash, tool_name, plugin_id, scope,
                      agent_id, session_key, allowed, request, requested_at_ms)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
                 ON CONFLICT (approval_id) DO NOTHING",
                &[
                    &request.id,
                    &member,
                    &request.call_id,
                    &request.params_hash,
                    &request.tool_name,
                    &request.plugin_id,
                    &request.scope.as_str(),
                    &request.agent_id,
                    &request.session_key,
                    &allowed,
                    &json,
                    &ms_to_sql(request.created_at_ms),
                ],
            )?;
            Ok(added == 1)
        })
    }

    fn decide(
        &self,
        approval_id: &str,
        decision: ApprovalDecision,
        binding: Option<&ApprovalBinding>,
    ) -> Result<ResolveOutcome> {
        let id = approval_id.to_owned();
        let binding = binding.cloned();
        let member = self.member_id.clone();
        self.run("hand in a decision", move |c| {
            let mut tx = c.transaction()?;
            let sql = format!(
                "SELECT call_id, params_hash, allowed, decision,
                        member_id = $2 OR member_id IN ({live})
                 FROM approval_pending WHERE approval_id = $1 FOR UPDATE",
                live = members::LIVE_MEMBER_IDS_SQL
            );
            let row = tx.query_opt(&sql, &[&id, &member])?;
            let outcome = match &row {
                None => refusal(Entry::Missing, decision, binding.as_ref()),
                // Its gateway is gone, so nobody would run the call: as
                // late as a decision for a cancelled request (recovery
                // denies it).
                Some(row)
                    if row.get::<_, Option<String>>(3).is_none() && !row.get::<_, bool>(4) =>
                {
                    refusal(Entry::Missing, decision, binding.as_ref())
                }
                Some(row) => match row.get::<_, Option<String>>(3) {
                    Some(ended) => refusal(
                        Entry::Ended(parse_decision(&ended)),
                        decision,
                        binding.as_ref(),
                    ),
                    None => {
                        let (call_id, params_hash): (String, String) = (row.get(0), row.get(1));
                        let allowed = allowed_from_sql(&row.get::<_, String>(2));
                        refusal(
                            Entry::Waiting {
                                call_id: &call_id,
                                params_hash: &params_hash,
                                allowed: &allowed,
                            },
                            decision,
                            binding.as_ref(),
                        )
                    }
                },
            };
            if let Some(outcome) = outcome {
                return Ok(outcome);
            }
            // The first decision wins: only a row that still waits is
            // ended, whoever else is deciding it at this moment.
            let sql = format!(
                "UPDATE approval_pending
                 SET decision = $2, decided_at_ms = {NOW_MS}, decided_by = $3, request = NULL
                 WHERE approval_id = $1 AND decision IS NULL"
            );
            let ended = tx.execute(&sql, &[&id, &decision.as_str(), &member])?;
            tx.commit()?;
            Ok(if ended == 1 {
                ResolveOutcome::Applied
            } else {
                ResolveOutcome::AlreadyResolved
            })
        })
    }

    fn finish(&self, approval_id: &str, fallback: ApprovalDecision) -> Result<ApprovalDecision> {
        let id = approval_id.to_owned();
        let member = self.member_id.clone();
        let stored = self.run("end a pending approval", move |c| {
            let sql = format!(
                "UPDATE approval_pending
                 SET decision = $2, decided_at_ms = {NOW_MS}, decided_by = $3, request = NULL
                 WHERE approval_id = $1 AND decision IS NULL"
            );
            if c.execute(&sql, &[&id, &fallback.as_str(), &member])? == 1 {
                return Ok(None);
            }
            // Already ended (a human somewhere got there first), or unknown.
            let row = c.query_opt(
                "SELECT decision FROM approval_pending WHERE approval_id = $1",
                &[&id],
            )?;
            Ok(row.and_then(|r| r.get::<_, Option<String>>(0)))
        })?;
        Ok(stored.map_or(fallback, |name| parse_decision(&name)))
    }

    fn decision(&self, approval_id: &str) -> Result<Option<ApprovalDecision>> {
        let id = approval_id.to_owned();
        let stored = self.run("read an approval's decision", move |c| {
            let row = c.query_opt(
                "SELECT decision FROM approval_pending WHERE approval_id = $1",
                &[&id],
            )?;
            Ok(row.and_then(|r| r.get::<_, Option<String>>(0)))
        })?;
        Ok(stored.map(|name| parse_decision(&name)))
    }

    /// The requests still waiting for this gateway or a live member of the
    /// fleet; those of a member that is gone are left for
    /// [`GrantStore::recover_pending`] to deny, never offered to an
    /// approver (nobody would run the call).
    fn pending(&self) -> Result<Vec<ApprovalRequest>> {
        let member = self.member_id.clone();
        let rows: Vec<Row> = self.run("list pending approvals", move |c| {
            let sql = format!(
                "SELECT approval_id, request FROM approval_pending
                 WHERE decision IS NULL AND request IS NOT NULL
                   AND (member_id = $1 OR member_id IN ({}))
                 ORDER BY seq",
                members::LIVE_MEMBER_IDS_SQL
            );
            Ok(c.query(&sql, &[&member])?)
        })?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let id: String = row.get(0);
            let json: String = row.get(1);
            match serde_json::from_str::<ApprovalRequest>(&json) {
                Ok(request) => out.push(request),
                // Not written by this build: not shown rather than guessed
                // at (it still denies at its waiter's timeout).
                Err(error) => {
                    tracing::warn!(approval_id = %id, %error, "skipping a pending approval this build cannot read");
                }
            }
        }
        Ok(out)
    }

    fn is_shared(&self) -> bool {
        true
    }

    /// Deny every request still waiting for a member that is neither this
    /// one nor live ([`talon_state::members`]): a crashed gateway's
    /// requests, never a live gateway's. Call it at start and then
    /// periodically (a member counts as gone only once its heartbeat is
    /// [`members::LIVE_WINDOW`] old).
    fn recover_pending(&self) -> Result<Vec<String>> {
        let member = self.member_id.clone();
        let mut ids: Vec<String> = self.run("recover pending approvals", move |c| {
            let sql = format!(
                "WITH ended AS (
                     UPDATE approval_pending
                     SET decision = 'deny', decided_at_ms = {NOW_MS}, decided_by = $1,
                         request = NULL
                     WHERE decision IS NULL AND member_id <> $1
                       AND member_id NOT IN ({live})
                     RETURNING approval_id, call_id, params_hash, tool_name, plugin_id, scope,
                               agent_id, session_key, requested_at_ms, decided_at_ms
                 )
                 INSERT INTO approval_decisions
                     (approval_id, call_id, params_hash, tool_name, plugin_id, scope, agent_id,
                      session_key, decision, requested_at_ms, decided_at_ms, member_id)
                 SELECT approval_id, call_id, params_hash, tool_name, plugin_id, scope, agent_id,
                        session_key, 'deny', requested_at_ms, decided_at_ms, $1
                 FROM ended
                 RETURNING approval_id",
                live = members::LIVE_MEMBER_IDS_SQL
            );
            let rows = c.query(&sql, &[&member])?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })?;
        ids.sort();
        if !ids.is_empty() {
            tracing::warn!(
                approvals = ids.len(),
                "approvals left waiting by gateways that are gone are resolved as denied"
            );
        }
        Ok(ids)
    }
}

#[cfg(test)]
#[path = "postgres_tests.rs"]
mod tests;
