//! `ProcessRegistry`: every command `exec` launched, shared with `process`.

use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::exec::config::ExecConfig;
use crate::process::session::{KillReason, Session};

/// How long `shutdown` waits for killed sessions to be reaped.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(10);
/// Bounds of the sweeper period.
const SWEEP_MIN: Duration = Duration::from_millis(50);
const SWEEP_MAX: Duration = Duration::from_secs(60);

/// How the registry keeps sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegistryOptions {
    /// How long a finished background session stays readable.
    pub retention: Duration,
    /// Bytes of output kept per session (half head, half tail).
    pub max_output_bytes: usize,
    /// How many commands one session key may have running at once
    /// (foreground and background); further `exec` calls are refused
    /// before anything is launched.
    pub max_running_per_key: usize,
}

/// The default of [`RegistryOptions::max_running_per_key`].
pub const DEFAULT_MAX_RUNNING_PER_KEY: usize = 64;

impl RegistryOptions {
    /// The options `tools.exec` asks for (`cleanupMs`, `maxOutputBytes`).
    pub fn from_config(config: &ExecConfig) -> Self {
        RegistryOptions {
            retention: config.cleanup(),
            max_output_bytes: usize::try_from(config.max_output_bytes).unwrap_or(usize::MAX),
            max_running_per_key: DEFAULT_MAX_RUNNING_PER_KEY,
        }
    }
}

impl Default for RegistryOptions {
    fn default() -> Self {
        RegistryOptions::from_config(&ExecConfig::default())
    }
}

#[derive(Debug)]
struct Inner {
    options: RegistryOptions,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    sweeper: AtomicBool,
    closed: AtomicBool,
    counter: AtomicU64,
    seed: RandomState,
}

impl Inner {
    fn sessions(&self) -> MutexGuard<'_, HashMap<String, Arc<Session>>> {
        match self.sessions.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Forgets finished sessions older than the retention.
    fn sweep(&self) {
        let now = Instant::now();
        let retention = self.options.retention;
        self.sessions().retain(|_, s| match s.finished_at() {
            Some(at) => now.saturating_duration_since(at) < retention,
            None => true,
        });
    }

    fn kill_all(&self, reason: KillReason) {
        for session in self.sessions().values() {
            session.request_kill(reason);
        }
    }
}

/// The commands `exec` launched, keyed by session id, shared by the `exec`
/// and `process` tools of a gateway (construct both from the same
/// `Arc<ProcessRegistry>`).
///
/// Every launched command is registered, foreground ones too, so that
/// [`ProcessRegistry::shutdown`] and dropping the registry kill every live
/// process group; only background sessions are visible to `process`, and
/// only to the session key that started them. Finished background sessions
/// are forgotten after [`RegistryOptions::retention`] (checked on every
/// access and by a sweeper task started with the first session).
#[derive(Debug)]
pub struct ProcessRegistry {
    inner: Arc<Inner>,
}

impl Default for ProcessRegistry {
    fn default() -> Self {
        ProcessRegistry::new(RegistryOptions::default())
    }
}

impl ProcessRegistry {
    /// An empty registry (cheap: no task is started until the first
    /// session).
    pub fn new(options: RegistryOptions) -> Self {
        ProcessRegistry {
            inner: Arc::new(Inner {
                options,
                sessions: Mutex::new(HashMap::new()),
                sweeper: AtomicBool::new(false),
                closed: AtomicBool::new(false),
                counter: AtomicU64::new(0),
                seed: RandomState::new(),
            }),
        }
    }

    /// Its options.
    pub fn options(&self) -> RegistryOptions {
        self.inner.options
    }

    /// How many launched commands are still running (foreground and
    /// background).
    pub fn running_count(&self) -> usize {
        self.inner
            .sessions()
            .values()
            .filter(|s| !s.is_finished())
            .count()
    }

    /// Whether the registry was shut down (new commands are refused).
    pub(crate) fn is_closed(&self) -> bool {
        self.inner.closed.load(Ordering::SeqCst)
    }

    /// How many commands `owner` has running (foreground and background).
    pub(crate) fn running_for(&self, owner: &str) -> usize {
        self.inner
            .sessions()
            .values()
            .filter(|s| s.info.owner == owner && !s.is_finished())
            .count()
    }

    /// Kills every live command `owner` (a session key) started,
    /// foreground and background, and returns how many: a session that
    /// ended (a cron run that timed out) leaves nothing running.
    pub fn kill_owner(&self, owner: &str) -> usize {
        let live: Vec<Arc<Session>> = self
            .inner
            .sessions()
            .values()
            .filter(|s| s.info.owner == owner && !s.is_finished())
            .cloned()
            .collect();
        for s in &live {
            s.request_kill(KillReason::Abort);
        }
        live.len()
    }

