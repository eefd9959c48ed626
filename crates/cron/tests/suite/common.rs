use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use talon_cron::*;

/// 2026-01-01T00:00:00Z.
pub const T0: i64 = 1_767_225_600_000;

#[derive(Debug, Clone)]
pub enum Step {
    Ok,
    Fail(&'static str),
    Hang,
}

/// A runner that follows a script (default: succeed) and records calls.
#[derive(Debug, Default)]
pub struct Scripted {
    pub calls: Mutex<Vec<IsolatedRun>>,
    pub events: Mutex<Vec<SystemEventRequest>>,
    pub script: Mutex<VecDeque<Step>>,
    pub clock: Mutex<Option<Arc<dyn Clock>>>,
    pub call_times: Mutex<Vec<i64>>,
}

impl Scripted {
    pub fn new(steps: impl IntoIterator<Item = Step>) -> Arc<Self> {
        Arc::new(Scripted {
            script: Mutex::new(steps.into_iter().collect()),
            ..Scripted::default()
        })
    }

    pub fn with_clock(self: Arc<Self>, clock: Arc<dyn Clock>) -> Arc<Self> {
        *self.clock.lock().unwrap() = Some(clock);
        self
    }

    pub fn calls(&self) -> Vec<IsolatedRun> {
        self.calls.lock().unwrap().clone()
    }

    fn note_time(&self) {
        if let Some(c) = self.clock.lock().unwrap().as_ref() {
            self.call_times.lock().unwrap().push(c.now_ms());
        }
    }
}

#[async_trait::async_trait]
impl AgentRunner for Scripted {
    async fn run_isolated(&self, run: IsolatedRun) -> std::result::Result<RunReport, RunFailure> {
        self.note_time();
        let cancel = run.cancel.clone();
        self.calls.lock().unwrap().push(run);
        let step = self.script.lock().unwrap().pop_front().unwrap_or(Step::Ok);
        match step {
            Step::Ok => Ok(RunReport::ok("done")),
            Step::Fail(m) => Err(RunFailure::new(m)),
            Step::Hang => {
                cancel.cancelled().await;
                Err(RunFailure::permanent("cancelled"))
            }
        }
    }

    async fn system_event(&self, event: SystemEventRequest) -> std::result::Result<(), RunFailure> {
        self.note_time();
        self.events.lock().unwrap().push(event);
        Ok(())
    }
}

/// tokio's (paused) clock plus a jump offset: clock jumps in tests.
#[derive(Debug, Clone)]
pub struct JumpClock {
    pub base: TokioClock,
    pub offset: Arc<AtomicI64>,
}

impl JumpClock {
    pub fn new(t0: i64) -> Self {
        JumpClock {
            base: TokioClock::new(t0),
            offset: Arc::new(AtomicI64::new(0)),
        }
    }
    pub fn jump(&self, ms: i64) {
        self.offset.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for JumpClock {
    fn now_ms(&self) -> i64 {
        self.base.now_ms() + self.offset.load(Ordering::SeqCst)
    }
}

pub fn operator() -> Creator {
    Creator {
        agent_id: "main".into(),
        session_key: Some("agent:main:main".into()),
        tools: None,
    }
}

pub fn agent_turn(name: &str, schedule: Schedule) -> JobSpec {
    JobSpec {
        name: name.into(),
        schedule: Some(schedule),
        payload: Some(Payload::AgentTurn {
            message: format!("run {name}"),
            model: None,
            thinking: None,
            timeout_seconds: None,
        }),
        ..JobSpec::default()
    }
}

pub fn every(ms: i64) -> Schedule {
    Schedule::Every {
        every_ms: ms,
        anchor_ms: None,
    }
}

pub fn service(dir: &std::path::Path, runner: Arc<Scripted>, clock: Arc<dyn Clock>) -> CronService {
    let opts = CronOptions {
        clock,
        ..CronOptions::default()
    };
    CronService::open(&dir.join("talon.db"), runner, opts).unwrap()
}

pub async fn sleep_s(s: u64) {
    tokio::time::sleep(std::time::Duration::from_secs(s)).await;
}
