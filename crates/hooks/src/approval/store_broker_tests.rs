// The broker's tests run on every engine (`on_each_engine!` at the end:
// modules `memory`, `sqlite` and, with the `postgres` feature, `postgres`);
// the few that are about one engine say so in their name.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Map, json};
use tokio::sync::broadcast::error::TryRecvError;

use super::*;
use crate::Error;
use crate::approval::{ApprovalScope, ApprovalSeverity, GrantKey};
use crate::event::ApprovalSpec;

const LONG: Duration = Duration::from_secs(600);

fn spec(scope: ApprovalScope) -> ApprovalSpec {
    ApprovalSpec {
        title: "Run command".into(),
        description: "Allow this exec tool call?".into(),
        scope: Some(scope),
        plugin_id: Some("guard".into()),
        ..ApprovalSpec::default()
    }
}

fn request_in(scope: ApprovalScope, agent: &str, session: &str, call: &str) -> ApprovalRequest {
    let mut params = Map::new();
    params.insert("command".into(), json!(format!("echo {call}")));
    ApprovalRequest::new(&spec(scope), call, "exec", &params, agent, session, LONG)
}

fn request(call: &str) -> ApprovalRequest {
    request_in(ApprovalScope::Session, "agent-a", "session-1", call)
}

/// Start `request` on its own task.
fn start<S: GrantStore + 'static>(
    broker: &Arc<Broker<S>>,
    request: ApprovalRequest,
    abort: CancellationToken,
) -> tokio::task::JoinHandle<ApprovalResolution> {
    let broker = Arc::clone(broker);
    tokio::spawn(async move { broker.request(request, &abort).await })
}

/// The next event, which must be `Requested`.
async fn next_requested(events: &mut broadcast::Receiver<ApprovalEvent>) -> ApprovalRequest {
    match events.recv().await.unwrap() {
        ApprovalEvent::Requested(request) => request,
        other => panic!("expected a request, got {other:?}"),
    }
}

fn resolved(request: &ApprovalRequest, decision: ApprovalDecision) -> ApprovalEvent {
    ApprovalEvent::Resolved {
        id: request.id.clone(),
        call_id: request.call_id.clone(),
        decision,
    }
}

/// Ask `request` and answer it with `decision` once it is announced.
async fn ask_and_answer<S: GrantStore + 'static>(
    broker: &Arc<Broker<S>>,
    request: ApprovalRequest,
    decision: ApprovalDecision,
) -> ApprovalResolution {
    let mut events = broker.subscribe();
    let task = start(broker, request, CancellationToken::new());
    let asked = next_requested(&mut events).await;
    assert_eq!(
        broker.resolve(&asked.id, decision, Some(&asked.binding())),
        ResolveOutcome::Applied
    );
    task.await.unwrap()
}

/// Ask `request` (with a short timeout) and answer nothing: a remembered
/// grant answers `allow-always`, anything else times out.
async fn ask_unanswered<S: GrantStore>(
    broker: &Broker<S>,
    mut request: ApprovalRequest,
) -> ApprovalResolution {
    request.timeout_ms = 1_000;
    broker.request(request, &CancellationToken::new()).await
}

const REMEMBERED: ApprovalResolution = ApprovalResolution {
    decision: ApprovalDecision::AllowAlways,
    remembered: true,
};

const TIMED_OUT: ApprovalResolution = ApprovalResolution {
    decision: ApprovalDecision::Timeout,
    remembered: false,
};

async fn timeout_denies_and_is_announced<S: GrantStore + 'static>(broker: Arc<Broker<S>>) {
    let mut events = broker.subscribe();
    let mut req = request("c1");
    req.timeout_ms = 5_000;
    let started = tokio::time::Instant::now();
    let resolution = broker.request(req.clone(), &CancellationToken::new()).await;
    assert_eq!(resolution, TIMED_OUT);
    assert!(!resolution.allows());
    assert_eq!(started.elapsed(), Duration::from_secs(5));
    assert_eq!(broker.pending(), vec![]);
    assert_eq!(
        events.recv().await.unwrap(),
        ApprovalEvent::Requested(req.clone())
    );
    assert_eq!(
        events.recv().await.unwrap(),
        resolved(&req, ApprovalDecision::Timeout)
    );
}

