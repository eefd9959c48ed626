//! Fleet membership: each gateway process registers itself and
//! heartbeats; a member whose heartbeat is older than [`LIVE_WINDOW`] is
//! gone, and what it left in flight may be recovered by the others.

use std::time::Duration;

use crate::lease::NOW_MS_SQL;
use crate::{PgPool, StateError};

/// How often a member heartbeats.
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(2);
/// How old a heartbeat may be for its member to count as live.
pub const LIVE_WINDOW: Duration = Duration::from_secs(10);

/// Ids of live members, as SQL usable in a store's query
/// (`... WHERE member_id NOT IN (LIVE_MEMBER_IDS_SQL)`); by the database's clock.
pub const LIVE_MEMBER_IDS_SQL: &str = "SELECT id FROM talon_members \
     WHERE heartbeat_at_ms > (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT - 10000";

/// One gateway process of the fleet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Its id (random per process start).
    pub id: String,
    /// The host it runs on.
    pub host: String,
    /// Its process id there.
    pub pid: u32,
    /// The address it serves on.
    pub listen: String,
    /// Its Talon version.
    pub version: String,
    /// When it registered (database clock, ms).
    pub started_at_ms: i64,
    /// Its last heartbeat (database clock, ms).
    pub heartbeat_at_ms: i64,
    /// Whether that heartbeat is within [`LIVE_WINDOW`] (when listed).
    pub live: bool,
}

/// A fresh random member id (32 hex digits).
pub fn new_member_id() -> Result<String, StateError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| StateError::unavailable(format!("no randomness for a member id: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Register `member` (its times are set by the database).
pub fn register(pool: &PgPool, member: &Member) -> Result<(), StateError> {
    let m = member.clone();
    let pid = i64::from(m.pid);
    pool.run(move |client| {
        let sql = format!(
            "INSERT INTO talon_members (id, host, pid, listen, version, started_at_ms, heartbeat_at_ms)
             VALUES ($1, $2, $3, $4, $5, {NOW_MS_SQL}, {NOW_MS_SQL})
             ON CONFLICT (id) DO UPDATE SET heartbeat_at_ms = EXCLUDED.heartbeat_at_ms"
        );
        client.execute(&sql, &[&m.id, &m.host, &pid, &m.listen, &m.version])?;
        Ok(())
    })
}

/// Record that member `id` is alive. `Ok(false)` when its row is gone
/// (another member pruned it): register again.
pub fn heartbeat(pool: &PgPool, id: &str) -> Result<bool, StateError> {
    let id = id.to_owned();
    pool.run(move |client| {
        let sql = format!("UPDATE talon_members SET heartbeat_at_ms = {NOW_MS_SQL} WHERE id = $1");
        Ok(client.execute(&sql, &[&id])? == 1)
    })
}

/// Remove member `id` (a clean stop).
pub fn leave(pool: &PgPool, id: &str) -> Result<(), StateError> {
    let id = id.to_owned();
    pool.run(move |client| {
        client.execute("DELETE FROM talon_members WHERE id = $1", &[&id])?;
        Ok(())
    })
}

/// Every registered member, oldest first, with whether it is live.
pub fn list(pool: &PgPool) -> Result<Vec<Member>, StateError> {
    let window = i64::try_from(LIVE_WINDOW.as_millis()).unwrap_or(i64::MAX);
    pool.run(move |client| {
        let sql = format!(
            "SELECT id, host, pid, listen, version, started_at_ms, heartbeat_at_ms,
                    heartbeat_at_ms > {NOW_MS_SQL} - $1
             FROM talon_members ORDER BY started_at_ms, id"
        );
        let rows = client.query(&sql, &[&window])?;
        Ok(rows
            .iter()
            .map(|r| Member {
                id: r.get(0),
                host: r.get(1),
                pid: u32::try_from(r.get::<_, i64>(2)).unwrap_or(0),
                listen: r.get(3),
                version: r.get(4),
                started_at_ms: r.get(5),
                heartbeat_at_ms: r.get(6),
                live: r.get(7),
            })
            .collect())
    })
}

/// Remove members that have not heartbeaten for `older_than` (their
/// in-flight work must have been recovered first).
pub fn prune(pool: &PgPool, older_than: Duration) -> Result<u64, StateError> {
    let age = i64::try_from(older_than.as_millis()).unwrap_or(i64::MAX);
    pool.run(move |client| {
        let sql = format!("DELETE FROM talon_members WHERE heartbeat_at_ms < {NOW_MS_SQL} - $1");
        Ok(client.execute(&sql, &[&age])?)
    })
}
