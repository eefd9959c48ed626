//! Agent runs the gateway cannot execute itself (a cron job's isolated
//! turn, a system event) go to a connected runner client that called
//! `runner.subscribe`. With none connected, the run waits for one (up to
//! `gateway.limits.runnerWaitMs`), then ends as a recorded failure with the
//! reason; it is never silently dropped.
//!
//! While a run is in flight the gateway binds its session key to it
//! ([`crate::sessions::CronRunBinding`]): the session the runner opens
//! under that key gets the job's tool cap, whatever the runner asks. When
//! the run ends, however it ends, the binding goes, the session closes and
//! its calls in flight are cancelled. A run that outlives its budget
//! (`timeoutSeconds`) is cancelled: the runner gets `runner.cancel`
//! (`reason: "timeout"`) and a later `runner.complete` for it is refused
//! with [`RunnerError::TimedOut`].

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};
use talon_cron::{AgentRunner, IsolatedRun, RunFailure, RunReport, SystemEventRequest};
use talon_gateway_protocol::Notification;
use talon_sessions::Role;
use tokio::sync::oneshot;

use crate::gateway::{Events, Gateway, Link};
use crate::outbound::Outbound;
use crate::rpc::notification;
use crate::sessions::CronRunBinding;

type Reply = oneshot::Sender<Result<RunReport, RunFailure>>;

/// How many ended runs are remembered, so a late `runner.complete` is told
/// why it is refused (older ones get [`RunnerError::Unknown`]).
const ENDED_REMEMBERED: usize = 4096;

/// How a run handed to a runner ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RunEnd {
    /// The runner reported its result.
    Completed,
    /// Its time budget ran out: cancelled and recorded `timeout`.
    TimedOut,
    /// Cancelled for another reason (job removed, task cancelled, gateway
    /// stopping) or its runner went away.
    Cancelled,
}

/// Why `runner.complete` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RunnerError {
    /// The run's time budget ran out before the result came.
    #[error(
        "run `{run_id}` timed out (its job's timeoutSeconds): it was cancelled with runner.cancel and recorded `timeout`, so this late result is refused"
    )]
    TimedOut {
        /// The run.
        run_id: String,
    },
    /// The run was cancelled before the result came.
    #[error(
        "run `{run_id}` was cancelled (its job was removed, its task cancelled, its runner went away or the gateway is stopping); its result is refused"
    )]
    Cancelled {
        /// The run.
        run_id: String,
    },
    /// The run's result was already reported.
    #[error("run `{run_id}` already reported its result; a second one is refused")]
    AlreadyCompleted {
        /// The run.
        run_id: String,
    },
    /// No such run was handed out (or it ended long ago).
    #[error(
        "no run `{run_id}` is waiting for a result (it was never handed out, or it ended long ago)"
    )]
    Unknown {
        /// The run.
        run_id: String,
    },
    /// The run was handed to another connection.
    #[error("run `{run_id}` was handed to another runner connection")]
    NotYours {
        /// The run.
        run_id: String,
    },
}

impl RunnerError {
    /// The stable code (`data.errorCode` on the wire).
    pub(crate) fn code(&self) -> &'static str {
        match self {
            RunnerError::TimedOut { .. } => "runner.run_timed_out",
            RunnerError::Cancelled { .. } => "runner.run_cancelled",
            RunnerError::AlreadyCompleted { .. } => "runner.run_already_completed",
            RunnerError::Unknown { .. } => "runner.run_unknown",
            RunnerError::NotYours { .. } => "runner.run_not_yours",
        }
    }

    /// The run.
    pub(crate) fn run_id(&self) -> &str {
        match self {
            RunnerError::TimedOut { run_id }
            | RunnerError::Cancelled { run_id }
            | RunnerError::AlreadyCompleted { run_id }
            | RunnerError::Unknown { run_id }
            | RunnerError::NotYours { run_id } => run_id,
        }
    }
}

/// Runs that ended, newest last, bounded.
#[derive(Debug, Default)]
struct Ended {
    order: VecDeque<String>,
    by_run: HashMap<String, RunEnd>,
}

