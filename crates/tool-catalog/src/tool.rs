//! The `Tool` trait, a call, its context and its abort signal.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use serde_json::{Map, Value};

use crate::error::ToolError;
use crate::result::ToolResult;
use crate::spec::ToolSpec;

/// One call of a tool by the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The call id the model gave (used for idempotency and correlation).
    pub id: String,
    /// The (normalised) tool name.
    pub name: String,
    /// The decoded arguments.
    pub params: Map<String, Value>,
}

/// What a tool knows about the run it executes in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolContext {
    /// The agent id.
    pub agent_id: String,
    /// The session key.
    pub session_key: String,
    /// Whether the run is sandboxed.
    pub sandboxed: bool,
}

impl ToolContext {
    /// A context for an agent and session.
    pub fn new(agent_id: impl Into<String>, session_key: impl Into<String>) -> Self {
        ToolContext {
            agent_id: agent_id.into(),
            session_key: session_key.into(),
            sandboxed: false,
        }
    }

    /// Builder: mark the run sandboxed.
    pub fn sandboxed(mut self, sandboxed: bool) -> Self {
        self.sandboxed = sandboxed;
        self
    }
}

/// A tool the model can call.
#[async_trait::async_trait]
pub trait Tool: Send + Sync {
    /// The tool's definition.
    fn spec(&self) -> &ToolSpec;

    /// Run one call. Implementations check `abort` at their await points and
    /// return [`ToolError::aborted`] once it fires.
    async fn execute(
        &self,
        call: &ToolCall,
        ctx: &ToolContext,
        abort: &AbortSignal,
    ) -> Result<ToolResult, ToolError>;
}

#[derive(Debug, Default)]
struct AbortInner {
    aborted: AtomicBool,
    reason: Mutex<Option<String>>,
    wakers: Mutex<Vec<Waker>>,
}

/// A cloneable, runtime-independent abort signal: one side calls
/// [`AbortSignal::abort`], tools poll [`AbortSignal::is_aborted`] or await
/// [`AbortSignal::aborted`].
#[derive(Debug, Clone, Default)]
pub struct AbortSignal {
    inner: Arc<AbortInner>,
}

impl AbortSignal {
    /// A signal that has not fired.
    pub fn new() -> Self {
        Self::default()
    }

    /// Fire the signal (idempotent: the first reason is kept).
    pub fn abort(&self, reason: impl Into<String>) {
        if let Ok(mut slot) = self.inner.reason.lock()
            && slot.is_none()
        {
            *slot = Some(reason.into());
        }
        self.inner.aborted.store(true, Ordering::SeqCst);
        let wakers = match self.inner.wakers.lock() {
            Ok(mut w) => std::mem::take(&mut *w),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        };
        for w in wakers {
            w.wake();
        }
    }

    /// Whether the signal fired.
    pub fn is_aborted(&self) -> bool {
        self.inner.aborted.load(Ordering::SeqCst)
    }

    /// The reason given to the first `abort`.
    pub fn reason(&self) -> Option<String> {
        self.inner.reason.lock().ok().and_then(|r| r.clone())
    }

    /// an aborted `ToolError` once the signal fired, for `?` at check
    /// points.
    pub fn check(&self) -> Result<(), ToolError> {
        if self.is_aborted() {
            Err(ToolError::aborted(
                self.reason().unwrap_or_else(|| "aborted".to_owned()),
            ))
        } else {
            Ok(())
        }
    }

    /// A future that completes when the signal fires.
    pub fn aborted(&self) -> Aborted {
        Aborted {
            signal: self.clone(),
        }
    }
}

/// The future returned by [`AbortSignal::aborted`].
#[derive(Debug)]
pub struct Aborted {
    signal: AbortSignal,
}

impl Future for Aborted {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.signal.is_aborted() {
            return Poll::Ready(());
        }
        if let Ok(mut wakers) = self.signal.inner.wakers.lock()
            && !wakers.iter().any(|w| w.will_wake(cx.waker()))
        {
            wakers.push(cx.waker().clone());
        }
        // Re-check after registering so an abort between the first check and
        // the registration is not missed.
        if self.signal.is_aborted() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}
