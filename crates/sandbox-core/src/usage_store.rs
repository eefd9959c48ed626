//! When each sandbox was last used, on disk so it survives restarts and is
//! shared by the gateway and the CLI: [`UsageStore`], the file
//! `<state dir>/sandbox/usage.json` (OpenClaw keeps the same fact in
//! `<state dir>/sandbox/containers.json`).
//!
//! Docker labels cannot change after create and a remote marker is only
//! rewritten when the sandbox is ensured, so the runtime records every use
//! here, for every backend, in one place (its lazy sandbox). A record also
//! carries a "busy" heartbeat while a call runs in the sandbox, so another
//! process (`talon sandbox prune`) keeps a sandbox the gateway is working
//! in: a heartbeat younger than [`BUSY_FRESH`] counts as a call in flight.
//!
//! Every change is read-modify-write under an exclusive lock on
//! `usage.json.lock`, written to a temp file and renamed into place. A file
//! that cannot be parsed is an error (never silently replaced: pruning
//! without it would take every sandbox for unused since its creation).

use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::activity::SandboxKey;
use crate::error::SandboxError;

/// The directory under the state dir holding sandbox state.
pub const SANDBOX_STATE_DIR: &str = "sandbox";
/// The usage file's name in [`SANDBOX_STATE_DIR`].
pub const USAGE_FILE: &str = "usage.json";
/// Uses of one sandbox closer together than this are written once.
pub const USAGE_WRITE_INTERVAL: Duration = Duration::from_secs(60);
/// How often a running call refreshes its sandbox's busy heartbeat.
pub const BUSY_HEARTBEAT: Duration = Duration::from_secs(120);
/// A busy heartbeat younger than this means a call is in flight.
pub const BUSY_FRESH: Duration = Duration::from_secs(600);

/// What the store knows about one sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UsageRecord {
    /// Last use, ms since the epoch.
    pub last_used_at_ms: u64,
    /// The last busy heartbeat (a call was running), ms since the epoch.
    pub busy_at_ms: Option<u64>,
}