async fn abort_cancels_the_wait<S: GrantStore + 'static>(broker: Arc<Broker<S>>) {
    let mut events = broker.subscribe();
    let abort = CancellationToken::new();
    let task = start(&broker, request("c1"), abort.clone());
    let asked = next_requested(&mut events).await;
    assert_eq!(broker.pending(), vec![asked.clone()]);
    abort.cancel();
    assert_eq!(
        task.await.unwrap(),
        ApprovalResolution::decided(ApprovalDecision::Cancelled)
    );
    assert_eq!(broker.pending(), vec![]);
    assert_eq!(
        events.recv().await.unwrap(),
        resolved(&asked, ApprovalDecision::Cancelled)
    );
    // A decision after the cancellation is late.
    assert_eq!(
        broker.resolve(&asked.id, ApprovalDecision::AllowOnce, None),
        ResolveOutcome::Unknown
    );
}

async fn an_already_aborted_call_is_cancelled_without_asking<S: GrantStore + 'static>(
    broker: Arc<Broker<S>>,
) {
    let mut events = broker.subscribe();
    let abort = CancellationToken::new();
    abort.cancel();
    let resolution = broker.request(request("c1"), &abort).await;
    assert_eq!(
        resolution,
        ApprovalResolution::decided(ApprovalDecision::Cancelled)
    );
    assert!(matches!(events.try_recv(), Err(TryRecvError::Empty)));
}

async fn resolve_allow_once_and_deny<S: GrantStore + 'static>(broker: Arc<Broker<S>>) {
    let once = ask_and_answer(&broker, request("c1"), ApprovalDecision::AllowOnce).await;
    assert_eq!(
        once,
        ApprovalResolution::decided(ApprovalDecision::AllowOnce)
    );
    assert!(once.allows());
    let deny = ask_and_answer(&broker, request("c2"), ApprovalDecision::Deny).await;
    assert_eq!(deny, ApprovalResolution::decided(ApprovalDecision::Deny));
    assert!(!deny.allows());
    // Allow-once is not remembered.
    assert_eq!(ask_unanswered(&*broker, request("c3")).await, TIMED_OUT);
    assert_eq!(broker.store().list().unwrap(), vec![]);
}

#[cfg(feature = "sqlite")]
#[tokio::test(start_paused = true)]
async fn allow_always_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    {
        let broker = Arc::new(SqliteApprovalBroker::open_in_state_dir(dir.path()).unwrap());
        let first = ask_and_answer(&broker, request("c1"), ApprovalDecision::AllowAlways).await;
        assert_eq!(
            first,
            ApprovalResolution::decided(ApprovalDecision::AllowAlways)
        );
        assert_eq!(
            broker.store().list().unwrap(),
            vec![request("c1").grant_key()]
        );
    }
    let broker = SqliteApprovalBroker::open(&dir.path().join("approvals.sqlite")).unwrap();
    let mut events = broker.subscribe();
    let again = broker
        .request(request("c2"), &CancellationToken::new())
        .await;
    assert_eq!(again, REMEMBERED);
    assert!(matches!(events.try_recv(), Err(TryRecvError::Empty)));
    assert_eq!(broker.pending(), vec![]);
    // Another session of the same agent is still asked.
    let other = request_in(ApprovalScope::Session, "agent-a", "session-2", "c3");
    assert_eq!(ask_unanswered(&broker, other).await, TIMED_OUT);
    // Every ending is in the audit table.
    let conn = rusqlite::Connection::open(dir.path().join("approvals.sqlite")).unwrap();
    let decisions: Vec<String> = conn
        .prepare("SELECT decision FROM decisions ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(decisions, vec!["allow-always", "allow-always", "timeout"]);
}

async fn session_grants_stay_in_their_session<S: GrantStore + 'static>(broker: Arc<Broker<S>>) {
    let grant = request_in(ApprovalScope::Session, "agent-a", "session-1", "c1");
    ask_and_answer(&broker, grant, ApprovalDecision::AllowAlways).await;
    let same = request_in(ApprovalScope::Session, "agent-a", "session-1", "c2");
    let other_session = request_in(ApprovalScope::Session, "agent-a", "session-2", "c3");
    let other_agent_same_session = request_in(ApprovalScope::Agent, "agent-a", "session-1", "c4");
    assert_eq!(ask_unanswered(&*broker, same).await, REMEMBERED);
    assert_eq!(ask_unanswered(&*broker, other_session).await, TIMED_OUT);
    assert_eq!(
        ask_unanswered(&*broker, other_agent_same_session).await,
        TIMED_OUT
    );
}

