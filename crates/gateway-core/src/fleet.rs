//! The fleet: this gateway as a member of the gateways sharing one
//! PostgreSQL database (`state.backend: "postgres"`).
//!
//! At start the gateway connects the pool (a database that cannot be
//! reached is a start error, so the process exits non-zero), registers
//! itself with a fresh member id and heartbeats every
//! [`members::HEARTBEAT_INTERVAL`]. The stores hold their rows with that
//! id, so what a dead member left in flight is recovered by the others
//! and never what a live one is running. `health` (and `talon gateway
//! status`) lists the members and the leases held.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use talon_config::sections::state::{StateBackend, StateConfig};
use talon_gateway_protocol::{FleetLease, FleetMember, StateStatus};
use talon_state::{PgConfig, PgPool, StateError, lease, members};
use talon_tasks::CancellationToken;

use crate::error::GatewayError;

/// The leases `health` reports.
pub(crate) const REPORTED_LEASES: &[&str] = &["cron", "maintenance"];

/// This gateway's membership of a fleet.
#[derive(Debug, Clone)]
pub(crate) struct Fleet {
    pool: PgPool,
    id: String,
    member: Arc<Mutex<members::Member>>,
    stop: CancellationToken,
    /// Held by a heartbeat while it runs and by [`Fleet::leave`], so a
    /// beat in flight cannot register the member again after it left.
    beat: Arc<Mutex<()>>,
}

fn shared_state(target: &str, source: StateError) -> GatewayError {
    GatewayError::SharedState {
        target: target.to_owned(),
        source,
    }
}

/// The driver config of `state`, the password looked up in the secrets
/// file (`${secret:NAME}`) or the environment (`${VAR}`).
pub(crate) fn pg_config(state: &StateConfig, state_dir: &Path) -> Result<PgConfig, GatewayError> {
    let url = state.url.clone().ok_or_else(|| GatewayError::Config {
        origin: "state".into(),
        message: "backend \"postgres\" needs state.url".into(),
    })?;
    let mut config = PgConfig::new(url);
    if let Some(reference) = &state.password {
        let secrets = talon_config::secrets::SecretStore::load(state_dir).map_err(|e| {
            GatewayError::State {
                path: state_dir.to_path_buf(),
                message: format!("state.password: {e}"),
            }
        })?;
        let lookup = secrets.lookup(|name| std::env::var(name).ok());
        let password = talon_config::sections::mcp::expand_env_refs(reference, |name| {
            lookup(name)
        })
        .map_err(|e| GatewayError::Config {
            origin: "state.password".into(),
            message: format!(
                "{e}: put the password in the secrets file ({}) or the environment variable it names",
                talon_config::secrets::SECRETS_FILE
            ),
        })?;
        config = config.with_password(password);
    }
    if let Some(pool) = &state.pool {
        if let Some(size) = pool.size {
            config.pool_size = usize::try_from(size).unwrap_or(usize::MAX);
        }
        if let Some(s) = pool.connect_timeout_seconds {
            config.connect_timeout = Duration::from_secs(s);
        }
        if let Some(s) = pool.statement_timeout_seconds {
            config.statement_timeout = Duration::from_secs(s);
        }
    }
    Ok(config)
}