impl UsageRecord {
    /// Whether the busy heartbeat is fresh at `now_ms`.
    pub fn busy_at(&self, now_ms: u64) -> bool {
        self.busy_at_ms
            .is_some_and(|b| u128::from(now_ms.saturating_sub(b)) < BUSY_FRESH.as_millis())
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FileRecord {
    backend: String,
    name: String,
    last_used_at_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    busy_at_ms: Option<u64>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct UsageFile {
    version: u32,
    entries: Vec<FileRecord>,
}

/// The usage file of one state dir (see the module docs).
#[derive(Debug)]
pub struct UsageStore {
    path: PathBuf,
    /// Per sandbox: when this process last wrote it, and the busy flag it
    /// wrote.
    written: Mutex<HashMap<SandboxKey, (u64, bool)>>,
}

fn io(what: &str, path: &Path, e: std::io::Error) -> SandboxError {
    SandboxError::io(format!("cannot {what} {}: {e}", path.display())).with_source(e)
}

impl UsageStore {
    /// The store at `<state_dir>/sandbox/usage.json`.
    pub fn new(state_dir: &Path) -> Self {
        Self::at(state_dir.join(SANDBOX_STATE_DIR).join(USAGE_FILE))
    }

    /// The store at `path`.
    pub fn at(path: PathBuf) -> Self {
        UsageStore {
            path,
            written: Mutex::new(HashMap::new()),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> Result<File, SandboxError> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io("create", dir, e))?;
        }
        let lock_path = self.path.with_extension("json.lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| io("open", &lock_path, e))?;
        file.lock().map_err(|e| io("lock", &lock_path, e))?;
        Ok(file)
    }

    fn load(&self) -> Result<BTreeMap<SandboxKey, UsageRecord>, SandboxError> {
        let text = match std::fs::read(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(e) => return Err(io("read", &self.path, e)),
        };
        let file: UsageFile = serde_json::from_slice(&text).map_err(|e| {
            SandboxError::io(format!(
                "the sandbox usage file {} is not valid ({e}); move it away to start over \
                 (sandboxes then count as last used when they were created)",
                self.path.display()
            ))
            .with_source(e)
        })?;
        Ok(file
            .entries
            .into_iter()
            .map(|r| {
                (
                    SandboxKey::new(&r.backend, &r.name),
                    UsageRecord {
                        last_used_at_ms: r.last_used_at_ms,
                        busy_at_ms: r.busy_at_ms,
                    },
                )
            })
            .collect())
    }

    fn save(&self, map: &BTreeMap<SandboxKey, UsageRecord>) -> Result<(), SandboxError> {
        let file = UsageFile {
            version: 1,
            entries: map
                .iter()
                .map(|(k, r)| FileRecord {
                    backend: k.backend.clone(),
                    name: k.name.clone(),
                    last_used_at_ms: r.last_used_at_ms,
                    busy_at_ms: r.busy_at_ms,
                })
                .collect(),
        };
        let bytes = serde_json::to_vec_pretty(&file).map_err(|e| {
            SandboxError::io(format!("cannot encode the usage file: {e}")).with_source(e)
        })?;
        let tmp = self.path.with_extension("json.tmp");
        let mut out = File::create(&tmp).map_err(|e| io("create", &tmp, e))?;
        out.write_all(&bytes).map_err(|e| io("write", &tmp, e))?;
        out.sync_all().map_err(|e| io("sync", &tmp, e))?;
        std::fs::rename(&tmp, &self.path).map_err(|e| io("replace", &self.path, e))
    }

    fn update(
        &self,
        f: impl FnOnce(&mut BTreeMap<SandboxKey, UsageRecord>),
    ) -> Result<(), SandboxError> {
        let _lock = self.lock()?;
        let mut map = self.load()?;
        f(&mut map);
        self.save(&map)
    }

    /// Every record.
    pub fn read(&self) -> Result<BTreeMap<SandboxKey, UsageRecord>, SandboxError> {
        let _lock = self.lock()?;
        self.load()
    }

    /// Record a use of `key` at `now_ms`, with `busy` saying whether a
    /// call is still running in it. Skipped (returns `false`) when this
    /// process wrote the same busy state less than
    /// [`USAGE_WRITE_INTERVAL`] ago; a change of the busy state is always
    /// written. A busy write also refreshes the heartbeat.
    pub fn record_use(
        &self,
        key: &SandboxKey,
        now_ms: u64,
        busy: bool,
    ) -> Result<bool, SandboxError> {
        {
            let written = self.written.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some((at, was_busy)) = written.get(key)
                && *was_busy == busy
                && u128::from(now_ms.saturating_sub(*at)) < USAGE_WRITE_INTERVAL.as_millis()
            {
                return Ok(false);
            }
        }
        self.update(|map| {
            let record = map.entry(key.clone()).or_default();
            record.last_used_at_ms = record.last_used_at_ms.max(now_ms);
            record.busy_at_ms = busy.then_some(now_ms);
        })?;
        self.written
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.clone(), (now_ms, busy));
        Ok(true)
    }

    /// Set `key`'s record as given (tests inject old times with it).
    pub fn set(&self, key: &SandboxKey, record: UsageRecord) -> Result<(), SandboxError> {
        self.update(|map| {
            map.insert(key.clone(), record);
        })?;
        self.written
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(key);
        Ok(())
    }

    /// Drop `key`'s record (its sandbox was removed).
    pub fn forget(&self, key: &SandboxKey) -> Result<(), SandboxError> {
        self.update(|map| {
            map.remove(key);
        })?;
        self.written
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(key);
        Ok(())
    }
}

/// Milliseconds since the Unix epoch (0 before it).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
#[path = "usage_store_tests.rs"]
mod tests;