async fn agent_grants_reach_every_session_of_the_agent<S: GrantStore + 'static>(
    broker: Arc<Broker<S>>,
) {
    let grant = request_in(ApprovalScope::Agent, "agent-a", "session-1", "c1");
    ask_and_answer(&broker, grant, ApprovalDecision::AllowAlways).await;
    let other_session = request_in(ApprovalScope::Agent, "agent-a", "session-2", "c2");
    let other_agent = request_in(ApprovalScope::Agent, "agent-b", "session-1", "c3");
    assert_eq!(ask_unanswered(&*broker, other_session).await, REMEMBERED);
    assert_eq!(ask_unanswered(&*broker, other_agent).await, TIMED_OUT);
}

async fn global_grants_reach_everyone_for_that_plugin_and_tool<S: GrantStore + 'static>(
    broker: Arc<Broker<S>>,
) {
    let grant = request_in(ApprovalScope::Global, "agent-a", "session-1", "c1");
    ask_and_answer(&broker, grant, ApprovalDecision::AllowAlways).await;
    let elsewhere = request_in(ApprovalScope::Global, "agent-b", "session-9", "c2");
    assert_eq!(ask_unanswered(&*broker, elsewhere).await, REMEMBERED);
    let mut other_tool = request_in(ApprovalScope::Global, "agent-b", "session-9", "c3");
    other_tool.tool_name = "write".into();
    assert_eq!(ask_unanswered(&*broker, other_tool).await, TIMED_OUT);
    let mut other_plugin = request_in(ApprovalScope::Global, "agent-b", "session-9", "c4");
    other_plugin.plugin_id = "other".into();
    assert_eq!(ask_unanswered(&*broker, other_plugin).await, TIMED_OUT);
}

async fn a_session_grant_without_a_session_key_is_not_remembered<S: GrantStore + 'static>(
    broker: Arc<Broker<S>>,
) {
    let grant = request_in(ApprovalScope::Session, "agent-a", "", "c1");
    let first = ask_and_answer(&broker, grant, ApprovalDecision::AllowAlways).await;
    assert!(first.allows());
    assert_eq!(broker.store().list().unwrap(), vec![]);
    let again = request_in(ApprovalScope::Session, "agent-b", "", "c2");
    assert_eq!(ask_unanswered(&*broker, again).await, TIMED_OUT);
}

async fn duplicate_resolve_is_already_resolved<S: GrantStore + 'static>(broker: Arc<Broker<S>>) {
    let mut events = broker.subscribe();
    let task = start(&broker, request("c1"), CancellationToken::new());
    let asked = next_requested(&mut events).await;
    assert_eq!(
        broker.resolve(&asked.id, ApprovalDecision::Deny, None),
        ResolveOutcome::Applied
    );
    assert_eq!(
        broker.resolve(&asked.id, ApprovalDecision::AllowOnce, None),
        ResolveOutcome::AlreadyResolved
    );
    assert_eq!(
        task.await.unwrap(),
        ApprovalResolution::decided(ApprovalDecision::Deny)
    );
    assert_eq!(
        broker.resolve(&asked.id, ApprovalDecision::AllowOnce, None),
        ResolveOutcome::AlreadyResolved
    );
}

async fn late_resolve_after_timeout_is_unknown<S: GrantStore + 'static>(broker: Arc<Broker<S>>) {
    let mut events = broker.subscribe();
    assert_eq!(ask_unanswered(&broker, request("c1")).await, TIMED_OUT);
    let asked = next_requested(&mut events).await;
    assert_eq!(
        broker.resolve(
            &asked.id,
            ApprovalDecision::AllowOnce,
            Some(&asked.binding())
        ),
        ResolveOutcome::Unknown
    );
    assert_eq!(
        broker.resolve("no-such-id", ApprovalDecision::Deny, None),
        ResolveOutcome::Unknown
    );
}