impl Ended {
    fn record(&mut self, run_id: &str, end: RunEnd) {
        if self.by_run.insert(run_id.to_owned(), end).is_none() {
            self.order.push_back(run_id.to_owned());
        }
        while self.order.len() > ENDED_REMEMBERED {
            if let Some(old) = self.order.pop_front() {
                self.by_run.remove(&old);
            }
        }
    }
}

/// The subscribed runner clients and the runs handed to them.
pub(crate) struct RunnerHub {
    wait: Duration,
    runners: Mutex<Vec<Outbound>>,
    pending: Mutex<HashMap<String, (u64, Reply)>>,
    ended: Mutex<Ended>,
    next: AtomicUsize,
    events: Events,
    /// The gateway, for the sessions area (run bindings).
    link: Link,
}

impl std::fmt::Debug for RunnerHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunnerHub")
            .field("runners", &self.count())
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Ends one run handed out by [`RunnerHub::run_isolated`] exactly once,
/// whichever way it ends, including the cron service dropping the run's
/// future at its deadline: the pending entry goes, the runner gets
/// `runner.cancel` unless it reported the result, the end is remembered
/// for late results, and the run's session binding goes (its calls in
/// flight are cancelled).
struct RunGuard<'a> {
    hub: &'a RunnerHub,
    run_id: String,
    session_key: String,
    deadline: tokio::time::Instant,
    /// The connection the run was last handed to.
    runner: Option<Outbound>,
    /// Set when the run ended with the runner's result.
    completed: bool,
}

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        lock(&self.hub.pending).remove(&self.run_id);
        let end = if self.completed {
            RunEnd::Completed
        } else if tokio::time::Instant::now() >= self.deadline {
            RunEnd::TimedOut
        } else {
            RunEnd::Cancelled
        };
        lock(&self.hub.ended).record(&self.run_id, end);
        let reason = match end {
            RunEnd::Completed => "the cron run ended",
            RunEnd::TimedOut => "the cron run timed out (its job's timeoutSeconds)",
            RunEnd::Cancelled => "the cron run was cancelled",
        };
        if end != RunEnd::Completed
            && let Some(out) = &self.runner
        {
            let wire = if end == RunEnd::TimedOut {
                "timeout"
            } else {
                "cancelled"
            };
            let _ = out.send(
                notification(
                    Notification::RunnerCancel.as_str(),
                    json!({"runId": self.run_id, "reason": wire, "message": reason}),
                )
                .to_string(),
            );
        }
        if let Some(gw) = self.hub.gateway() {
            let g = gw.generation();
            gw.inner.sessions.end_cron_run(
                &self.session_key,
                reason,
                g.runtime.process_registry().map(AsRef::as_ref),
            );
        }
        tracing::info!(run = %self.run_id, end = ?end, "cron run handed to a runner ended");
    }
}

impl RunnerHub {
    pub(crate) fn new(wait: Duration, events: Events, link: Link) -> Self {
        RunnerHub {
            wait,
            runners: Mutex::new(Vec::new()),
            pending: Mutex::new(HashMap::new()),
            ended: Mutex::new(Ended::default()),
            next: AtomicUsize::new(0),
            events,
            link,
        }
    }

    fn gateway(&self) -> Option<Gateway> {
        self.link
            .get()
            .and_then(std::sync::Weak::upgrade)
            .map(|inner| Gateway { inner })
    }

    pub(crate) fn count(&self) -> usize {
        lock(&self.runners)
            .iter()
            .filter(|o| !o.is_closed())
            .count()
    }

    /// A connection subscribes.
    pub(crate) fn subscribe(&self, out: Outbound) {
        let mut r = lock(&self.runners);
        r.retain(|o| !o.is_closed() && o.id != out.id);
        r.push(out);
    }

    /// A connection went away: its runs fail with the reason.
    pub(crate) fn disconnected(&self, conn_id: u64) {
        lock(&self.runners).retain(|o| o.id != conn_id);
        let failed: Vec<Reply> = {
            let mut p = lock(&self.pending);
            let ids: Vec<String> = p
                .iter()
                .filter(|(_, (c, _))| *c == conn_id)
                .map(|(k, _)| k.clone())
                .collect();
            ids.into_iter()
                .filter_map(|k| p.remove(&k).map(|(_, tx)| tx))
                .collect()
        };
        for tx in failed {
            let _ = tx.send(Err(RunFailure::permanent(
                "the runner client disconnected during the run; it was not re-run",
            )));
        }
    }

