//! Several gateways on one PostgreSQL database: exactly one timer owner
//! by the `cron` lease, each slot fired once across the fleet, takeover
//! when the owner dies, and a stale owner's writes fenced. Each member has
//! its own tokio runtime and connection pool, as a separate process would;
//! killing a member drops its runtime without `stop` (no lease release, no
//! more renewals), as a SIGKILL would.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use talon_cron::postgres::{PgTimerLease, open_store};
use talon_cron::*;
use talon_state::PgPool;
use talon_test_support::postgres::{PgServer, TestDb, shared_database};

use super::common::*;

/// How long three gateways run a job that fires every second.
const FLEET_RUN: Duration = Duration::from_secs(30);
/// The job's interval.
const EVERY_MS: i64 = 1_000;

struct Member {
    id: String,
    rt: Option<tokio::runtime::Runtime>,
    svc: CronService,
    runner: Arc<Scripted>,
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

fn options(ttl: Duration, renew: Duration) -> CronOptions {
    CronOptions {
        quotas: CronQuotas::unlimited(),
        lease_ttl: ttl,
        lease_renew_every: renew,
        ..CronOptions::default()
    }
}

impl Member {
    /// A gateway on `db` with its own pool and runtime, started.
    fn start(db: &TestDb, id: &str, runner: Arc<Scripted>, opts: CronOptions) -> Member {
        Member::start_on(&db.config(), id, runner, opts)
    }

    fn start_on(
        config: &talon_state::PgConfig,
        id: &str,
        runner: Arc<Scripted>,
        opts: CronOptions,
    ) -> Member {
        let pool = PgPool::connect(config.clone()).unwrap();
        let svc = CronService::open_postgres(&pool, id, runner.clone(), opts).unwrap();
        Member::run(id, svc, runner)
    }

    fn run(id: &str, svc: CronService, runner: Arc<Scripted>) -> Member {
        let rt = runtime();
        {
            let _in = rt.enter();
            svc.start().unwrap();
        }
        Member {
            id: id.to_owned(),
            rt: Some(rt),
            svc,
            runner,
        }
    }

    /// Inside this member's runtime (job changes re-arm its timer).
    fn enter(&self) -> tokio::runtime::EnterGuard<'_> {
        self.rt.as_ref().unwrap().enter()
    }

    fn owns(&self) -> bool {
        self.svc.timer_lease().unwrap().unwrap().owner_here
    }

    /// Die: every task stops where it is; nothing is released.
    fn kill(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }

    fn stop(&mut self) {
        if let Some(rt) = self.rt.take() {
            let _in = rt.enter();
            self.svc.stop();
            drop(_in);
            rt.shutdown_background();
        }
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        self.stop();
    }
}

