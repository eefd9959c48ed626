// A fleet on one real PostgreSQL database: two brokers, each with its own
// pool and member id, as two gateways would have. (The store contract and
// the broker suite run on PostgreSQL too: `store_tests` and
// `store_broker_tests`, module `postgres`.)

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Map, json};
use talon_state::members::{self, Member};
use talon_test_support::postgres::{PgServer, TestDb, shared_database};
use talon_tool_catalog::CancellationToken;

use super::*;
use crate::approval::{
    ApprovalBroker, ApprovalEvent, ApprovalResolution, Broker, PostgresApprovalBroker,
    SHARED_POLL_INTERVAL,
};
use crate::event::ApprovalSpec;

/// How long after a decision on one gateway the waiter on another may take
/// to learn of it: the bound the issue sets.
const CROSS_GATEWAY_BOUND: Duration = Duration::from_millis(250);

fn request_with(call: &str, marker: &str, timeout: Duration) -> ApprovalRequest {
    let mut params = Map::new();
    params.insert("command".into(), json!(format!("echo {call} {marker}")));
    ApprovalRequest::new(
        &ApprovalSpec {
            title: "Run command".into(),
            description: "Allow this exec tool call?".into(),
            plugin_id: Some("guard".into()),
            ..ApprovalSpec::default()
        },
        call,
        "exec",
        &params,
        "agent-a",
        "session-1",
        timeout,
    )
}

fn request(call: &str) -> ApprovalRequest {
    request_with(call, "", Duration::from_secs(60))
}

/// Register a fleet member on `pool` and return its id.
fn join(pool: &PgPool) -> String {
    let id = members::new_member_id().unwrap();
    members::register(
        pool,
        &Member {
            id: id.clone(),
            host: "test-host".into(),
            pid: std::process::id(),
            listen: "127.0.0.1:0".into(),
            version: "test".into(),
            started_at_ms: 0,
            heartbeat_at_ms: 0,
            live: true,
        },
    )
    .unwrap();
    id
}

/// Two gateways on one database.
struct Fleet {
    a: Arc<PostgresApprovalBroker>,
    b: Arc<PostgresApprovalBroker>,
    pool: PgPool,
    _db: TestDb,
}

fn fleet() -> Fleet {
    let db = shared_database().unwrap();
    let (pool_a, pool_b) = (db.pool().unwrap(), db.pool().unwrap());
    let a = Broker::open_postgres(&pool_a, join(&pool_a)).unwrap();
    let b = Broker::open_postgres(&pool_b, join(&pool_b)).unwrap();
    Fleet {
        a: Arc::new(a),
        b: Arc::new(b),
        pool: pool_a,
        _db: db,
    }
}