    /// Kills every live process group, waits (bounded) until each is
    /// reaped, forgets every session and refuses new ones.
    pub async fn shutdown(&self) {
        self.inner.closed.store(true, Ordering::SeqCst);
        self.inner.kill_all(KillReason::Shutdown);
        let sessions: Vec<Arc<Session>> = self.inner.sessions().values().cloned().collect();
        let all = futures::future::join_all(sessions.iter().map(|s| s.wait_finished()));
        if tokio::time::timeout(SHUTDOWN_WAIT, all).await.is_err() {
            tracing::warn!("exec sessions still ending after the shutdown wait");
        }
        self.inner.sessions().clear();
    }

    /// A fresh session id (`exec-` and 12 base-32 characters).
    pub(crate) fn new_id(&self) -> String {
        const ALPHABET: &[u8; 32] = b"abcdefghijkmnpqrstuvwxyz23456789";
        loop {
            let mut hasher = self.inner.seed.build_hasher();
            hasher.write_u64(self.inner.counter.fetch_add(1, Ordering::Relaxed));
            hasher.write_u128(
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos()),
            );
            let mut bits = hasher.finish();
            let mut id = String::from("exec-");
            for _ in 0..12 {
                id.push(char::from(ALPHABET[(bits & 31) as usize]));
                bits >>= 5;
            }
            if !self.inner.sessions().contains_key(&id) {
                return id;
            }
        }
    }

    /// Registers a launched session; refused (and the session killed) once
    /// the registry is shut down.
    pub(crate) fn insert(&self, session: Arc<Session>) -> bool {
        if self.inner.closed.load(Ordering::SeqCst) {
            session.request_kill(KillReason::Shutdown);
            return false;
        }
        self.inner.sweep();
        self.inner
            .sessions()
            .insert(session.info.id.clone(), session);
        self.ensure_sweeper();
        true
    }

    /// The background session `id` if `owner` started it.
    pub(crate) fn get(&self, id: &str, owner: &str) -> Option<Arc<Session>> {
        self.inner.sweep();
        self.inner
            .sessions()
            .get(id)
            .filter(|s| s.info.owner == owner && s.is_backgrounded())
            .cloned()
    }

    /// `owner`'s background sessions, oldest first.
    pub(crate) fn list(&self, owner: &str) -> Vec<Arc<Session>> {
        self.inner.sweep();
        let mut list: Vec<Arc<Session>> = self
            .inner
            .sessions()
            .values()
            .filter(|s| s.info.owner == owner && s.is_backgrounded())
            .cloned()
            .collect();
        list.sort_by(|a, b| {
            a.info
                .started
                .cmp(&b.info.started)
                .then(a.info.id.cmp(&b.info.id))
        });
        list
    }

    /// Forgets one session.
    pub(crate) fn forget(&self, id: &str) {
        self.inner.sessions().remove(id);
    }

    /// Forgets `owner`'s finished background sessions; returns their ids.
    pub(crate) fn clear_finished(&self, owner: &str) -> Vec<String> {
        let mut cleared = Vec::new();
        self.inner.sessions().retain(|id, s| {
            let drop_it = s.info.owner == owner && s.is_backgrounded() && s.is_finished();
            if drop_it {
                cleared.push(id.clone());
            }
            !drop_it
        });
        cleared.sort();
        cleared
    }

    fn ensure_sweeper(&self) {
        if self.inner.sweeper.swap(true, Ordering::SeqCst) {
            return;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            self.inner.sweeper.store(false, Ordering::SeqCst);
            return;
        };
        let period = (self.inner.options.retention / 2).clamp(SWEEP_MIN, SWEEP_MAX);
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        handle.spawn(async move {
            loop {
                tokio::time::sleep(period).await;
                let Some(inner) = weak.upgrade() else {
                    break;
                };
                if inner.closed.load(Ordering::SeqCst) {
                    break;
                }
                inner.sweep();
            }
        });
    }
}

impl Drop for ProcessRegistry {
    fn drop(&mut self) {
        // The supervisors kill their process groups when asked; if the
        // runtime is gone with them, the launcher's control handles kill on
        // drop instead.
        self.inner.closed.store(true, Ordering::SeqCst);
        self.inner.kill_all(KillReason::Shutdown);
        self.inner.sessions().clear();
    }
}