fn wait_until(limit: Duration, mut what: impl FnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if what() {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

/// `f`, tried again while the store answers `unavailable` (a pooled
/// connection that died with the server fails one call), for up to 10 s.
fn retry_unavailable<T>(mut f: impl FnMut() -> Result<T>) -> T {
    let start = Instant::now();
    loop {
        match f() {
            Ok(v) => return v,
            Err(e) if e.is_unavailable() && start.elapsed() < Duration::from_secs(10) => {
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => panic!("{e}"),
        }
    }
}

/// Every recorded run's slot, checked distinct.
fn slots(runs: &[RunRecord]) -> Vec<i64> {
    let mut by_slot: BTreeMap<i64, Vec<&str>> = BTreeMap::new();
    for r in runs {
        let slot = r.slot_ms.expect("a scheduled run records its slot");
        by_slot.entry(slot).or_default().push(&r.run_id);
    }
    for (slot, ids) in &by_slot {
        assert_eq!(ids.len(), 1, "slot {slot} ran more than once: {ids:?}");
    }
    by_slot.into_keys().collect()
}

fn calls(members: &[&Member]) -> usize {
    members.iter().map(|m| m.runner.calls().len()).sum()
}

/// Every runner call fleet-wide is one recorded run (no run is executed
/// twice or unrecorded), and every run that ended `ok` was called. A run
/// recorded but never handed to a runner (its gateway lost the lease
/// first) is one a new owner marked interrupted.
fn calls_match_runs(members: &[&Member], runs: &[RunRecord]) {
    calls_match_runs_except(members, runs, &[]);
}

/// [`calls_match_runs`], but the runs in `lost` may be missing from the
/// history (see the database-loss test).
fn calls_match_runs_except(members: &[&Member], runs: &[RunRecord], lost: &[String]) {
    let mut called: Vec<String> = members
        .iter()
        .flat_map(|m| m.runner.calls().into_iter().map(|c| c.run_id))
        .collect();
    called.sort();
    let n = called.len();
    called.dedup();
    assert_eq!(called.len(), n, "a run handed to a runner twice");
    for id in &called {
        assert!(
            runs.iter().any(|r| &r.run_id == id) || lost.contains(id),
            "run {id} ran unrecorded"
        );
    }
    for r in runs {
        let was_called = called.contains(&r.run_id);
        match r.status {
            RunStatus::Ok => assert!(was_called, "run {} ok but never called", r.run_id),
            RunStatus::Interrupted => {}
            other => panic!("run {} ended {other:?}", r.run_id),
        }
    }
}

/// The slots follow the job's grid with none skipped while the job was
/// idle: a slot is passed over only while the run before it was still
/// going (a run that ends after the next slot moves the job to the slot
/// after that, the rule one process follows too).
fn no_slot_skipped_while_idle(runs: &[RunRecord]) {
    let mut by_slot: Vec<&RunRecord> = runs.iter().collect();
    by_slot.sort_by_key(|r| r.slot_ms);
    for w in by_slot.windows(2) {
        let (prev, next) = (w[0], w[1]);
        let (s0, s1) = (prev.slot_ms.unwrap(), next.slot_ms.unwrap());
        assert_eq!((s1 - s0) % EVERY_MS, 0, "off the grid: {s0} then {s1}");
        if s1 - s0 > EVERY_MS {
            let ended = prev.ended_at_ms.unwrap_or(i64::MAX);
            assert!(
                ended >= s1 - EVERY_MS,
                "slot {} skipped although the run of {s0} ended at {ended}",
                s1 - EVERY_MS
            );
        }
    }
}

#[test]
fn three_gateways_fire_every_slot_exactly_once() {
    let db = shared_database().unwrap();
    let opts = || options(DEFAULT_LEASE_TTL, DEFAULT_LEASE_RENEW);
    let mut members: Vec<Member> = ["gw-a", "gw-b", "gw-c"]
        .into_iter()
        .map(|id| Member::start(&db, id, Scripted::new([]), opts()))
        .collect();
    let owners: Vec<&str> = members
        .iter()
        .filter(|m| m.owns())
        .map(|m| m.id.as_str())
        .collect();
    assert_eq!(owners, ["gw-a"], "the first to start owns the timer, alone");
    // Added on a gateway that does not own the timer: the owner picks it
    // up from the shared store.
    let job = {
        let _in = members[2].enter();
        members[2]
            .svc
            .add(agent_turn("every-second", every(EVERY_MS)), &operator())
            .unwrap()
            .job
    };
    std::thread::sleep(FLEET_RUN);
    let _in = members[1].enter();
    members[1]
        .svc
        .update(
            &job.id,
            JobPatch {
                enabled: Some(false),
                ..JobPatch::default()
            },
            &operator(),
        )
        .unwrap();
    drop(_in);
    std::thread::sleep(Duration::from_millis(1_500));
    for m in &mut members {
        m.stop();
    }

    let runs = members[0].svc.runs(&job.id, 0).unwrap();
    let slots = slots(&runs);
    assert!(
        runs.iter().all(|r| r.status == RunStatus::Ok),
        "{:?}",
        runs.iter()
            .map(|r| (r.slot_ms, r.status))
            .collect::<Vec<_>>()
    );
    calls_match_runs(&members.iter().collect::<Vec<_>>(), &runs);
    assert_eq!(members[1].runner.calls().len(), 0, "only the owner fires");
    assert_eq!(members[2].runner.calls().len(), 0, "only the owner fires");
    no_slot_skipped_while_idle(&runs);
    let skipped = slots.windows(2).filter(|w| w[1] - w[0] != EVERY_MS).count();
    if skipped > 0 {
        eprintln!(
            "{skipped} slot(s) passed over while a run was still going (a loaded machine): {slots:?}"
        );
    }
    let expected = i64::try_from(FLEET_RUN.as_secs()).unwrap();
    let n = i64::try_from(slots.len()).unwrap();
    assert!(
        (expected - 3..=expected + 1).contains(&n),
        "{n} slots in {expected} s"
    );
}

#[test]
fn a_dead_owner_is_replaced_within_the_lease_time_and_its_run_is_interrupted() {
    let db = shared_database().unwrap();
    let ttl = Duration::from_secs(3);
    let renew = Duration::from_millis(500);
    let hanging = Scripted::new([Step::Hang]);
    let mut a = Member::start(&db, "gw-a", hanging.clone(), options(ttl, renew));
    assert!(a.owns());
    let b = Member::start(&db, "gw-b", Scripted::new([]), options(ttl, renew));
    let c = Member::start(&db, "gw-c", Scripted::new([]), options(ttl, renew));
    let job = {
        let _in = b.enter();
        b.svc
            .add(agent_turn("every-second", every(EVERY_MS)), &operator())
            .unwrap()
            .job
    };
    // The owner starts a run and is killed in the middle of it.
    assert!(
        wait_until(Duration::from_secs(5), || hanging.calls().len() == 1).is_some(),
        "the owner fires the job"
    );
    let cut = b.svc.runs(&job.id, 0).unwrap();
    assert_eq!(cut.len(), 1);
    assert_eq!(cut[0].status, RunStatus::Running);
    let cut_slot = cut[0].slot_ms;
    a.kill();
    let killed = Instant::now();

    let took = wait_until(ttl * 3, || b.owns() || c.owns()).expect("another gateway takes over");
    assert!(
        took <= ttl + renew * 2,
        "taken over {took:?} after the kill, lease time {ttl:?}"
    );
    let new_owner = if b.owns() { &b } else { &c };
    assert!(
        wait_until(Duration::from_secs(5), || new_owner.runner.calls().len()
            >= 3)
        .is_some(),
        "the new owner fires the following slots"
    );
    let runs = b.svc.runs(&job.id, 0).unwrap();
    let cut_run = runs.iter().find(|r| r.run_id == cut[0].run_id).unwrap();
    assert_eq!(cut_run.status, RunStatus::Interrupted, "marked, not re-run");
    assert_eq!(
        runs.iter().filter(|r| r.slot_ms == cut_slot).count(),
        1,
        "the interrupted slot never runs again"
    );
    slots(&runs);
    assert_eq!(hanging.calls().len(), 1);
    assert!(
        runs.iter()
            .filter(|r| r.run_id != cut_run.run_id)
            .all(|r| r.slot_ms > cut_slot),
        "nothing before or at the cut slot is re-run"
    );
    assert!(killed.elapsed() < Duration::from_secs(20));
    let job_now = b.svc.get(&job.id).unwrap().unwrap();
    assert!(
        job_now.enabled,
        "a recurring job keeps running after takeover"
    );
    let lease = c.svc.timer_lease().unwrap().unwrap();
    assert_eq!(
        lease.holder.as_ref().map(|h| h.holder.as_str()),
        Some(new_owner.id.as_str())
    );
    assert!(lease.holder.unwrap().token >= 2, "a new token");
}

/// A lease that, once `stale` is set, answers every renewal with the grant
/// it already had without asking the database: a gateway that believes it
/// still owns the timer (a paused VM, renewals lost in a partition).
#[derive(Debug)]
struct StaleBelief {
    real: PgTimerLease,
    stale: AtomicBool,
}

impl TimerLease for StaleBelief {
    fn acquire(&self, holder: &str, ttl: Duration) -> Result<Option<TimerGrant>> {
        self.real.acquire(holder, ttl)
    }
    fn renew(&self, held: &TimerGrant, ttl: Duration) -> Result<Option<TimerGrant>> {
        if self.stale.load(Ordering::SeqCst) {
            return Ok(Some(held.clone()));
        }
        self.real.renew(held, ttl)
    }
    fn release(&self, held: &TimerGrant) -> Result<()> {
        self.real.release(held)
    }
    fn current(&self) -> Result<Option<TimerGrant>> {
        self.real.current()
    }
}

#[test]
fn a_stale_owner_is_fenced_and_runs_nothing() {
    let db = shared_database().unwrap();
    let ttl = Duration::from_secs(2);
    let renew = Duration::from_millis(400);
    let pool = db.pool().unwrap();
    let belief = Arc::new(StaleBelief {
        real: PgTimerLease::new(&pool),
        stale: AtomicBool::new(false),
    });
    let a_runner = Scripted::new([]);
    let a_svc = CronService::open_fleet(
        open_store(&pool).unwrap(),
        belief.clone(),
        "gw-a",
        a_runner.clone(),
        options(ttl, renew),
    )
    .unwrap();
    let a = Member::run("gw-a", a_svc, a_runner.clone());
    assert!(a.owns());
    let b = Member::start(&db, "gw-b", Scripted::new([]), options(ttl, renew));
    let job = {
        let _in = b.enter();
        b.svc
            .add(agent_turn("every-second", every(EVERY_MS)), &operator())
            .unwrap()
            .job
    };
    assert!(wait_until(Duration::from_secs(5), || !a_runner.calls().is_empty()).is_some());
    // A stops renewing but believes it still holds the lease.
    belief.stale.store(true, Ordering::SeqCst);
    assert!(
        wait_until(ttl * 3, || b.owns()).is_some(),
        "B takes the lapsed lease"
    );
    let b_took = b.svc.timer_lease().unwrap().unwrap().holder.unwrap();
    let a_calls = a_runner.calls().len();
    // A still believes it owns the timer and fires under its old token
    // (its own timer races B's for each slot; a manual run fires at once).
    let refused = wait_until(Duration::from_secs(10), || {
        if a.svc.stats().fenced >= 1 {
            return true;
        }
        let _in = a.enter();
        let r = a.svc.run_now(&job.id, true).unwrap();
        assert!(!r.ran, "{r:?}");
        r.reason == "not-timer-owner"
    });
    assert!(
        refused.is_some(),
        "the stale owner's fire is refused by the fence"
    );
    assert!(a.svc.stats().fenced >= 1);
    assert!(
        wait_until(Duration::from_secs(5), || b.runner.calls().len() >= 2).is_some(),
        "B fires"
    );
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        a_runner.calls().len(),
        a_calls,
        "nothing runs on A after the refusal"
    );
    assert!(!a.owns(), "A knows it lost the timer");
    let runs = b.svc.runs(&job.id, 0).unwrap();
    slots(&runs);
    let a_run_ids: Vec<String> = a_runner.calls().iter().map(|c| c.run_id.clone()).collect();
    for r in &runs {
        if a_run_ids.contains(&r.run_id) {
            assert!(
                r.started_at_ms < b_took.expires_at_ms,
                "A's runs all started before B held the lease"
            );
        }
    }
    assert!(b_took.token > 1);
}

/// Gateways adding jobs at once stay under the agent's quota together: the
/// count and the insert are one step in the shared store. Eight stores
/// (each its own pool, as eight gateways) race to fill one agent's quota.
#[test]
fn concurrent_adds_across_gateways_stay_under_the_quota() {
    const GATEWAYS: usize = 8;
    const LIMIT: u64 = 20;
    let db = shared_database().unwrap();
    let stores: Vec<CronStore> = (0..GATEWAYS)
        .map(|_| {
            let pool = PgPool::connect(db.config().with_pool_size(1)).unwrap();
            open_store(&pool).unwrap()
        })
        .collect();
    let barrier = std::sync::Barrier::new(GATEWAYS);
    let stored: usize = std::thread::scope(|scope| {
        let handles: Vec<_> = stores
            .into_iter()
            .enumerate()
            .map(|(g, mut store)| {
                let barrier = &barrier;
                scope.spawn(move || {
                    barrier.wait();
                    let mut stored = 0;
                    for n in 0..LIMIT {
                        let (job, _) = build_job(
                            format!("g{g}-{n}"),
                            agent_turn("j", every(60_000)),
                            &operator(),
                            T0,
                        )
                        .unwrap();
                        match store.put_admitted(&job, u64::MAX, LIMIT).unwrap() {
                            Admission::Stored => stored += 1,
                            Admission::AgentFull(held) => assert_eq!(held, LIMIT),
                            other => panic!("{other:?}"),
                        }
                    }
                    stored
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert_eq!(stored, usize::try_from(LIMIT).unwrap());
    let check = open_store(&db.pool().unwrap()).unwrap();
    assert_eq!(check.count_for_agent("main").unwrap(), LIMIT);
}

/// The service admits through the same step: a job past the quota on one
/// gateway is refused while another gateway holds the rest.
#[test]
fn the_quota_counts_jobs_added_on_every_gateway() {
    let db = shared_database().unwrap();
    let quotas = CronQuotas {
        max_jobs_per_agent: 2,
        ..CronQuotas::unlimited()
    };
    let open = |id: &str| {
        CronService::open_postgres(
            &db.pool().unwrap(),
            id,
            Scripted::new([]),
            CronOptions {
                quotas,
                ..CronOptions::default()
            },
        )
        .unwrap()
    };
    let (a, b) = (open("gw-a"), open("gw-b"));
    a.add(agent_turn("one", every(60_000)), &operator())
        .unwrap();
    b.add(agent_turn("two", every(60_000)), &operator())
        .unwrap();
    match a.add(agent_turn("three", every(60_000)), &operator()) {
        Err(CronError::Quota { limit, max, .. }) => {
            assert_eq!((limit, max), (QuotaLimit::JobsPerAgent, 2));
        }
        other => panic!("expected the agent quota, got {other:?}"),
    }
    assert_eq!(b.list(true).unwrap().len(), 2);
}

/// The store refuses a fire and a takeover under a token that is no longer
/// current, and writes nothing.
#[test]
fn a_stale_token_is_fenced_in_the_store() {
    let db = shared_database().unwrap();
    let pool: PgPool = db.pool().unwrap();
    let mut store = open_store(&pool).unwrap();
    let (job, _) = build_job(
        "j".into(),
        agent_turn("j", every(EVERY_MS)),
        &operator(),
        T0,
    )
    .unwrap();
    store.put(&job).unwrap();
    let old = talon_state::lease::acquire(&pool, "cron", "old", Duration::from_millis(200))
        .unwrap()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let new = talon_state::lease::acquire(&pool, "cron", "new", Duration::from_secs(30))
        .unwrap()
        .unwrap();
    assert!(new.token > old.token);
    let mut claimed = job.clone();
    claimed.state.running_at_ms = Some(T0);
    let run = RunRecord {
        run_id: "r".into(),
        job_id: "j".into(),
        session_key: None,
        reason: "scheduled".into(),
        started_at_ms: T0,
        ended_at_ms: None,
        status: RunStatus::Running,
        error: None,
        summary: None,
        slot_ms: Some(T0),
    };
    let err = store
        .begin_fenced_run(&claimed, &run, Some(old.token))
        .unwrap_err();
    assert!(err.is_fenced(), "{err}");
    match &err {
        CronError::State { source, .. } => assert_eq!(source.code(), "fenced"),
        other => panic!("expected a state error, got {other:?}"),
    }
    assert_eq!(store.get("j").unwrap().unwrap().state.running_at_ms, None);
    assert!(store.runs("j", 0).unwrap().is_empty(), "no run recorded");
    assert!(
        store
            .interrupt_runs_before(T0, old.token)
            .unwrap_err()
            .is_fenced()
    );
    // The current token writes.
    assert_eq!(
        store
            .begin_fenced_run(&claimed, &run, Some(new.token))
            .unwrap(),
        BeginRun::Started
    );
}

/// `cron.run` on a gateway that does not own the timer makes the job due
/// on the owner, which runs it; nothing runs on the asking gateway.
#[test]
fn a_manual_run_on_a_non_owner_runs_on_the_owner() {
    let db = shared_database().unwrap();
    let opts = || options(DEFAULT_LEASE_TTL, Duration::from_millis(300));
    let a = Member::start(&db, "gw-a", Scripted::new([]), opts());
    let b = Member::start(&db, "gw-b", Scripted::new([]), opts());
    assert!(a.owns() && !b.owns());
    let job = {
        let _in = b.enter();
        b.svc
            .add(agent_turn("daily", every(86_400_000)), &operator())
            .unwrap()
            .job
    };
    let asked = {
        let _in = b.enter();
        b.svc.run_now(&job.id, true).unwrap()
    };
    assert_eq!(
        (asked.ran, asked.reason.as_str()),
        (false, "queued-on-timer-owner")
    );
    assert!(
        wait_until(Duration::from_secs(5), || a.runner.calls().len() == 1).is_some(),
        "the owner runs it within a renewal period"
    );
    std::thread::sleep(Duration::from_millis(700));
    assert!(b.runner.calls().is_empty());
    assert_eq!(a.runner.calls().len(), 1, "once");
    let after = a.svc.get(&job.id).unwrap().unwrap();
    assert!(
        after.state.next_run_at_ms.unwrap() > job.state.next_run_at_ms.unwrap() - 1,
        "back on its daily schedule"
    );
}

/// The database goes away mid-run and comes back: calls fail as
/// `unavailable` meanwhile, the timer stops, and afterwards one gateway
/// owns it again and the job runs on, each slot at most once and no run
/// left `running`.
#[test]
fn the_database_lost_mid_run_stops_the_timer_until_it_returns() {
    let mut server = PgServer::start().unwrap();
    let name = server.create_database().unwrap();
    let config = server.config(&name);
    let ttl = Duration::from_secs(2);
    let renew = Duration::from_millis(400);
    let a = Member::start_on(&config, "gw-a", Scripted::new([]), options(ttl, renew));
    let b = Member::start_on(&config, "gw-b", Scripted::new([]), options(ttl, renew));
    let job = {
        let _in = b.enter();
        b.svc
            .add(agent_turn("every-second", every(EVERY_MS)), &operator())
            .unwrap()
            .job
    };
    assert!(
        wait_until(Duration::from_secs(10), || a.runner.calls().len() >= 2).is_some(),
        "A fires: a {} b {} calls, a owns {}, b owns {}, runs {:?}",
        a.runner.calls().len(),
        b.runner.calls().len(),
        a.owns(),
        b.owns(),
        b.svc.runs(&job.id, 0).unwrap()
    );

    // The test server runs with `synchronous_commit=off` (speed), so its
    // immediate stop may lose the last commits, run records among them:
    // only runs called before the stop may be missing afterwards.
    let before_stop: Vec<String> = [&a, &b]
        .iter()
        .flat_map(|m| m.runner.calls().into_iter().map(|c| c.run_id))
        .collect();
    server.stop().unwrap();
    let err = b.svc.list(true).unwrap_err();
    assert!(err.is_unavailable(), "{err}");
    // Past the lease time nobody trusts its hold any more: nothing fires.
    std::thread::sleep(ttl + renew * 2);
    assert!(
        !a.svc
            .status()
            .is_ok_and(|s| s.lease.is_some_and(|l| l.owner_here))
    );
    let during = calls(&[&a, &b]);
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        calls(&[&a, &b]),
        during,
        "no run while the database is gone"
    );

    server.start_again().unwrap();
    assert!(
        wait_until(Duration::from_secs(20), || {
            a.svc.timer_lease().is_ok_and(|l| l.unwrap().owner_here)
                || b.svc.timer_lease().is_ok_and(|l| l.unwrap().owner_here)
        })
        .is_some(),
        "a gateway owns the timer again"
    );
    assert!(
        wait_until(Duration::from_secs(10), || calls(&[&a, &b]) >= during + 2).is_some(),
        "the job runs on: job {:?}\nruns {:?}\na {:?} {:?}\nb {:?} {:?}",
        b.svc.get(&job.id),
        b.svc.runs(&job.id, 0),
        a.svc.timer_lease(),
        a.svc.status(),
        b.svc.timer_lease(),
        b.svc.status(),
    );
    // A pooled connection that died with the server fails its next call
    // (`unavailable`) and is reopened: a caller tries again.
    let disabled = wait_until(Duration::from_secs(10), || {
        let _in = b.enter();
        let patch = JobPatch {
            enabled: Some(false),
            ..JobPatch::default()
        };
        match b.svc.update(&job.id, patch, &operator()) {
            Ok(_) => true,
            Err(e) if e.is_unavailable() => false,
            Err(e) => panic!("{e}"),
        }
    });
    assert!(disabled.is_some(), "the store answers again");
    std::thread::sleep(Duration::from_millis(1_500));
    let runs = retry_unavailable(|| b.svc.runs(&job.id, 0));
    slots(&runs);
    // Runs cut off by the outage are interrupted, none left `running`.
    calls_match_runs_except(&[&a, &b], &runs, &before_stop);
}