/// Raise `request` on `broker` on a task of its own, and wait until it is
/// announced there.
async fn raise(
    broker: &Arc<PostgresApprovalBroker>,
    request: ApprovalRequest,
) -> tokio::task::JoinHandle<ApprovalResolution> {
    let mut events = broker.subscribe();
    let id = request.id.clone();
    let task = {
        let broker = Arc::clone(broker);
        tokio::spawn(async move { broker.request(request, &CancellationToken::new()).await })
    };
    loop {
        match events.recv().await.unwrap() {
            ApprovalEvent::Requested(asked) if asked.id == id => return task,
            _ => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_raised_on_one_gateway_is_resolved_on_another() {
    let fleet = fleet();
    // How long A's waiter takes to learn of B's decision, over a few
    // rounds: the poll bound holds when the machine is not starved (the
    // best round), and no round ever falls back to the timeout (the
    // slowest is far below it) even when other tests load the machine.
    let mut took = Vec::new();
    for round in 0..5 {
        let req = request(&format!("c{round}"));
        let waiting = raise(&fleet.a, req.clone()).await;
        // B lists A's request, whole, and resolves it.
        assert_eq!(fleet.b.pending(), vec![req.clone()]);
        assert_eq!(fleet.a.pending(), vec![req.clone()]);
        let decided = Instant::now();
        assert_eq!(
            fleet
                .b
                .resolve(&req.id, ApprovalDecision::AllowOnce, Some(&req.binding())),
            ResolveOutcome::Applied
        );
        let resolution = waiting.await.unwrap();
        took.push(decided.elapsed());
        assert_eq!(
            resolution,
            ApprovalResolution::decided(ApprovalDecision::AllowOnce)
        );
        // Ended everywhere; a second decision is a duplicate on either side.
        assert_eq!(fleet.a.pending(), vec![]);
        assert_eq!(fleet.b.pending(), vec![]);
        for broker in [&fleet.a, &fleet.b] {
            assert_eq!(
                broker.resolve(&req.id, ApprovalDecision::Deny, None),
                ResolveOutcome::AlreadyResolved
            );
        }
        // A, whose call it was, concluded it: one audit row.
        assert_eq!(
            fleet.a.store().decisions_for(&req.id).unwrap(),
            vec!["allow-once"]
        );
    }
    let (best, worst) = (took.iter().min(), took.iter().max());
    assert!(
        best.is_some_and(|t| *t <= CROSS_GATEWAY_BOUND),
        "A learned of B's decision after {took:?} (poll every {SHARED_POLL_INTERVAL:?})"
    );
    assert!(
        worst.is_some_and(|t| *t < Duration::from_secs(5)),
        "{took:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_announces_the_requests_other_gateways_raise() {
    let fleet = fleet();
    let mut on_b = fleet.b.subscribe();
    let mut on_a = fleet.a.subscribe();
    let req = request("c1");
    let waiting = raise(&fleet.a, req.clone()).await;
    assert_eq!(
        on_a.recv().await.unwrap(),
        ApprovalEvent::Requested(req.clone())
    );
    // B's clients hear of A's request once, however often B follows.
    fleet.b.sync_shared().unwrap();
    fleet.b.sync_shared().unwrap();
    assert_eq!(
        on_b.try_recv().unwrap(),
        ApprovalEvent::Requested(req.clone())
    );
    assert!(on_b.try_recv().is_err());
    // A does not announce its own request twice.
    fleet.a.sync_shared().unwrap();
    assert!(on_a.try_recv().is_err());
    // B decides; once A has concluded, B's clients hear how it ended.
    fleet.b.resolve(&req.id, ApprovalDecision::Deny, None);
    waiting.await.unwrap();
    fleet.b.sync_shared().unwrap();
    assert_eq!(
        on_b.try_recv().unwrap(),
        ApprovalEvent::Resolved {
            id: req.id.clone(),
            call_id: req.call_id.clone(),
            decision: ApprovalDecision::Deny,
        }
    );
    // The follower loop does the same on its own, and stops when told.
    let stop = CancellationToken::new();
    let follower = {
        let (b, stop) = (Arc::clone(&fleet.b), stop.clone());
        tokio::spawn(async move { b.follow_shared(&stop).await })
    };
    let second = request("c2");
    let waiting = raise(&fleet.a, second.clone()).await;
    let heard = tokio::time::timeout(Duration::from_secs(5), on_b.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(heard, ApprovalEvent::Requested(second.clone()));
    fleet
        .b
        .resolve(&second.id, ApprovalDecision::AllowOnce, None);
    waiting.await.unwrap();
    stop.cancel();
    follower.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_or_not_allowed_decision_from_another_gateway_changes_nothing() {
    let fleet = fleet();
    let mut req = request("c1");
    req.allowed_decisions = vec![ApprovalDecision::AllowOnce, ApprovalDecision::Deny];
    let waiting = raise(&fleet.a, req.clone()).await;
    let stale = ApprovalBinding {
        call_id: "c2".into(),
        params_hash: req.params_hash.clone(),
    };
    assert_eq!(
        fleet
            .b
            .resolve(&req.id, ApprovalDecision::AllowOnce, Some(&stale)),
        ResolveOutcome::Stale
    );
    assert_eq!(
        fleet
            .b
            .resolve(&req.id, ApprovalDecision::AllowAlways, None),
        ResolveOutcome::NotAllowed
    );
    tokio::time::sleep(SHARED_POLL_INTERVAL * 3).await;
    assert!(!waiting.is_finished());
    assert_eq!(fleet.b.pending(), vec![req.clone()]);
    assert_eq!(
        fleet.b.resolve(&req.id, ApprovalDecision::Deny, None),
        ResolveOutcome::Applied
    );
    assert_eq!(
        waiting.await.unwrap(),
        ApprovalResolution::decided(ApprovalDecision::Deny)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_gateways_deciding_at_once_exactly_one_wins() {
    let fleet = fleet();
    for round in 0..8 {
        let req = request(&format!("c{round}"));
        let waiting = raise(&fleet.a, req.clone()).await;
        let barrier = Arc::new(Barrier::new(2));
        let deciders: Vec<_> = [
            (Arc::clone(&fleet.a), ApprovalDecision::AllowOnce),
            (Arc::clone(&fleet.b), ApprovalDecision::Deny),
        ]
        .into_iter()
        .map(|(broker, decision)| {
            let (barrier, id) = (Arc::clone(&barrier), req.id.clone());
            std::thread::spawn(move || {
                barrier.wait();
                (decision, broker.resolve(&id, decision, None))
            })
        })
        .collect();
        let outcomes: Vec<(ApprovalDecision, ResolveOutcome)> =
            deciders.into_iter().map(|t| t.join().unwrap()).collect();
        let winners: Vec<ApprovalDecision> = outcomes
            .iter()
            .filter(|(_, o)| *o == ResolveOutcome::Applied)
            .map(|(d, _)| *d)
            .collect();
        let losers: Vec<ResolveOutcome> = outcomes
            .iter()
            .filter(|(_, o)| *o != ResolveOutcome::Applied)
            .map(|(_, o)| *o)
            .collect();
        assert_eq!(winners.len(), 1, "round {round}: {outcomes:?}");
        assert_eq!(
            losers,
            vec![ResolveOutcome::AlreadyResolved],
            "round {round}"
        );
        // The waiter runs (or not) by the decision that won.
        assert_eq!(
            waiting.await.unwrap(),
            ApprovalResolution::decided(winners[0]),
            "round {round}"
        );
        assert_eq!(
            fleet.a.store().decisions_for(&req.id).unwrap(),
            vec![winners[0].as_str()]
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_always_granted_on_one_gateway_answers_the_other() {
    let fleet = fleet();
    // B's approver answers A's request with allow-always...
    let first = request("c1");
    let waiting = raise(&fleet.a, first.clone()).await;
    assert_eq!(
        fleet.b.resolve(
            &first.id,
            ApprovalDecision::AllowAlways,
            Some(&first.binding())
        ),
        ResolveOutcome::Applied
    );
    assert_eq!(
        waiting.await.unwrap(),
        ApprovalResolution::decided(ApprovalDecision::AllowAlways)
    );
    // ...and the same question is answered on either gateway without
    // asking anyone.
    let remembered = ApprovalResolution {
        decision: ApprovalDecision::AllowAlways,
        remembered: true,
    };
    for (broker, call) in [(&fleet.a, "c2"), (&fleet.b, "c3")] {
        let mut events = broker.subscribe();
        assert_eq!(
            broker
                .request(request(call), &CancellationToken::new())
                .await,
            remembered
        );
        assert!(events.try_recv().is_err(), "nobody was asked");
    }
    assert_eq!(fleet.b.store().list().unwrap(), vec![first.grant_key()]);
    // A grant B's own approver gives for B's request answers A too.
    let mut other = request("c4");
    other.title = "Another question".into();
    let waiting = raise(&fleet.b, other.clone()).await;
    assert_eq!(
        fleet
            .b
            .resolve(&other.id, ApprovalDecision::AllowAlways, None),
        ResolveOutcome::Applied
    );
    waiting.await.unwrap();
    let mut again = request("c5");
    again.title = "Another question".into();
    assert_eq!(
        fleet.a.request(again, &CancellationToken::new()).await,
        remembered
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_on_the_raising_gateway_still_denies() {
    let fleet = fleet();
    let req = request_with("c1", "", Duration::from_millis(400));
    let started = Instant::now();
    let waiting = raise(&fleet.a, req.clone()).await;
    assert_eq!(fleet.b.pending(), vec![req.clone()]);
    assert_eq!(
        waiting.await.unwrap(),
        ApprovalResolution::decided(ApprovalDecision::Timeout)
    );
    assert!(started.elapsed() >= Duration::from_millis(400));
    // B's decision after it is late, and the request is listed nowhere.
    assert_eq!(
        fleet.b.resolve(&req.id, ApprovalDecision::AllowOnce, None),
        ResolveOutcome::Unknown
    );
    assert_eq!(fleet.b.pending(), vec![]);
    assert_eq!(
        fleet.a.store().decisions_for(&req.id).unwrap(),
        vec!["timeout"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovery_denies_only_what_members_that_are_gone_left_waiting() {
    let fleet = fleet();
    // A gateway that crashed: its member row is stale, its request waits
    // for nobody.
    let gone_id = join(&fleet.pool);
    fleet
        .pool
        .run({
            let gone_id = gone_id.clone();
            move |c| {
                c.execute(
                    "UPDATE talon_members SET heartbeat_at_ms = 0 WHERE id = $1",
                    &[&gone_id],
                )?;
                Ok(())
            }
        })
        .unwrap();
    let gone = PostgresGrantStore::open(&fleet.pool, gone_id).unwrap();
    let orphan = request("orphan");
    assert!(gone.add_pending(&orphan).unwrap());
    // A live gateway's request.
    let live = request("live");
    let waiting = raise(&fleet.a, live.clone()).await;
    // Nobody is offered the orphan, and a decision for it is late.
    assert_eq!(fleet.b.pending(), vec![live.clone()]);
    assert_eq!(
        fleet
            .b
            .resolve(&orphan.id, ApprovalDecision::AllowOnce, None),
        ResolveOutcome::Unknown
    );
    assert_eq!(
        fleet.b.store().recover_pending().unwrap(),
        vec![orphan.id.clone()]
    );
    assert_eq!(
        fleet.b.store().decisions_for(&orphan.id).unwrap(),
        vec!["deny"]
    );
    assert_eq!(
        gone.decision(&orphan.id).unwrap(),
        Some(ApprovalDecision::Deny)
    );
    // Once, and the live request is untouched and still decidable.
    assert_eq!(
        fleet.a.store().recover_pending().unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(fleet.b.pending(), vec![live.clone()]);
    assert_eq!(
        fleet.b.resolve(&live.id, ApprovalDecision::AllowOnce, None),
        ResolveOutcome::Applied
    );
    assert_eq!(
        waiting.await.unwrap(),
        ApprovalResolution::decided(ApprovalDecision::AllowOnce)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_parameters_are_kept_only_while_a_request_waits() {
    let fleet = fleet();
    let marker = "sk-live-PARAMS-MARKER-91c2";
    let req = request_with("c1", marker, Duration::from_secs(60));
    let waiting = raise(&fleet.a, req.clone()).await;
    assert!(fleet.b.pending()[0].params_preview.contains(marker));
    fleet.b.resolve(&req.id, ApprovalDecision::Deny, None);
    waiting.await.unwrap();
    let holding: i64 = fleet
        .pool
        .run(move |c| {
            let like = format!("%{marker}%");
            let row = c.query_one(
                "SELECT (SELECT count(*) FROM approval_pending WHERE request LIKE $1)
                      + (SELECT count(*) FROM approval_decisions
                         WHERE concat_ws(' ', approval_id, call_id, params_hash, tool_name,
                                         plugin_id, agent_id, session_key) LIKE $1)",
                &[&like],
            )?;
            Ok(row.get(0))
        })
        .unwrap();
    assert_eq!(holding, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_database_fails_closed() {
    let mut server = PgServer::start().unwrap();
    let name = server.create_database().unwrap();
    let pool = PgPool::connect(server.config(&name)).unwrap();
    let broker = Arc::new(Broker::open_postgres(&pool, join(&pool)).unwrap());
    // A request is waiting when the database goes away.
    let waiting = raise(
        &broker,
        request_with("c1", "", Duration::from_millis(1_500)),
    )
    .await;
    server.stop().unwrap();
    // It is never approved: it times out and denies.
    assert_eq!(
        waiting.await.unwrap(),
        ApprovalResolution::decided(ApprovalDecision::Timeout)
    );
    // A new request cannot be listed for an approver: denied at once.
    assert_eq!(
        broker
            .request(request("c2"), &CancellationToken::new())
            .await,
        ApprovalResolution::decided(ApprovalDecision::Deny)
    );
    // A decision decides nothing, with a typed error.
    assert_eq!(
        broker.resolve("any", ApprovalDecision::AllowOnce, None),
        ResolveOutcome::Unavailable
    );
    let error = broker
        .try_resolve("any", ApprovalDecision::AllowOnce, None)
        .unwrap_err();
    assert!(error.is_unavailable(), "{error}");
    assert!(
        matches!(&error, Error::State { source, .. } if source.code() == "unavailable"),
        "{error:?}"
    );
    assert!(broker.try_pending().unwrap_err().is_unavailable());
    assert_eq!(broker.pending(), vec![]);
    assert!(
        broker
            .store()
            .is_granted(&request("c3").grant_key())
            .is_err()
    );
    // The database comes back: the pool's connections reconnect (each
    // after its own backoff; until then a request is still denied, never
    // allowed), and asking across the pool works again.
    server.start_again().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    for attempt in 0.. {
        assert!(Instant::now() < deadline, "the store did not come back");
        let req = request(&format!("back-{attempt}"));
        let mut events = broker.subscribe();
        let mut task = {
            let (broker, req) = (Arc::clone(&broker), req.clone());
            tokio::spawn(async move { broker.request(req, &CancellationToken::new()).await })
        };
        let asked = tokio::select! {
            event = events.recv() => matches!(event, Ok(ApprovalEvent::Requested(r)) if r.id == req.id),
            denied = &mut task => {
                assert_eq!(denied.unwrap(), ApprovalResolution::decided(ApprovalDecision::Deny));
                false
            }
        };
        if !asked {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        }
        // A connection still in its backoff decides nothing: hand the
        // decision in again, as a client told `unavailable` would.
        let outcome = loop {
            match broker.resolve(&req.id, ApprovalDecision::AllowOnce, None) {
                ResolveOutcome::Unavailable if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                outcome => break outcome,
            }
        };
        assert_eq!(outcome, ResolveOutcome::Applied);
        assert_eq!(
            task.await.unwrap(),
            ApprovalResolution::decided(ApprovalDecision::AllowOnce)
        );
        break;
    }
}

#[test]
fn a_newer_schema_is_refused_and_left_alone() {
    let db = shared_database().unwrap();
    let pool = db.pool().unwrap();
    drop(PostgresGrantStore::open(&pool, "m1").unwrap());
    pool.run(|c| {
        c.execute(
            "UPDATE talon_schema SET version = 99 WHERE store = 'approvals'",
            &[],
        )?;
        Ok(())
    })
    .unwrap();
    let error = PostgresGrantStore::open(&pool, "m1").unwrap_err();
    assert!(
        matches!(
            &error,
            Error::State {
                source: StateError::SchemaNewer {
                    found: 99,
                    known: 1,
                    ..
                },
                ..
            }
        ),
        "{error:?}"
    );
    assert!(!error.is_unavailable());
}

#[test]
fn old_decisions_and_ended_requests_are_pruned() {
    let db = shared_database().unwrap();
    let pool = db.pool().unwrap();
    let store = PostgresGrantStore::open(&pool, "m1").unwrap();
    let waiting = request("still-waiting");
    assert!(store.add_pending(&waiting).unwrap());
    // Seed both tables just at the cap, then cross it.
    pool.run(|c| {
        c.execute(
            "INSERT INTO approval_decisions (approval_id, call_id, params_hash, tool_name,
                 plugin_id, scope, agent_id, session_key, decision, requested_at_ms,
                 decided_at_ms, member_id)
             SELECT 'old', '', '', '', '', '', '', '', 'deny', 0, 0, 'm0'
             FROM generate_series(1, $1::bigint)",
            &[&MAX_ENDED_ROWS],
        )?;
        c.execute(
            "INSERT INTO approval_pending (approval_id, member_id, call_id, params_hash,
                 tool_name, plugin_id, scope, agent_id, session_key, allowed,
                 requested_at_ms, decision)
             SELECT 'old-' || n, 'm0', '', '', '', '', '', '', '', '', 0, 'deny'
             FROM generate_series(1, $1::bigint) AS n",
            &[&MAX_ENDED_ROWS],
        )?;
        Ok(())
    })
    .unwrap();
    let answered = request("answered");
    assert!(store.add_pending(&answered).unwrap());
    store
        .decide(&answered.id, ApprovalDecision::AllowOnce, None)
        .unwrap();
    store
        .record_decision(&answered, ApprovalDecision::AllowOnce)
        .unwrap();
    let (decisions, ended): (i64, i64) = pool
        .run(|c| {
            let row = c.query_one(
                "SELECT (SELECT count(*) FROM approval_decisions),
                        (SELECT count(*) FROM approval_pending WHERE decision IS NOT NULL)",
                &[],
            )?;
            Ok((row.get(0), row.get(1)))
        })
        .unwrap();
    assert_eq!(decisions, MAX_ENDED_ROWS);
    assert!(ended <= MAX_ENDED_ROWS, "{ended}");
    // A waiting request is never pruned, and the newest ended one is kept.
    assert_eq!(store.pending().unwrap(), vec![waiting]);
    assert_eq!(
        store.decision(&answered.id).unwrap(),
        Some(ApprovalDecision::AllowOnce)
    );
}
