//! Running one handler so that an error, a panic or a timeout becomes a
//! value the gate can turn into a block.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures::FutureExt;

use crate::error::HookError;

/// Why a handler did not produce a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HandlerFailure {
    /// It returned an error.
    Error(HookError),
    /// It panicked.
    Panicked(String),
    /// It ran past its timeout.
    TimedOut(Duration),
}

impl HandlerFailure {
    /// A short description for logs and block reasons (never the params).
    pub(crate) fn describe(&self) -> String {
        match self {
            HandlerFailure::Error(e) => e.to_string(),
            HandlerFailure::Panicked(msg) => format!("panicked: {msg}"),
            HandlerFailure::TimedOut(d) => format!("timed out after {}ms", d.as_millis()),
        }
    }

    /// The error class reported in diagnostics.
    pub(crate) fn class(&self) -> &'static str {
        match self {
            HandlerFailure::Error(_) => "error",
            HandlerFailure::Panicked(_) => "panic",
            HandlerFailure::TimedOut(_) => "timeout",
        }
    }
}

/// Await `fut` with an optional timeout, catching panics.
pub(crate) async fn run_guarded<T, F>(
    fut: F,
    timeout: Option<Duration>,
) -> Result<T, HandlerFailure>
where
    F: Future<Output = Result<T, HookError>>,
{
    let caught = AssertUnwindSafe(fut).catch_unwind();
    let outcome = match timeout {
        Some(limit) => match tokio::time::timeout(limit, caught).await {
            Ok(v) => v,
            Err(_) => return Err(HandlerFailure::TimedOut(limit)),
        },
        None => caught.await,
    };
    match outcome {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(HandlerFailure::Error(e)),
        Err(payload) => Err(HandlerFailure::Panicked(panic_message(payload.as_ref()))),
    }
}

/// Run a synchronous handler, catching panics.
pub(crate) fn run_sync_guarded<T>(f: impl FnOnce() -> T) -> Result<T, HandlerFailure> {
    std::panic::catch_unwind(AssertUnwindSafe(f))
        .map_err(|payload| HandlerFailure::Panicked(panic_message(payload.as_ref())))
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".to_owned()
    }
}