    /// Every runner goes away (shutdown).
    pub(crate) fn close_all(&self, reason: &str) {
        lock(&self.runners).clear();
        let all: Vec<Reply> = lock(&self.pending).drain().map(|(_, (_, tx))| tx).collect();
        for tx in all {
            let _ = tx.send(Err(RunFailure::permanent(reason.to_owned())));
        }
    }

    /// A runner reports a run's end. Only the connection the run was
    /// handed to may finish it, and only while the run is in flight: a
    /// result for a run that timed out, was cancelled or already reported
    /// is refused, saying which.
    pub(crate) fn complete(
        &self,
        conn_id: u64,
        run_id: &str,
        result: Result<RunReport, RunFailure>,
    ) -> Result<(), RunnerError> {
        let run_id_owned = || run_id.to_owned();
        let mut p = lock(&self.pending);
        match p.get(run_id) {
            None => Err(match lock(&self.ended).by_run.get(run_id) {
                Some(RunEnd::TimedOut) => RunnerError::TimedOut {
                    run_id: run_id_owned(),
                },
                Some(RunEnd::Cancelled) => RunnerError::Cancelled {
                    run_id: run_id_owned(),
                },
                Some(RunEnd::Completed) => RunnerError::AlreadyCompleted {
                    run_id: run_id_owned(),
                },
                None => RunnerError::Unknown {
                    run_id: run_id_owned(),
                },
            }),
            Some((owner, _)) if *owner != conn_id => Err(RunnerError::NotYours {
                run_id: run_id_owned(),
            }),
            Some(_) => {
                if let Some((_, tx)) = p.remove(run_id) {
                    // The run's task may have given up in this instant (its
                    // deadline): then the result is not taken either.
                    if tx.send(result).is_err() {
                        return Err(RunnerError::TimedOut {
                            run_id: run_id_owned(),
                        });
                    }
                }
                Ok(())
            }
        }
    }

    fn pick(&self) -> Option<Outbound> {
        let mut r = lock(&self.runners);
        r.retain(|o| !o.is_closed());
        if r.is_empty() {
            return None;
        }
        let i = self.next.fetch_add(1, Ordering::Relaxed) % r.len();
        r.get(i).cloned()
    }