async fn stale_binding_is_ignored_and_the_request_keeps_waiting<S: GrantStore + 'static>(
    broker: Arc<Broker<S>>,
) {
    let mut events = broker.subscribe();
    let task = start(&broker, request("c1"), CancellationToken::new());
    let asked = next_requested(&mut events).await;
    let wrong_hash = ApprovalBinding {
        call_id: asked.call_id.clone(),
        params_hash: talon_canonical_json::hash_json(&json!({"command": "rm -rf /"})),
    };
    let wrong_call = ApprovalBinding {
        call_id: "c2".into(),
        params_hash: asked.params_hash.clone(),
    };
    for binding in [&wrong_hash, &wrong_call] {
        assert_eq!(
            broker.resolve(&asked.id, ApprovalDecision::AllowOnce, Some(binding)),
            ResolveOutcome::Stale
        );
    }
    tokio::task::yield_now().await;
    assert!(!task.is_finished());
    assert_eq!(broker.pending(), vec![asked.clone()]);
    assert_eq!(
        broker.resolve(&asked.id, ApprovalDecision::Deny, Some(&asked.binding())),
        ResolveOutcome::Applied
    );
    assert_eq!(
        task.await.unwrap(),
        ApprovalResolution::decided(ApprovalDecision::Deny)
    );
}

async fn decisions_outside_allowed_decisions_are_refused<S: GrantStore + 'static>(
    broker: Arc<Broker<S>>,
) {
    let mut events = broker.subscribe();
    let mut req = request("c1");
    req.allowed_decisions = vec![ApprovalDecision::AllowOnce, ApprovalDecision::Deny];
    let task = start(&broker, req, CancellationToken::new());
    let asked = next_requested(&mut events).await;
    for decision in [
        ApprovalDecision::AllowAlways,
        ApprovalDecision::Timeout,
        ApprovalDecision::Cancelled,
    ] {
        assert_eq!(
            broker.resolve(&asked.id, decision, None),
            ResolveOutcome::NotAllowed,
            "{decision:?}"
        );
    }
    assert_eq!(broker.pending(), vec![asked.clone()]);
    assert_eq!(
        broker.resolve(&asked.id, ApprovalDecision::AllowOnce, None),
        ResolveOutcome::Applied
    );
    assert_eq!(
        task.await.unwrap(),
        ApprovalResolution::decided(ApprovalDecision::AllowOnce)
    );
    assert_eq!(broker.store().list().unwrap(), vec![]);
}

async fn events_are_broadcast_in_order<S: GrantStore + 'static>(broker: Arc<Broker<S>>) {
    let mut events = broker.subscribe();
    let mut late_subscriber = broker.subscribe();
    let (first, second) = (request("c1"), request("c2"));
    let task_1 = start(&broker, first.clone(), CancellationToken::new());
    assert_eq!(next_requested(&mut events).await, first);
    let task_2 = start(&broker, second.clone(), CancellationToken::new());
    assert_eq!(next_requested(&mut events).await, second);
    assert_eq!(broker.pending(), vec![first.clone(), second.clone()]);
    broker.resolve(&second.id, ApprovalDecision::AllowOnce, None);
    task_2.await.unwrap();
    broker.resolve(&first.id, ApprovalDecision::Deny, None);
    task_1.await.unwrap();
    let expected = vec![
        ApprovalEvent::Requested(first.clone()),
        ApprovalEvent::Requested(second.clone()),
        resolved(&second, ApprovalDecision::AllowOnce),
        resolved(&first, ApprovalDecision::Deny),
    ];
    let mut seen = Vec::new();
    while let Ok(event) = late_subscriber.try_recv() {
        seen.push(event);
    }
    assert_eq!(seen, expected);
}

async fn concurrent_requests_resolve_independently<S: GrantStore + 'static>(
    broker: Arc<Broker<S>>,
) {
    let mut events = broker.subscribe();
    let task_1 = start(&broker, request("c1"), CancellationToken::new());
    let task_2 = start(&broker, request("c2"), CancellationToken::new());
    let a = next_requested(&mut events).await;
    let b = next_requested(&mut events).await;
    assert_ne!(a.id, b.id);
    let (one, two) = if a.call_id == "c1" { (a, b) } else { (b, a) };
    assert_eq!(
        broker.resolve(&two.id, ApprovalDecision::Deny, Some(&two.binding())),
        ResolveOutcome::Applied
    );
    // The first request's binding does not fit the second's id.
    assert_eq!(
        broker.resolve(&one.id, ApprovalDecision::AllowOnce, Some(&two.binding())),
        ResolveOutcome::Stale
    );
    assert_eq!(
        task_2.await.unwrap(),
        ApprovalResolution::decided(ApprovalDecision::Deny)
    );
    assert_eq!(broker.pending(), vec![one.clone()]);
    assert_eq!(
        broker.resolve(&one.id, ApprovalDecision::AllowOnce, Some(&one.binding())),
        ResolveOutcome::Applied
    );
    assert_eq!(
        task_1.await.unwrap(),
        ApprovalResolution::decided(ApprovalDecision::AllowOnce)
    );
}