impl Fleet {
    /// Join the fleet when `state` says PostgreSQL; `None` for SQLite.
    pub(crate) fn open(
        state: Option<&StateConfig>,
        state_dir: &Path,
        listen: SocketAddr,
    ) -> Result<Option<Fleet>, GatewayError> {
        let Some(state) = state.filter(|s| s.backend == StateBackend::Postgres) else {
            return Ok(None);
        };
        let config = pg_config(state, state_dir)?;
        let target = config.target();
        let pool = PgPool::connect(config).map_err(|e| shared_state(&target, e))?;
        let member = members::Member {
            id: members::new_member_id().map_err(|e| shared_state(&target, e))?,
            host: std::fs::read_to_string("/proc/sys/kernel/hostname")
                .map(|h| h.trim().to_owned())
                .unwrap_or_else(|_| "unknown".into()),
            pid: std::process::id(),
            listen: listen.to_string(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            started_at_ms: 0,
            heartbeat_at_ms: 0,
            live: true,
        };
        members::register(&pool, &member).map_err(|e| shared_state(&target, e))?;
        tracing::info!(member = %member.id, %target, "joined the fleet on the shared state database");
        Ok(Some(Fleet {
            pool,
            id: member.id.clone(),
            member: Arc::new(Mutex::new(member)),
            stop: CancellationToken::new(),
            beat: Arc::new(Mutex::new(())),
        }))
    }

    /// The pool the stores share.
    pub(crate) fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// A store that cannot open on the shared database.
    pub(crate) fn store_error(&self, store: &str, e: impl std::fmt::Display) -> GatewayError {
        GatewayError::State {
            path: std::path::PathBuf::from(format!("{} ({store})", self.pool.target())),
            message: e.to_string(),
        }
    }

    /// This gateway's member id.
    pub(crate) fn member_id(&self) -> &str {
        &self.id
    }

    fn member(&self) -> members::Member {
        self.member
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Record the address the gateway actually listens on (known once
    /// bound), for the other members to see.
    pub(crate) fn set_listen(&self, addr: SocketAddr) {
        let member = {
            let mut m = self.member.lock().unwrap_or_else(PoisonError::into_inner);
            m.listen = addr.to_string();
            m.clone()
        };
        let _held = self.beat.lock().unwrap_or_else(PoisonError::into_inner);
        if self.stop.is_cancelled() {
            return;
        }
        let result = self.pool.run(move |c| {
            c.execute(
                "UPDATE talon_members SET listen = $2 WHERE id = $1",
                &[&member.id, &member.listen],
            )?;
            Ok(())
        });
        if let Err(e) = result {
            tracing::warn!(code = e.code(), error = %e, "could not record the listen address in the fleet");
        }
    }

    /// Heartbeat until [`Fleet::leave`]; a member row pruned by another
    /// gateway is registered again. A lost database is logged and retried
    /// on the next beat.
    pub(crate) fn heartbeat_periodically(&self) {
        let fleet = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(members::HEARTBEAT_INTERVAL);
            loop {
                tokio::select! {
                    () = fleet.stop.cancelled() => return,
                    _ = tick.tick() => {}
                }
                let f = fleet.clone();
                let beat = tokio::task::spawn_blocking(move || {
                    let _held = f.beat.lock().unwrap_or_else(PoisonError::into_inner);
                    if f.stop.is_cancelled() {
                        return Ok(());
                    }
                    match members::heartbeat(&f.pool, &f.id)? {
                        true => Ok(()),
                        false => members::register(&f.pool, &f.member()),
                    }
                })
                .await;
                match beat {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => {
                        tracing::warn!(code = e.code(), error = %e, "fleet heartbeat failed")
                    }
                    Err(e) => tracing::warn!(error = %e, "fleet heartbeat task failed"),
                }
            }
        });
    }

    /// Stop heartbeating and leave the member list (a clean stop).
    pub(crate) fn leave(&self) {
        self.stop.cancel();
        let _held = self.beat.lock().unwrap_or_else(PoisonError::into_inner);
        if let Err(e) = members::leave(&self.pool, &self.id) {
            tracing::warn!(code = e.code(), error = %e, "could not leave the fleet cleanly");
        }
    }

    /// What `health` reports: members and leases, or why they could not
    /// be read.
    pub(crate) fn status(&self) -> StateStatus {
        let read = || -> Result<(Vec<FleetMember>, Vec<FleetLease>), StateError> {
            let members = members::list(&self.pool)?
                .into_iter()
                .map(|m| FleetMember {
                    id: m.id,
                    host: m.host,
                    pid: m.pid,
                    listen: m.listen,
                    version: m.version,
                    started_at_ms: m.started_at_ms,
                    heartbeat_at_ms: m.heartbeat_at_ms,
                    live: m.live,
                })
                .collect();
            let mut leases = Vec::new();
            for name in REPORTED_LEASES {
                if let Some(g) = lease::current(&self.pool, name)? {
                    leases.push(FleetLease {
                        name: g.name,
                        holder: g.holder,
                        token: g.token,
                        expires_at_ms: g.expires_at_ms,
                    });
                }
            }
            Ok((members, leases))
        };
        let (members, leases, error) = match read() {
            Ok((m, l)) => (m, l, None),
            Err(e) => (Vec::new(), Vec::new(), Some(e.to_string())),
        };
        StateStatus {
            backend: "postgres".into(),
            target: Some(self.pool.target().to_owned()),
            member_id: Some(self.id.clone()),
            members,
            leases,
            error,
        }
    }
}

/// The maintenance lease's time to live; renewed every
/// [`FOLLOW_INTERVAL`].
const MAINTENANCE_LEASE: Duration = Duration::from_secs(5);
/// How often each member follows the fleet (cancels made elsewhere, the
/// maintenance lease).
const FOLLOW_INTERVAL: Duration = Duration::from_secs(1);
/// Members silent this long are removed from the list by the maintenance
/// owner (their in-flight work was recovered long before).
const FORGET_MEMBERS_AFTER: Duration = Duration::from_secs(3600);

impl Fleet {
    /// The ids of the live members (this one included, even when its own
    /// heartbeat is late); `None` when they cannot be read, so the caller
    /// takes nothing over.
    pub(crate) fn live_member_ids(&self) -> Option<std::collections::HashSet<String>> {
        match members::list(&self.pool) {
            Ok(list) => {
                let mut live: std::collections::HashSet<String> =
                    list.into_iter().filter(|m| m.live).map(|m| m.id).collect();
                live.insert(self.id.clone());
                Some(live)
            }
            Err(e) => {
                tracing::warn!(code = e.code(), error = %e, "cannot read the fleet's members");
                None
            }
        }
    }
}

impl crate::gateway::Gateway {
    /// Every second, on each member: fire the tokens of tasks this member
    /// runs that were cancelled on another member, and close the sessions
    /// open here that another member closed. On the holder of the
    /// `maintenance` lease only: mark `lost` the sub-agent tasks of members
    /// that are gone, sweep the task ledger (stale runs, retention) every
    /// [`talon_tasks::SWEEP_INTERVAL_MS`], and forget long-silent members.
    pub(crate) fn follow_fleet(&self) {
        let weak = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(FOLLOW_INTERVAL);
            let mut held: Option<lease::LeaseGrant> = None;
            let mut last_sweep: Option<std::time::Instant> = None;
            loop {
                tick.tick().await;
                let Some(inner) = weak.upgrade() else { break };
                if inner.calls.is_shutting_down() {
                    if let (Some(fleet), Some(grant)) = (inner.fleet.clone(), held.take()) {
                        let _ = tokio::task::spawn_blocking(move || {
                            lease::release(fleet.pool(), &grant)
                        })
                        .await;
                    }
                    break;
                }
                if inner.fleet.is_none() || inner.tasks.ledger.is_none() {
                    break;
                }
                let previous = held.take();
                let due = last_sweep.is_none_or(|t: std::time::Instant| {
                    t.elapsed().as_millis()
                        >= u128::try_from(talon_tasks::SWEEP_INTERVAL_MS).unwrap_or(60_000)
                });
                let step = tokio::task::spawn_blocking(move || {
                    let (Some(fleet), Some(ledger)) = (&inner.fleet, &inner.tasks.ledger) else {
                        return (None, false);
                    };
                    if let Err(e) = ledger.poll_cancelled() {
                        tracing::warn!(code = e.code(), error = %e, "cannot poll for tasks cancelled elsewhere");
                    }
                    inner.sessions.close_those_closed_elsewhere();
                    let grant = match &previous {
                        Some(g) => lease::renew(fleet.pool(), g, MAINTENANCE_LEASE),
                        None => lease::acquire(
                            fleet.pool(),
                            "maintenance",
                            fleet.member_id(),
                            MAINTENANCE_LEASE,
                        ),
                    };
                    let grant = match grant {
                        Ok(g) => g,
                        Err(e) => {
                            tracing::warn!(code = e.code(), error = %e, "cannot hold the maintenance lease");
                            None
                        }
                    };
                    let mut swept = false;
                    if grant.is_some() {
                        // Requests of gone members are denied, never approved.
                        match inner.approvals.broker.store().recover_pending() {
                            Ok(denied) if !denied.is_empty() => tracing::warn!(
                                approvals = denied.len(),
                                "approvals pending on a gateway that is gone are resolved as denied"
                            ),
                            Ok(_) => {}
                            Err(e) => tracing::warn!(error = %e, "cannot recover the approvals of gone members"),
                        }
                        if let Some(live) = fleet.live_member_ids() {
                            crate::subagents::mark_lost_left_running(ledger, Some(&live));
                        }
                        if due {
                            if let Err(e) = ledger.sweep() {
                                tracing::warn!(code = e.code(), error = %e, "task ledger sweep failed");
                            }
                            if let Err(e) = members::prune(fleet.pool(), FORGET_MEMBERS_AFTER) {
                                tracing::warn!(code = e.code(), error = %e, "cannot prune silent members");
                            }
                            swept = true;
                        }
                    }
                    (grant, swept)
                })
                .await;
                if let Ok((grant, swept)) = step {
                    held = grant;
                    if swept {
                        last_sweep = Some(std::time::Instant::now());
                    }
                }
            }
        });
    }
}
