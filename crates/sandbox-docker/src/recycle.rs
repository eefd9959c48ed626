//! Recycling a container that can no longer be trusted to run commands.
//!
//! A command killed with `SIGKILL` (exit 137) that Talon did not kill was
//! killed by the kernel or the engine. When the engine reports an OOM for
//! the container since the command started (its state's `OOMKilled`, or an
//! `oom` event), whatever filled its memory (a full tmpfs, a leaked
//! process) would get the next command killed too; after
//! [`ENGINE_KILLS_BEFORE_RECYCLE`] such kills in a row the cause does not
//! matter. Either way the container is removed (by id, so nothing created
//! meanwhile under its name is touched), its handle answers
//! [`SandboxError::Gone`] from then on, and a [`SandboxRecycled`] event goes
//! to the backend's sink: the next `ensure` of the scope creates a fresh
//! container.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bollard::query_parameters::{EventsOptions, RemoveContainerOptionsBuilder};
use futures::StreamExt;
use talon_sandbox_core::{RecycleReason, SandboxEvent, SandboxRecycled, now_ms};

use crate::engine_error::is_not_found;
use crate::exec::ExecTarget;

/// Unexplained `SIGKILL`s in a row after which a container is recycled.
pub(crate) const ENGINE_KILLS_BEFORE_RECYCLE: u32 = 3;
/// The exit code of a command killed by `SIGKILL`.
const SIGKILL_EXIT: i64 = 128 + 9;
/// How long the OOM lookup may take in all.
const OOM_LOOKUP_TIMEOUT: Duration = Duration::from_secs(5);
/// The engine logs an OOM event asynchronously: when the first lookup
/// finds none, one more after this pause.
const OOM_EVENT_GRACE: Duration = Duration::from_millis(200);

/// One container handle's health: recycled or not, and the unexplained
/// kills seen in a row.
#[derive(Debug, Default)]
pub(crate) struct Health {
    recycled: AtomicBool,
    engine_kills: AtomicU32,
}

impl Health {
    pub(crate) fn is_recycled(&self) -> bool {
        self.recycled.load(Ordering::SeqCst)
    }
}

/// A time as the engine's `since` / `until` parameters take it.
fn engine_time(at: SystemTime) -> String {
    let d = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    format!("{}.{:09}", d.as_secs(), d.subsec_nanos())
}

impl ExecTarget {
    /// Judge how an exec ended (`killed_by_us`: Talon's own kill or
    /// timeout) and recycle the container when it must go.
    pub(crate) async fn after_exit(&self, code: i64, killed_by_us: bool, started_at: SystemTime) {
        if killed_by_us {
            return;
        }
        if code != SIGKILL_EXIT {
            self.health.engine_kills.store(0, Ordering::SeqCst);
            return;
        }
        let kills = self.health.engine_kills.fetch_add(1, Ordering::SeqCst) + 1;
        let oom = tokio::time::timeout(OOM_LOOKUP_TIMEOUT, self.oom_since(started_at))
            .await
            .unwrap_or(false);
        let reason = if oom {
            RecycleReason::OomKilled
        } else if kills >= ENGINE_KILLS_BEFORE_RECYCLE {
            RecycleReason::RepeatedKills { count: kills }
        } else {
            tracing::info!(
                container = %self.container,
                kills,
                "a sandbox command was killed (exit 137) by something other than Talon; the \
                 container is recycled after {ENGINE_KILLS_BEFORE_RECYCLE} in a row"
            );
            return;
        };
        self.recycle(reason, code).await;
    }

    /// Whether the engine reports an OOM kill in the container since
    /// `since`: its state's `OOMKilled` (set by engines that record it for
    /// any process, and for the main one by all), else an `oom` event.
    async fn oom_since(&self, since: SystemTime) -> bool {
        if let Ok(info) = self.docker.inspect_container(&self.id, None).await
            && info.state.and_then(|s| s.oom_killed) == Some(true)
        {
            return true;
        }
        if self.oom_event_since(since).await {
            return true;
        }
        tokio::time::sleep(OOM_EVENT_GRACE).await;
        self.oom_event_since(since).await
    }

    async fn oom_event_since(&self, since: SystemTime) -> bool {
        // A second of slack for clock rounding; `until` now makes the
        // engine answer with what it has and end the stream.
        let from = since.checked_sub(Duration::from_secs(1)).unwrap_or(since);
        let options = EventsOptions {
            since: Some(engine_time(from)),
            until: Some(engine_time(SystemTime::now())),
            filters: Some(HashMap::from([
                ("container".to_owned(), vec![self.id.to_string()]),
                ("event".to_owned(), vec!["oom".to_owned()]),
            ])),
        };
        let mut events = self.docker.events(Some(options));
        while let Some(event) = events.next().await {
            match event {
                Ok(event) if event.action.as_deref() == Some("oom") => return true,
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(container = %self.container, "cannot read the engine's OOM events: {e}");
                    return false;
                }
            }
        }
        false
    }

    /// Remove the container (once per handle) and report it.
    pub(crate) async fn recycle(&self, reason: RecycleReason, exit_code: i64) {
        if self.health.recycled.swap(true, Ordering::SeqCst) {
            return;
        }
        let options = RemoveContainerOptionsBuilder::default()
            .force(true)
            .v(true)
            .build();
        let removed = match self.docker.remove_container(&self.id, Some(options)).await {
            Ok(()) => true,
            Err(e) if is_not_found(&e) => true,
            Err(e) => {
                tracing::error!(container = %self.container, "could not remove a sandbox container that must be recycled ({reason}): {e}");
                false
            }
        };
        self.usage.forget(&self.container);
        tracing::warn!(
            container = %self.container,
            reason = reason.code(),
            removed,
            "sandbox container recycled: {reason}; the next use creates a fresh one"
        );
        if let Some(sink) = &self.events {
            sink.event(&SandboxEvent::Recycled(SandboxRecycled {
                backend_id: "docker".to_owned(),
                name: self.container.to_string(),
                container_id: self.id.to_string(),
                scope_key: self.scope_key.to_string(),
                reason,
                exit_code,
                at_ms: now_ms(),
                removed,
            }));
        }
    }
}
