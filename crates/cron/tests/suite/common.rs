use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use talon_cron::*;

/// 2026-01-01T00:00:00Z.
pub(crate) const T0: i64 = 1_767_225_600_000;

#[derive(Debug, Clone)]
pub(crate) enum Step {
    Ok,
    Fail(&'static str),
    Hang,
}

/// A runner that follows a script (default: succeed) and records calls.
#[derive(Debug, Default)]
pub(crate) struct Scripted {
    pub(crate) calls: Mutex<Vec<IsolatedRun>>,
    pub(crate) events: Mutex<Vec<SystemEventRequest>>,
    pub(crate) script: Mutex<VecDeque<Step>>,
    pub(crate) clock: Mutex<Option<Arc<dyn Clock>>>,
    pub(crate) call_times: Mutex<Vec<i64>>,
}

impl Scripted {
    pub(crate) fn new(steps: impl IntoIterator<Item = Step>) -> Arc<Self> {
        Arc::new(Scripted {
            script: Mutex::new(steps.into_iter().collect()),
            ..Scripted::default()
        })
    }

    pub(crate) fn with_clock(self: Arc<Self>, clock: Arc<dyn Clock>) -> Arc<Self> {
        *self.clock.lock().unwrap() = Some(clock);
        self
    }

    pub(crate) fn calls(&self) -> Vec<IsolatedRun> {
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
pub(crate) struct JumpClock {
    pub(crate) base: TokioClock,
    pub(crate) offset: Arc<AtomicI64>,
}

impl JumpClock {
    pub(crate) fn new(t0: i64) -> Self {
        JumpClock {
            base: TokioClock::new(t0),
            offset: Arc::new(AtomicI64::new(0)),
        }
    }
    pub(crate) fn jump(&self, ms: i64) {
        self.offset.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for JumpClock {
    fn now_ms(&self) -> i64 {
        self.base.now_ms() + self.offset.load(Ordering::SeqCst)
    }
}

pub(crate) fn operator() -> Creator {
    Creator {
        agent_id: "main".into(),
        session_key: Some("agent:main:main".into()),
        tools: None,
    }
}

pub(crate) fn agent_turn(name: &str, schedule: Schedule) -> JobSpec {
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

pub(crate) fn every(ms: i64) -> Schedule {
    Schedule::Every {
        every_ms: ms,
        anchor_ms: None,
    }
}

pub(crate) fn service(
    dir: &std::path::Path,
    runner: Arc<Scripted>,
    clock: Arc<dyn Clock>,
) -> CronService {
    let opts = CronOptions {
        clock,
        // Most tests use short intervals; the quota tests set their own.
        quotas: CronQuotas::unlimited(),
        ..CronOptions::default()
    };
    CronService::open(&dir.join("talon.db"), runner, opts).unwrap()
}

pub(crate) async fn sleep_s(s: u64) {
    tokio::time::sleep(std::time::Duration::from_secs(s)).await;
}

/// A [`TokioClock`] whose wall reading can be stepped, as an NTP
/// correction or an operator's `date -s` steps the system clock.
#[derive(Debug, Clone)]
pub(crate) struct SteppedClock {
    pub(crate) base: TokioClock,
    pub(crate) offset_ms: Arc<AtomicI64>,
}

impl SteppedClock {
    pub(crate) fn new(base_ms: i64) -> Self {
        SteppedClock {
            base: TokioClock::new(base_ms),
            offset_ms: Arc::new(AtomicI64::new(0)),
        }
    }

    pub(crate) fn step(&self, by_ms: i64) {
        self.offset_ms.fetch_add(by_ms, Ordering::SeqCst);
    }
}

impl Clock for SteppedClock {
    fn now_ms(&self) -> i64 {
        self.base.now_ms() + self.offset_ms.load(Ordering::SeqCst)
    }
}