    /// A runner, waiting up to the configured time for one to subscribe.
    async fn wait_for_runner(
        &self,
        cancel: Option<&talon_tasks::CancellationToken>,
    ) -> Result<Outbound, RunFailure> {
        let deadline = tokio::time::Instant::now() + self.wait;
        loop {
            if let Some(o) = self.pick() {
                return Ok(o);
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(RunFailure::permanent(format!(
                    "no runner client is subscribed to the gateway (runner.subscribe); waited {} ms, the run was not executed",
                    self.wait.as_millis()
                )));
            }
            if cancel.is_some_and(|c| c.is_cancelled()) {
                return Err(RunFailure::permanent(
                    "the run was cancelled while waiting for a runner client",
                ));
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    fn announce(&self, notification: Notification, params: Value) {
        self.events.push(notification, params);
    }
}

#[async_trait::async_trait]
impl AgentRunner for RunnerHub {
    async fn run_isolated(&self, run: IsolatedRun) -> Result<RunReport, RunFailure> {
        let fired = json!({
            "jobId": run.job_id,
            "jobName": run.job_name,
            "runId": run.run_id,
            "agentId": run.agent_id,
            "sessionKey": run.session_key,
        });
        // The run's session key is bound before anyone hears of it.
        let cron_source = format!("cron:{}", run.job_id);
        if let Some(gw) = self.gateway() {
            gw.inner.sessions.bind_cron_run(CronRunBinding {
                run_id: run.run_id.clone(),
                job_id: run.job_id.clone(),
                agent_id: run.agent_id.clone(),
                session_key: run.session_key.clone(),
                tools: run.tools.clone(),
            });
            gw.inner.sessions.record_message(
                &run.session_key,
                Some(&run.agent_id),
                Role::User,
                Some(&cron_source),
                &run.message,
            );
        }
        let result = self.hand_to_runner(&run, fired).await;
        if let Some(gw) = self.gateway() {
            let (role, text) = match &result {
                Ok(report) => (
                    Role::Assistant,
                    report
                        .summary
                        .clone()
                        .unwrap_or_else(|| "(the run ended with no summary)".to_owned()),
                ),
                Err(failure) => (Role::System, format!("the run failed: {}", failure.message)),
            };
            gw.inner.sessions.record_message(
                &run.session_key,
                None,
                role,
                Some(&cron_source),
                &text,
            );
        }
        result
    }

    async fn system_event(&self, event: SystemEventRequest) -> Result<(), RunFailure> {
        let delivered = self.deliver_system_event(&event).await;
        if delivered.is_ok()
            && let Some(gw) = self.gateway()
        {
            let key = match &event.session_key {
                Some(k) => k.clone(),
                None => gw
                    .generation()
                    .config
                    .main_session()
                    .main_session_key(&event.agent_id),
            };
            let source = event.job_id.as_ref().map(|j| format!("cron:{j}"));
            gw.inner.sessions.record_message(
                &key,
                None,
                Role::System,
                source.as_deref(),
                &event.text,
            );
        }
        delivered
    }
}

impl RunnerHub {
    /// Hand a cron run to a runner and wait for its end (bounded by the
    /// run's deadline and cancellation).
    async fn hand_to_runner(
        &self,
        run: &IsolatedRun,
        fired: Value,
    ) -> Result<RunReport, RunFailure> {
        let mut guard = RunGuard {
            hub: self,
            run_id: run.run_id.clone(),
            session_key: run.session_key.clone(),
            deadline: run.deadline,
            runner: None,
            completed: false,
        };
        self.announce(Notification::CronFired, fired);
        loop {
            let out = self.wait_for_runner(Some(&run.cancel)).await?;
            let (tx, rx) = oneshot::channel();
            lock(&self.pending).insert(run.run_id.clone(), (out.id, tx));
            guard.runner = Some(out.clone());
            let frame = notification(
                Notification::RunnerRun.as_str(),
                json!({
                    "runId": run.run_id,
                    "jobId": run.job_id,
                    "jobName": run.job_name,
                    "agentId": run.agent_id,
                    "sessionKey": run.session_key,
                    "requesterSessionKey": run.requester_session_key,
                    "message": run.message,
                    "model": run.model,
                    "thinking": run.thinking,
                    "tools": run.tools,
                    "delivery": run.delivery,
                    "trigger": "cron",
                    "timeoutMs": u64::try_from(run.timeout.as_millis()).unwrap_or(u64::MAX),
                }),
            )
            .to_string();
            if !out.send(frame) {
                lock(&self.pending).remove(&run.run_id);
                guard.runner = None;
                self.disconnected(out.id);
                continue;
            }
            return tokio::select! {
                r = rx => match r {
                    Ok(result) => {
                        guard.completed = true;
                        result
                    }
                    Err(_) => Err(RunFailure::permanent("the runner client went away during the run; it was not re-run")),
                },
                () = tokio::time::sleep_until(run.deadline) => {
                    // The guard tells the runner (`reason: "timeout"`).
                    Err(RunFailure::timed_out(run.timeout))
                }
                () = run.cancel.cancelled() => {
                    if tokio::time::Instant::now() >= run.deadline {
                        Err(RunFailure::timed_out(run.timeout))
                    } else {
                        Err(RunFailure::permanent("the run was cancelled (its job was removed, its task cancelled or the gateway is stopping)"))
                    }
                }
            };
        }
    }

    /// Send a system event to a runner.
    async fn deliver_system_event(&self, event: &SystemEventRequest) -> Result<(), RunFailure> {
        let out = self.wait_for_runner(None).await?;
        let frame = notification(
            Notification::RunnerSystemEvent.as_str(),
            json!({
                "agentId": event.agent_id,
                "sessionKey": event.session_key,
                "text": event.text,
                "wakeMode": format!("{:?}", event.wake_mode).to_lowercase(),
                "jobId": event.job_id,
            }),
        )
        .to_string();
        if out.send(frame) {
            Ok(())
        } else {
            Err(RunFailure::permanent(
                "the runner client could not take the system event (disconnected or not reading)",
            ))
        }
    }
}

/// Ends one turn handed out by [`RunnerHub`]'s [`talon_runtime::TurnRunner`]
/// exactly once, however it ends (including [`talon_runtime::run_turn`]
/// dropping it at its deadline): the pending entry goes, the end is
/// remembered for a late `runner.complete`, and the runner gets
/// `runner.cancel` unless it reported the result.
struct TurnGuard<'a> {
    hub: &'a RunnerHub,
    run_id: String,
    runner: Option<Outbound>,
    completed: bool,
}

impl Drop for TurnGuard<'_> {
    fn drop(&mut self) {
        lock(&self.hub.pending).remove(&self.run_id);
        let end = if self.completed {
            RunEnd::Completed
        } else {
            RunEnd::Cancelled
        };
        lock(&self.hub.ended).record(&self.run_id, end);
        if end != RunEnd::Completed
            && let Some(out) = &self.runner
        {
            let _ = out.send(
                notification(
                    Notification::RunnerCancel.as_str(),
                    json!({
                        "runId": self.run_id,
                        "reason": "cancelled",
                        "message": "the run was cancelled or ran past its budget",
                    }),
                )
                .to_string(),
            );
        }
    }
}

impl RunnerHub {
    /// Tell a subscribed runner (if any) that `text` arrived in
    /// `session_key` (a sub-agent's announce-back): a `runner.systemEvent`
    /// with `source`. Returns whether a runner took it; the message is in
    /// the session's history either way.
    pub(crate) fn deliver_to_session(
        &self,
        agent_id: &str,
        session_key: &str,
        text: &str,
        source: &str,
    ) -> bool {
        let Some(out) = self.pick() else {
            return false;
        };
        out.send(
            notification(
                Notification::RunnerSystemEvent.as_str(),
                json!({
                    "agentId": agent_id,
                    "sessionKey": session_key,
                    "text": text,
                    "wakeMode": "now",
                    "source": source,
                }),
            )
            .to_string(),
        )
    }
}

#[async_trait::async_trait]
impl talon_runtime::TurnRunner for RunnerHub {
    async fn run_turn(
        &self,
        turn: &talon_runtime::AgentTurn,
        cancel: &talon_tool_catalog::CancellationToken,
    ) -> Result<talon_runtime::TurnReply, talon_runtime::TurnError> {
        use talon_runtime::{TurnError, TurnErrorKind, TurnReply};
        let mut guard = TurnGuard {
            hub: self,
            run_id: turn.run_id.clone(),
            runner: None,
            completed: false,
        };
        loop {
            let out = self
                .wait_for_runner(Some(cancel))
                .await
                .map_err(|f| TurnError::new(TurnErrorKind::NoRunner, f.message))?;
            let (tx, rx) = oneshot::channel();
            lock(&self.pending).insert(turn.run_id.clone(), (out.id, tx));
            guard.runner = Some(out.clone());
            let frame = notification(
                Notification::RunnerRun.as_str(),
                json!({
                    "runId": turn.run_id,
                    "agentId": turn.agent_id,
                    "sessionKey": turn.session_key,
                    "requesterSessionKey": turn.requester_session_key,
                    "message": turn.message,
                    "label": turn.label,
                    "model": turn.model,
                    "thinking": turn.thinking,
                    "tools": turn.tools,
                    "trigger": turn.trigger.as_str(),
                    "timeoutMs": u64::try_from(turn.timeout.as_millis()).unwrap_or(u64::MAX),
                }),
            )
            .to_string();
            if !out.send(frame) {
                lock(&self.pending).remove(&turn.run_id);
                guard.runner = None;
                self.disconnected(out.id);
                continue;
            }
            return match rx.await {
                Ok(Ok(report)) => {
                    guard.completed = true;
                    Ok(TurnReply {
                        reply: report.summary,
                    })
                }
                Ok(Err(failure)) => {
                    guard.completed = true;
                    Err(TurnError::new(TurnErrorKind::Failed, failure.message))
                }
                Err(_) => Err(TurnError::new(
                    TurnErrorKind::RunnerLost,
                    "the runner client went away during the run",
                )),
            };
        }
    }
}