async fn a_dropped_wait_ends_as_cancelled<S: GrantStore + 'static>(broker: Arc<Broker<S>>) {
    let mut events = broker.subscribe();
    let task = start(&broker, request("c1"), CancellationToken::new());
    let asked = next_requested(&mut events).await;
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    assert_eq!(broker.pending(), vec![]);
    assert_eq!(
        events.recv().await.unwrap(),
        resolved(&asked, ApprovalDecision::Cancelled)
    );
    assert_eq!(
        broker.resolve(&asked.id, ApprovalDecision::AllowOnce, None),
        ResolveOutcome::Unknown
    );
}

async fn a_reused_id_is_not_asked_again<S: GrantStore + 'static>(broker: Arc<Broker<S>>) {
    let req = request("c1");
    ask_and_answer(&broker, req.clone(), ApprovalDecision::AllowOnce).await;
    assert_eq!(
        broker.request(req, &CancellationToken::new()).await,
        ApprovalResolution::decided(ApprovalDecision::Cancelled)
    );
}

/// A store whose grant lookups and writes always fail (its pending
/// requests work, in memory).
#[derive(Debug, Default)]
struct BrokenStore {
    lookups: AtomicUsize,
    grants: AtomicUsize,
    pending: MemoryGrantStore,
}

impl BrokenStore {
    fn error() -> Error {
        Error::Store {
            path: PathBuf::from("/nowhere/approvals.sqlite"),
            message: "disk on fire".into(),
        }
    }
}

impl GrantStore for BrokenStore {
    fn is_granted(&self, _key: &GrantKey) -> crate::Result<bool> {
        self.lookups.fetch_add(1, Ordering::SeqCst);
        Err(Self::error())
    }

    fn grant(&self, _key: &GrantKey, _approval_id: &str) -> crate::Result<()> {
        self.grants.fetch_add(1, Ordering::SeqCst);
        Err(Self::error())
    }

    fn revoke(&self, _key: &GrantKey) -> crate::Result<bool> {
        Err(Self::error())
    }

    fn list(&self) -> crate::Result<Vec<GrantKey>> {
        Err(Self::error())
    }

    fn record_decision(
        &self,
        _request: &ApprovalRequest,
        _decision: ApprovalDecision,
    ) -> crate::Result<()> {
        Err(Self::error())
    }

    fn add_pending(&self, request: &ApprovalRequest) -> crate::Result<bool> {
        self.pending.add_pending(request)
    }

    fn decide(
        &self,
        approval_id: &str,
        decision: ApprovalDecision,
        binding: Option<&ApprovalBinding>,
    ) -> crate::Result<ResolveOutcome> {
        self.pending.decide(approval_id, decision, binding)
    }

    fn finish(
        &self,
        approval_id: &str,
        fallback: ApprovalDecision,
    ) -> crate::Result<ApprovalDecision> {
        self.pending.finish(approval_id, fallback)
    }

    fn decision(&self, approval_id: &str) -> crate::Result<Option<ApprovalDecision>> {
        self.pending.decision(approval_id)
    }

    fn pending(&self) -> crate::Result<Vec<ApprovalRequest>> {
        self.pending.pending()
    }
}

/// A store that cannot be reached at all (a fleet's database that is down):
/// every call fails. It says it is shared, so waiters poll it too.
#[derive(Debug, Default)]
struct UnreachableStore {
    calls: AtomicUsize,
}

impl UnreachableStore {
    fn fail<T>(&self) -> crate::Result<T> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Err(BrokenStore::error())
    }
}

impl GrantStore for UnreachableStore {
    fn is_granted(&self, _key: &GrantKey) -> crate::Result<bool> {
        self.fail()
    }

