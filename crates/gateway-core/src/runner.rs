//! Agent runs the gateway cannot execute itself (a cron job's isolated
//! turn, a system event) go to a connected runner client that called
//! `runner.subscribe`. With none connected, the run waits for one (up to
//! `gateway.limits.runnerWaitMs`), then ends as a recorded failure with the
//! reason; it is never silently dropped.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};
use talon_cron::{AgentRunner, IsolatedRun, RunFailure, RunReport, SystemEventRequest};
use talon_gateway_protocol::Notification;
use tokio::sync::oneshot;

use crate::gateway::Events;
use crate::outbound::Outbound;
use crate::rpc::notification;

type Reply = oneshot::Sender<Result<RunReport, RunFailure>>;

/// The subscribed runner clients and the runs handed to them.
pub(crate) struct RunnerHub {
    wait: Duration,
    runners: Mutex<Vec<Outbound>>,
    pending: Mutex<HashMap<String, (u64, Reply)>>,
    next: AtomicUsize,
    events: Events,
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

impl RunnerHub {
    pub(crate) fn new(wait: Duration, events: Events) -> Self {
        RunnerHub {
            wait,
            runners: Mutex::new(Vec::new()),
            pending: Mutex::new(HashMap::new()),
            next: AtomicUsize::new(0),
            events,
        }
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
    /// handed to may finish it.
    pub(crate) fn complete(
        &self,
        conn_id: u64,
        run_id: &str,
        result: Result<RunReport, RunFailure>,
    ) -> Result<(), String> {
        let mut p = lock(&self.pending);
        match p.get(run_id) {
            None => Err(format!(
                "no run `{run_id}` is waiting for a result (it finished, timed out or was never handed out)"
            )),
            Some((owner, _)) if *owner != conn_id => Err(format!(
                "run `{run_id}` was handed to another runner connection"
            )),
            Some(_) => {
                if let Some((_, tx)) = p.remove(run_id) {
                    let _ = tx.send(result);
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
        self.announce(Notification::CronFired, fired);
        loop {
            let out = self.wait_for_runner(Some(&run.cancel)).await?;
            let (tx, rx) = oneshot::channel();
            lock(&self.pending).insert(run.run_id.clone(), (out.id, tx));
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
                self.disconnected(out.id);
                continue;
            }
            return tokio::select! {
                r = rx => r.unwrap_or_else(|_| Err(RunFailure::permanent("the runner client went away during the run; it was not re-run"))),
                () = run.cancel.cancelled() => {
                    lock(&self.pending).remove(&run.run_id);
                    let _ = out.send(notification(Notification::RunnerCancel.as_str(), json!({"runId": run.run_id})).to_string());
                    Err(RunFailure::permanent("the run was cancelled (its time budget ran out or the gateway is stopping)"))
                }
            };
        }
    }

    async fn system_event(&self, event: SystemEventRequest) -> Result<(), RunFailure> {
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
