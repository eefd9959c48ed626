//! A wall clock that follows tokio's (pausable) clock.

use talon_tasks::Clock;

/// Epoch milliseconds = a fixed start plus the time tokio's clock has moved
/// since this clock was made. Under `#[tokio::test(start_paused = true)]`
/// it advances exactly as the timer does, which makes timer tests
/// deterministic. Production uses [`talon_tasks::SystemClock`].
#[derive(Debug, Clone)]
pub struct TokioClock {
    base_ms: i64,
    start: tokio::time::Instant,
}

impl TokioClock {
    /// A clock reading `base_ms` now.
    pub fn new(base_ms: i64) -> Self {
        TokioClock {
            base_ms,
            start: tokio::time::Instant::now(),
        }
    }
}

impl Clock for TokioClock {
    fn now_ms(&self) -> i64 {
        let elapsed = tokio::time::Instant::now().duration_since(self.start);
        self.base_ms + i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
    }
}