    fn grant(&self, _key: &GrantKey, _approval_id: &str) -> crate::Result<()> {
        self.fail()
    }

    fn revoke(&self, _key: &GrantKey) -> crate::Result<bool> {
        self.fail()
    }

    fn list(&self) -> crate::Result<Vec<GrantKey>> {
        self.fail()
    }

    fn record_decision(
        &self,
        _request: &ApprovalRequest,
        _decision: ApprovalDecision,
    ) -> crate::Result<()> {
        self.fail()
    }

    fn add_pending(&self, _request: &ApprovalRequest) -> crate::Result<bool> {
        self.fail()
    }

    fn decide(
        &self,
        _approval_id: &str,
        _decision: ApprovalDecision,
        _binding: Option<&ApprovalBinding>,
    ) -> crate::Result<ResolveOutcome> {
        self.fail()
    }

    fn finish(
        &self,
        _approval_id: &str,
        _fallback: ApprovalDecision,
    ) -> crate::Result<ApprovalDecision> {
        self.fail()
    }

    fn decision(&self, _approval_id: &str) -> crate::Result<Option<ApprovalDecision>> {
        self.fail()
    }

    fn pending(&self) -> crate::Result<Vec<ApprovalRequest>> {
        self.fail()
    }

    fn is_shared(&self) -> bool {
        true
    }
}

#[tokio::test(start_paused = true)]
async fn an_unreachable_store_denies_and_decides_nothing() {
    let broker = Arc::new(Broker::new(UnreachableStore::default()));
    let mut events = broker.subscribe();
    // Nobody can be asked through a store that cannot list the request:
    // the call is denied at once, and nobody is told of a request.
    assert_eq!(
        broker
            .request(request("c1"), &CancellationToken::new())
            .await,
        ApprovalResolution::decided(ApprovalDecision::Deny)
    );
    assert!(matches!(events.try_recv(), Err(TryRecvError::Empty)));
    // A decision handed in decides nothing, and says why.
    assert_eq!(
        broker.resolve("some-id", ApprovalDecision::AllowOnce, None),
        ResolveOutcome::Unavailable
    );
    assert!(matches!(
        broker.try_resolve("some-id", ApprovalDecision::AllowOnce, None),
        Err(Error::Store { .. })
    ));
    assert_eq!(broker.pending(), vec![]);
    assert!(broker.try_pending().is_err());
    assert!(broker.store().calls.load(Ordering::SeqCst) >= 5);
}

#[tokio::test(start_paused = true)]
async fn a_broken_store_never_allows_by_itself() {
    let broker = Arc::new(Broker::new(BrokenStore::default()));
    // The lookup fails, so a human is asked; nobody answers, so it denies.
    assert_eq!(ask_unanswered(&*broker, request("c1")).await, TIMED_OUT);
    assert_eq!(broker.store().lookups.load(Ordering::SeqCst), 1);
    // Storing the grant fails, but this call is still allowed.
    let answered = ask_and_answer(&broker, request("c2"), ApprovalDecision::AllowAlways).await;
    assert_eq!(
        answered,
        ApprovalResolution::decided(ApprovalDecision::AllowAlways)
    );
    assert_eq!(broker.store().grants.load(Ordering::SeqCst), 1);
    // And the next call is asked again.
    assert_eq!(ask_unanswered(&*broker, request("c3")).await, TIMED_OUT);
}

#[tokio::test(start_paused = true)]
async fn a_broker_is_usable_as_a_trait_object() {
    let broker: Arc<dyn ApprovalBroker> = Arc::new(MemoryApprovalBroker::default());
    let mut events = broker.subscribe();
    let b = Arc::clone(&broker);
    let task =
        tokio::spawn(async move { b.request(request("c1"), &CancellationToken::new()).await });
    let asked = next_requested(&mut events).await;
    assert_eq!(
        broker.resolve(&asked.id, ApprovalDecision::AllowAlways, None),
        ResolveOutcome::Applied
    );
    assert_eq!(
        task.await.unwrap(),
        ApprovalResolution::decided(ApprovalDecision::AllowAlways)
    );
    assert_eq!(
        broker
            .request(request("c2"), &CancellationToken::new())
            .await,
        REMEMBERED
    );
}

