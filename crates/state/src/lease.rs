//! Leases with fencing tokens: one holder at a time per name, by the
//! database's clock.
//!
//! A lease is a row: its holder, a token that grows by one each time a
//! different holder takes it (or the same holder takes it back after it
//! lapsed), and an expiry. A holder renews it well before expiry; when it
//! stops (killed, partitioned), another member acquires it after the
//! expiry with a larger token. Every transaction written under a lease
//! starts with [`fence`], which locks the row and checks the token is
//! still current, so a holder that lost the lease without noticing cannot
//! write: its transaction fails with [`StateError::Fenced`].

use std::time::Duration;

use crate::{PgPool, StateError};

/// The database's clock in milliseconds since the epoch, as SQL.
pub const NOW_MS_SQL: &str = "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT";

/// A lease as held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseGrant {
    /// The lease's name (`cron`, `maintenance`, ...).
    pub name: String,
    /// Who holds it (a member id).
    pub holder: String,
    /// Its fencing token.
    pub token: i64,
    /// When it lapses unless renewed (database clock, ms).
    pub expires_at_ms: i64,
}

fn ttl_ms(ttl: Duration) -> Result<i64, StateError> {
    i64::try_from(ttl.as_millis())
        .ok()
        .filter(|ms| *ms > 0)
        .ok_or_else(|| StateError::Config {
            message: format!("a lease time of {ttl:?} is out of range"),
        })
}

fn grant(name: &str, row: &postgres::Row) -> LeaseGrant {
    LeaseGrant {
        name: name.to_owned(),
        holder: row.get(0),
        token: row.get(1),
        expires_at_ms: row.get(2),
    }
}

/// Take `name` for `holder` when it is free or lapsed (a new, larger
/// token), or renew it when `holder` holds it. `Ok(None)` when another
/// member holds it.
pub fn acquire(
    pool: &PgPool,
    name: &str,
    holder: &str,
    ttl: Duration,
) -> Result<Option<LeaseGrant>, StateError> {
    let ttl = ttl_ms(ttl)?;
    let (name, holder) = (name.to_owned(), holder.to_owned());
    pool.run(move |client| {
        let sql = format!(
            "INSERT INTO talon_leases (name, holder, token, expires_at_ms)
             VALUES ($1, $2, 1, {NOW_MS_SQL} + $3)
             ON CONFLICT (name) DO UPDATE SET
                 holder = EXCLUDED.holder,
                 token = CASE
                     WHEN talon_leases.holder = EXCLUDED.holder
                          AND talon_leases.expires_at_ms > {NOW_MS_SQL}
                     THEN talon_leases.token
                     ELSE talon_leases.token + 1 END,
                 expires_at_ms = EXCLUDED.expires_at_ms
             WHERE talon_leases.holder = EXCLUDED.holder
                OR talon_leases.expires_at_ms <= {NOW_MS_SQL}
             RETURNING holder, token, expires_at_ms"
        );
        let row = client.query_opt(&sql, &[&name, &holder, &ttl])?;
        Ok(row.map(|r| grant(&name, &r)))
    })
}

/// Push a held lease's expiry `ttl` ahead. `Ok(None)` when it was lost:
/// another member took it (its token changed).
pub fn renew(
    pool: &PgPool,
    held: &LeaseGrant,
    ttl: Duration,
) -> Result<Option<LeaseGrant>, StateError> {
    let ttl = ttl_ms(ttl)?;
    let held = held.clone();
    pool.run(move |client| {
        let sql = format!(
            "UPDATE talon_leases SET expires_at_ms = {NOW_MS_SQL} + $4
             WHERE name = $1 AND holder = $2 AND token = $3
             RETURNING holder, token, expires_at_ms"
        );
        let row = client.query_opt(&sql, &[&held.name, &held.holder, &held.token, &ttl])?;
        Ok(row.map(|r| grant(&held.name, &r)))
    })
}

/// Give a held lease up now, so another member need not wait for it to
/// lapse. A lease already lost is left alone.
pub fn release(pool: &PgPool, held: &LeaseGrant) -> Result<(), StateError> {
    let held = held.clone();
    pool.run(move |client| {
        client.execute(
            "UPDATE talon_leases SET expires_at_ms = 0
             WHERE name = $1 AND holder = $2 AND token = $3",
            &[&held.name, &held.holder, &held.token],
        )?;
        Ok(())
    })
}

/// Who holds `name` now, if anyone (a lapsed lease is nobody's).
pub fn current(pool: &PgPool, name: &str) -> Result<Option<LeaseGrant>, StateError> {
    let name = name.to_owned();
    pool.run(move |client| {
        let sql = format!(
            "SELECT holder, token, expires_at_ms FROM talon_leases
             WHERE name = $1 AND expires_at_ms > {NOW_MS_SQL}"
        );
        let row = client.query_opt(&sql, &[&name])?;
        Ok(row.map(|r| grant(&name, &r)))
    })
}

/// Inside a transaction about to write under lease `name`: lock the lease
/// row until the transaction ends and check `token` is still current.
/// [`StateError::Fenced`] when another member has taken the lease since.
/// Call it first in the transaction.
pub fn fence(tx: &mut postgres::Transaction<'_>, name: &str, token: i64) -> Result<(), StateError> {
    let row = tx.query_opt(
        "SELECT token FROM talon_leases WHERE name = $1 FOR SHARE",
        &[&name],
    )?;
    match row.map(|r| r.get::<_, i64>(0)) {
        Some(current) if current == token => Ok(()),
        _ => Err(StateError::Fenced {
            lease: name.to_owned(),
            token,
        }),
    }
}