/// A request from the same plugin and tool as [`request`], but asking
/// another question.
fn reworded(call: &str, change: fn(&mut ApprovalSpec)) -> ApprovalRequest {
    let mut spec = spec(ApprovalScope::Session);
    change(&mut spec);
    let mut params = Map::new();
    params.insert("command".into(), json!(format!("echo {call}")));
    ApprovalRequest::new(&spec, call, "exec", &params, "agent-a", "session-1", LONG)
}

/// The ways a later request may differ from the one that was granted.
const REWORDINGS: [fn(&mut ApprovalSpec); 4] = [
    |s| s.title = "Wipe the disk".into(),
    |s| s.description = "Allow rm -rf / ?".into(),
    |s| s.severity = Some(ApprovalSeverity::Warning),
    |s| s.severity = Some(ApprovalSeverity::Critical),
];

async fn a_grant_answers_only_its_own_question<S: GrantStore + 'static>(broker: Arc<Broker<S>>) {
    let granted = ask_and_answer(&broker, request("c1"), ApprovalDecision::AllowAlways).await;
    assert_eq!(
        granted,
        ApprovalResolution::decided(ApprovalDecision::AllowAlways)
    );
    assert_eq!(
        broker.store().list().unwrap(),
        vec![request("c1").grant_key()]
    );
    // The same question again (other parameters, same wording) is answered.
    assert_eq!(ask_unanswered(&*broker, request("c2")).await, REMEMBERED);
    // Another title, description or severity is asked again.
    for (i, change) in REWORDINGS.into_iter().enumerate() {
        let other = reworded(&format!("c{}", i + 3), change);
        assert!(!broker.is_remembered(&other), "{other:?}");
        assert_eq!(ask_unanswered(&*broker, other).await, TIMED_OUT);
    }
}

fn critical(call: &str, scope: ApprovalScope) -> ApprovalRequest {
    let mut request = request_in(scope, "agent-a", "session-1", call);
    request.severity = ApprovalSeverity::Critical;
    request
}

async fn allow_always_on_a_critical_request_allows_once<S: GrantStore + 'static>(
    broker: Arc<Broker<S>>,
) {
    for scope in [
        ApprovalScope::Session,
        ApprovalScope::Agent,
        ApprovalScope::Global,
    ] {
        let answered = ask_and_answer(
            &broker,
            critical("c1", scope),
            ApprovalDecision::AllowAlways,
        )
        .await;
        assert_eq!(
            answered,
            ApprovalResolution {
                decision: ApprovalDecision::AllowAlways,
                remembered: false,
            }
        );
        assert!(answered.allows());
        assert_eq!(broker.store().list().unwrap(), vec![]);
        // The next identical critical request is asked again.
        assert_eq!(
            ask_unanswered(&*broker, critical("c2", scope)).await,
            TIMED_OUT
        );
    }
}

#[cfg(feature = "sqlite")]
#[tokio::test(start_paused = true)]
async fn allow_always_on_a_critical_request_leaves_no_sqlite_row() {
    let dir = tempfile::tempdir().unwrap();
    let broker = SqliteApprovalBroker::open_in_state_dir(dir.path()).unwrap();
    allow_always_on_a_critical_request_allows_once(Arc::new(broker)).await;
    let conn = rusqlite::Connection::open(dir.path().join("approvals.sqlite")).unwrap();
    let grants: i64 = conn
        .query_row("SELECT count(*) FROM grants", [], |r| r.get(0))
        .unwrap();
    assert_eq!(grants, 0);
}

async fn a_stored_grant_never_answers_a_critical_request<S: GrantStore + 'static>(
    broker: Arc<Broker<S>>,
) {
    let req = critical("c1", ApprovalScope::Session);
    // Put there by hand (or by an older build): still not used.
    broker.store().grant(&req.grant_key(), "old-id").unwrap();
    assert!(broker.store().is_granted(&req.grant_key()).unwrap());
    assert!(!broker.is_remembered(&req));
    let mut events = broker.subscribe();
    assert_eq!(ask_unanswered(&*broker, req).await, TIMED_OUT);
    assert!(matches!(
        events.try_recv(),
        Ok(ApprovalEvent::Requested(asked)) if asked.call_id == "c1"
    ));
}

async fn the_requested_event_shows_the_params<S: GrantStore + 'static>(broker: Arc<Broker<S>>) {
    let mut events = broker.subscribe();
    let mut params = Map::new();
    params.insert(
        "command".into(),
        json!("printf '\u{1b}]0;owned\u{7}' \u{202e}gpj.exe"),
    );
    let req = ApprovalRequest::new(
        &spec(ApprovalScope::Session),
        "c1",
        "exec",
        &params,
        "a",
        "s",
        LONG,
    );
    let task = start(&broker, req, CancellationToken::new());
    let asked = next_requested(&mut events).await;
    assert_eq!(
        asked.params_preview,
        r#"{"command":"printf '\u001b]0;owned\u0007' \u202egpj.exe"}"#
    );
    assert_eq!(broker.pending()[0].params_preview, asked.params_preview);
    broker.resolve(&asked.id, ApprovalDecision::Deny, None);
    task.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn an_endless_hook_timeout_ends_after_a_day() {
    let broker = MemoryApprovalBroker::in_memory();
    let spec = ApprovalSpec {
        timeout_ms: Some(u64::MAX),
        ..spec(ApprovalScope::Session)
    };
    let req = ApprovalRequest::new(&spec, "c1", "exec", &Map::new(), "a", "s", LONG);
    assert_eq!(req.timeout(), crate::approval::MAX_APPROVAL_TIMEOUT);
    let started = tokio::time::Instant::now();
    assert_eq!(
        broker.request(req, &CancellationToken::new()).await,
        TIMED_OUT
    );
    assert_eq!(started.elapsed(), Duration::from_secs(24 * 60 * 60));

    // A hand-built request is clamped too.
    let mut req = request("c2");
    req.timeout_ms = u64::MAX;
    let started = tokio::time::Instant::now();
    assert_eq!(
        broker.request(req, &CancellationToken::new()).await,
        TIMED_OUT
    );
    assert_eq!(started.elapsed(), Duration::from_secs(24 * 60 * 60));
}

crate::approval::test_engines::on_each_engine!(async:
    timeout_denies_and_is_announced,
    abort_cancels_the_wait,
    an_already_aborted_call_is_cancelled_without_asking,
    resolve_allow_once_and_deny,
    session_grants_stay_in_their_session,
    agent_grants_reach_every_session_of_the_agent,
    global_grants_reach_everyone_for_that_plugin_and_tool,
    a_session_grant_without_a_session_key_is_not_remembered,
    duplicate_resolve_is_already_resolved,
    late_resolve_after_timeout_is_unknown,
    stale_binding_is_ignored_and_the_request_keeps_waiting,
    decisions_outside_allowed_decisions_are_refused,
    events_are_broadcast_in_order,
    concurrent_requests_resolve_independently,
    a_dropped_wait_ends_as_cancelled,
    a_reused_id_is_not_asked_again,
    a_grant_answers_only_its_own_question,
    allow_always_on_a_critical_request_allows_once,
    a_stored_grant_never_answers_a_critical_request,
    the_requested_event_shows_the_params,
);

#[cfg(feature = "sqlite")]
#[tokio::test(start_paused = true)]
async fn a_dyn_broker_picks_its_engine_at_run_time() {
    let dir = tempfile::tempdir().unwrap();
    let waiting = request("c0");
    {
        // A crash leaves a request waiting.
        let store = SqliteGrantStore::open_in_state_dir(dir.path()).unwrap();
        assert!(store.add_pending(&waiting).unwrap());
    }
    let broker: Arc<DynApprovalBroker> = Arc::new(
        SqliteApprovalBroker::open_in_state_dir(dir.path())
            .unwrap()
            .into_dyn(),
    );
    assert!(!broker.store().is_shared());
    assert_eq!(broker.store().recover_pending().unwrap(), vec![waiting.id]);
    let answered = ask_and_answer(&broker, request("c1"), ApprovalDecision::AllowAlways).await;
    assert!(answered.allows());
    assert_eq!(ask_unanswered(&*broker, request("c2")).await, REMEMBERED);
    // Nothing to follow on a store only this process uses.
    let mut events = broker.subscribe();
    broker.sync_shared().unwrap();
    broker.follow_shared(&CancellationToken::new()).await;
    assert!(matches!(events.try_recv(), Err(TryRecvError::Empty)));
}
