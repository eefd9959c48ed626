//! Workspace sync between the host and the remote copy.
//!
//! A sandbox's remote directory holds one copy per synced root (the
//! workspace, `/agent` for `ro`, skill overlays). Each sync compares three
//! states per file: the host (size + mtime), the remote (size + mtime, one
//! `find` listing) and the manifest (both sides as of the last sync,
//! stored next to the copies so a restarted Talon resumes):
//!
//! | host | remote | workspace root (`rw`: the agent's; `none` / `ro`: the scope's scratch copy) | read-only root (skills, `ro`'s `/agent`) |
//! |---|---|---|---|
//! | changed | unchanged | upload | upload |
//! | unchanged | changed | download (sync back) | re-upload the host version |
//! | changed | changed | **conflict**: the host file is kept, the remote version is saved beside it as `<file>.talon-remote`, then uploaded over | re-upload the host version |
//!
//! Files only on the remote that Talon never uploaded are synced back for
//! a workspace root and left alone otherwise.
//! Symlinks are never followed or copied, on either side, and every host
//! write goes through a [`MountBridge`] confined to the host root (a
//! remote path can never make Talon write outside it). Each uploaded file
//! is written to a temp file in its directory and renamed into place.
//!
//! Known limits: empty remote directories are not synced back; a file
//! changed remotely between the listing and the download is picked up by
//! the next sync; a sync is per file atomic, not all-or-nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use openssh_sftp_client::Sftp;
use openssh_sftp_client::metadata::Permissions;
use serde::{Deserialize, Serialize};
use talon_fs_bridge::{FsBridge, Mount, MountBridge, WriteOptions};
use talon_sandbox_core::SandboxError;

use crate::connection::SshConnection;

/// The suffix of a conflicting remote version saved on the host.
pub const CONFLICT_SUFFIX: &str = ".talon-remote";
const UPLOAD_CONCURRENCY: usize = 16;

/// Lists a remote tree as `TYPE\tSIZE\tMTIME\tPATH\0` records (exit 3:
/// the root does not exist yet).
const LIST_SCRIPT: &str = r#"cd -- "$1" 2>/dev/null || exit 3
find . -mindepth 1 \( -type f -printf 'f\t%s\t%T@\t%P\0' \) -o \( -type d -printf 'd\t0\t0\t%P\0' \) -o \( -type l -printf 'l\t0\t0\t%P\0' \)"#;

/// One host directory and its remote copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncRoot {
    /// The host directory.
    pub host: PathBuf,
    /// The remote directory (absolute).
    pub remote: String,
    /// Whether remote changes are synced back (the workspace root only:
    /// the agent workspace for `rw`, the scope's scratch copy for `none` /
    /// `ro`).
    pub sync_back: bool,
    /// Paths (relative, `/`-separated) owned by another root and skipped
    /// here (skill overlays inside the workspace).
    pub excludes: Vec<String>,
}

/// A file changed on both sides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncConflict {
    /// The host file (kept as it was).
    pub host_path: PathBuf,
    /// Where the remote version was saved on the host.
    pub remote_copy: PathBuf,
}

/// What one sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncReport {
    /// Files uploaded.
    pub uploaded: usize,
    /// Files synced back to the host.
    pub downloaded: usize,
    /// Remote files removed because the host removed them.
    pub removed_remote: usize,
    /// Host files removed because the remote removed them (`rw`).
    pub removed_host: usize,
    /// Files changed on both sides.
    pub conflicts: Vec<SyncConflict>,
}

impl SyncReport {
    fn add(&mut self, other: SyncReport) {
        self.uploaded += other.uploaded;
        self.downloaded += other.downloaded;
        self.removed_remote += other.removed_remote;
        self.removed_host += other.removed_host;
        self.conflicts.extend(other.conflicts);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct HostStat {
    size: u64,
    mtime_ns: i128,
    mode: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct RemoteStat {
    size: u64,
    mtime: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    host: (u64, i128),
    remote: RemoteStat,
}

/// Per-root manifests, keyed by remote root.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Manifest {
    roots: BTreeMap<String, BTreeMap<String, Entry>>,
}

#[derive(Debug, Default)]
struct HostTree {
    files: BTreeMap<String, HostStat>,
    dirs: BTreeSet<String>,
}

#[derive(Debug, Default)]
struct RemoteTree {
    files: BTreeMap<String, RemoteStat>,
    dirs: BTreeSet<String>,
    links: BTreeSet<String>,
}

/// `what` failed with `e` (kept as the source).
fn io_err(what: &str, e: impl std::error::Error + Send + Sync + 'static) -> SandboxError {
    SandboxError::io(format!("workspace sync: {what}: {e}")).with_source(e)
}

fn excluded(rel: &str, excludes: &[String]) -> bool {
    excludes.iter().any(|x| {
        rel == x
            || rel
                .strip_prefix(x.as_str())
                .is_some_and(|r| r.starts_with('/'))
    })
}

/// Walk a host tree without following symlinks.
fn walk_host(root: &Path, excludes: &[String]) -> Result<HostTree, SandboxError> {
    let mut tree = HostTree::default();
    if !root.is_dir() {
        return Ok(tree);
    }
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        let entries =
            std::fs::read_dir(&dir).map_err(|e| io_err(&format!("list {}", dir.display()), e))?;
        for entry in entries {
            let entry = entry.map_err(|e| io_err(&format!("list {}", dir.display()), e))?;
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                tracing::warn!(dir = %dir.display(), "skipping a file name that is not UTF-8");
                continue;
            };
            let child_rel = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            if excluded(&child_rel, excludes) {
                continue;
            }
            let meta = entry
                .metadata()
                .map_err(|e| io_err(&format!("stat {}", entry.path().display()), e))?;
            let ft = meta.file_type();
            if ft.is_dir() {
                tree.dirs.insert(child_rel.clone());
                stack.push((entry.path(), child_rel));
            } else if ft.is_file() {
                tree.files.insert(
                    child_rel,
                    HostStat {
                        size: meta.len(),
                        mtime_ns: i128::from(meta.mtime()) * 1_000_000_000
                            + i128::from(meta.mtime_nsec()),
                        mode: meta.mode() & 0o777,
                    },
                );
            }
        }
    }
    Ok(tree)
}

fn parse_listing(bytes: &[u8]) -> RemoteTree {
    let mut tree = RemoteTree::default();
    for record in bytes.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let Ok(text) = std::str::from_utf8(record) else {
            continue;
        };
        let mut parts = text.splitn(4, '\t');
        let (Some(kind), Some(size), Some(mtime), Some(path)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if path.is_empty()
            || path
                .split('/')
                .any(|s| s.is_empty() || s == "." || s == "..")
        {
            continue;
        }
        match kind {
            "f" => {
                tree.files.insert(
                    path.to_owned(),
                    RemoteStat {
                        size: size.parse().unwrap_or(u64::MAX),
                        mtime: mtime.to_owned(),
                    },
                );
            }
            "d" => {
                tree.dirs.insert(path.to_owned());
            }
            _ => {
                tree.links.insert(path.to_owned());
            }
        }
    }
    tree
}

/// Syncs a sandbox's roots; one sync at a time.
#[derive(Debug)]
pub struct WorkspaceSync {
    conn: Arc<SshConnection>,
    roots: Vec<SyncRoot>,
    manifest_path: String,
    state: tokio::sync::Mutex<Option<Manifest>>,
    timeout: Duration,
}

impl WorkspaceSync {
    /// A sync of `roots`, its manifest at `manifest_path` on the remote.
    pub fn new(conn: Arc<SshConnection>, roots: Vec<SyncRoot>, manifest_path: String) -> Self {
        let timeout = conn.target().command_timeout;
        WorkspaceSync {
            conn,
            roots,
            manifest_path,
            state: tokio::sync::Mutex::new(None),
            timeout,
        }
    }

    /// The roots.
    pub fn roots(&self) -> &[SyncRoot] {
        &self.roots
    }

    /// Sync every root both ways (see the module docs).
    pub async fn sync(&self) -> Result<SyncReport, SandboxError> {
        let mut guard = self.state.lock().await;
        let sftp = self.conn.sftp().await?;
        if guard.is_none() {
            *guard = Some(self.load_manifest(&sftp).await);
        }
        let Some(manifest) = guard.as_mut() else {
            return Err(SandboxError::io("workspace sync: manifest: not loaded"));
        };
        let mut report = SyncReport::default();
        for root in &self.roots {
            let entries = manifest.roots.entry(root.remote.clone()).or_default();
            let result = self.sync_root(&sftp, root, entries).await;
            match result {
                Ok(r) => report.add(r),
                Err(e) => {
                    self.conn.drop_sftp().await;
                    return Err(e);
                }
            }
        }
        let text = serde_json::to_vec(&*manifest).map_err(|e| io_err("manifest", e))?;
        write_remote_atomic(&sftp, &self.manifest_path, &text, 0o600).await?;
        for conflict in &report.conflicts {
            tracing::warn!(
                host = %conflict.host_path.display(),
                copy = %conflict.remote_copy.display(),
                "sandbox sync conflict: the host file changed while the sandbox changed it too; \
                 the host file was kept and the remote version saved beside it"
            );
        }
        Ok(report)
    }

    async fn load_manifest(&self, sftp: &Sftp) -> Manifest {
        match sftp.fs().read(&self.manifest_path).await {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                tracing::warn!("the remote sync manifest is unreadable ({e}); starting afresh");
                Manifest::default()
            }),
            Err(_) => Manifest::default(),
        }
    }

    async fn list_remote(&self, root: &SyncRoot) -> Result<RemoteTree, SandboxError> {
        let out = self
            .conn
            .run(
                LIST_SCRIPT,
                std::slice::from_ref(&root.remote),
                None,
                self.timeout,
            )
            .await?;
        match out.status {
            talon_sandbox_core::ExitStatus::Code(0) => {
                let mut tree = parse_listing(&out.stdout);
                tree.files.retain(|p, _| !excluded(p, &root.excludes));
                tree.dirs.retain(|p| !excluded(p, &root.excludes));
                tree.links.retain(|p| !excluded(p, &root.excludes));
                Ok(tree)
            }
            talon_sandbox_core::ExitStatus::Code(3) => Ok(RemoteTree::default()),
            other => Err(SandboxError::io(format!(
                "workspace sync: list {}: {other:?}: {} (the remote host needs GNU find)",
                root.remote,
                String::from_utf8_lossy(&out.stderr).trim()
            ))),
        }
    }

    async fn sync_root(
        &self,
        sftp: &Sftp,
        root: &SyncRoot,
        entries: &mut BTreeMap<String, Entry>,
    ) -> Result<SyncReport, SandboxError> {
        let host_root = root.host.clone();
        let excludes = root.excludes.clone();
        let host = tokio::task::spawn_blocking(move || walk_host(&host_root, &excludes))
            .await
            .map_err(|e| io_err("host walk", e))??;
        let remote = self.list_remote(root).await?;
        let mut report = SyncReport::default();
        let mut uploads: Vec<String> = Vec::new();
        let mut downloads: Vec<String> = Vec::new();
        let mut remove_remote: Vec<String> = Vec::new();
        let mut remove_host: Vec<String> = Vec::new();
        let mut conflicts: Vec<String> = Vec::new();

        let mut paths: BTreeSet<String> = host.files.keys().cloned().collect();
        paths.extend(remote.files.keys().cloned());
        paths.extend(entries.keys().cloned());
        for path in &paths {
            let h = host.files.get(path);
            let r = remote.files.get(path);
            let m = entries.get(path).cloned();
            let m = m.as_ref();
            let host_changed = match (h, m) {
                (Some(h), Some(m)) => (h.size, h.mtime_ns) != m.host,
                (None, None) => false,
                _ => true,
            };
            let remote_changed = match (r, m) {
                (Some(r), Some(m)) => *r != m.remote,
                (None, None) => false,
                _ => true,
            };
            if remote.links.contains(path) || remote.dirs.contains(path) {
                // The sandbox replaced a file with a link or directory:
                // never follow or overwrite it from here.
                continue;
            }
            match (host_changed, remote_changed) {
                (false, false) => {}
                (true, false) => match h {
                    Some(_) => uploads.push(path.clone()),
                    None => {
                        if r.is_some() {
                            remove_remote.push(path.clone());
                        }
                        entries.remove(path);
                    }
                },
                (false, true) | (true, true) if !root.sync_back => match h {
                    Some(_) => uploads.push(path.clone()),
                    // Untracked remote-only file of a read-only root:
                    // leave it; a tracked one the host deleted: remove.
                    None if m.is_some() => {
                        if r.is_some() {
                            remove_remote.push(path.clone());
                        }
                        entries.remove(path);
                    }
                    None => {}
                },
                (false, true) => match r {
                    Some(_) => downloads.push(path.clone()),
                    None => {
                        if h.is_some() {
                            remove_host.push(path.clone());
                        }
                        entries.remove(path);
                    }
                },
                (true, true) => match (h, r) {
                    (Some(_), Some(_)) => conflicts.push(path.clone()),
                    (Some(_), None) => uploads.push(path.clone()),
                    (None, Some(_)) => downloads.push(path.clone()),
                    (None, None) => {
                        entries.remove(path);
                    }
                },
            }
        }

        let bridge = if root.sync_back
            && !(downloads.is_empty() && conflicts.is_empty() && remove_host.is_empty())
        {
            std::fs::create_dir_all(&root.host).map_err(|e| io_err("create host root", e))?;
            Some(
                MountBridge::new(vec![Mount::writable("/", root.host.clone())], "/")
                    .map_err(|e| io_err("host bridge", e))?,
            )
        } else {
            None
        };

        // Conflicts: keep host, save remote beside it; an identical
        // remote version is no conflict.
        for path in conflicts {
            let remote_bytes = sftp
                .fs()
                .read(format!("{}/{path}", root.remote))
                .await
                .map_err(|e| io_err(&format!("download {path}"), e))?;
            let host_bytes = std::fs::read(root.host.join(&path)).unwrap_or_default();
            if host_bytes == remote_bytes.as_ref() {
                if let (Some(h), Some(r)) = (host.files.get(&path), remote.files.get(&path)) {
                    entries.insert(
                        path.clone(),
                        Entry {
                            host: (h.size, h.mtime_ns),
                            remote: r.clone(),
                        },
                    );
                }
                continue;
            }
            if let Some(bridge) = &bridge {
                let copy = format!("/{path}{CONFLICT_SUFFIX}");
                bridge
                    .write(&copy, &remote_bytes, WriteOptions::default())
                    .await
                    .map_err(|e| io_err(&format!("save the remote version of {path}"), e))?;
                report.conflicts.push(SyncConflict {
                    host_path: root.host.join(&path),
                    remote_copy: root.host.join(format!("{path}{CONFLICT_SUFFIX}")),
                });
            }
            uploads.push(path);
        }

        // Sync back.
        if let Some(bridge) = &bridge {
            for path in &downloads {
                let bytes = sftp
                    .fs()
                    .read(format!("{}/{path}", root.remote))
                    .await
                    .map_err(|e| io_err(&format!("download {path}"), e))?;
                bridge
                    .write(&format!("/{path}"), &bytes, WriteOptions::default())
                    .await
                    .map_err(|e| io_err(&format!("write back {path}"), e))?;
                let meta = std::fs::symlink_metadata(root.host.join(path))
                    .map_err(|e| io_err(&format!("stat {path}"), e))?;
                if let Some(r) = remote.files.get(path) {
                    entries.insert(
                        path.clone(),
                        Entry {
                            host: (
                                meta.len(),
                                i128::from(meta.mtime()) * 1_000_000_000
                                    + i128::from(meta.mtime_nsec()),
                            ),
                            remote: r.clone(),
                        },
                    );
                }
                report.downloaded += 1;
            }
            for path in &remove_host {
                match bridge.remove(&format!("/{path}"), false).await {
                    Ok(()) => report.removed_host += 1,
                    Err(e) => tracing::warn!(
                        path,
                        "could not remove a host file the sandbox removed: {e}"
                    ),
                }
            }
        }

        for path in &remove_remote {
            match sftp
                .fs()
                .remove_file(format!("{}/{path}", root.remote))
                .await
            {
                Ok(()) => report.removed_remote += 1,
                Err(e) => tracing::debug!(path, "remote file already gone: {e}"),
            }
        }

        // Uploads: directories first, then files in parallel.
        let mut dirs: BTreeSet<String> = host
            .dirs
            .iter()
            .filter(|d| !remote.dirs.contains(*d))
            .cloned()
            .collect();
        if !remote_exists(&remote, entries) {
            mkdir_p(sftp, &root.remote).await?;
        }
        for path in &uploads {
            let mut parent = path.as_str();
            while let Some((p, _)) = parent.rsplit_once('/') {
                if !remote.dirs.contains(p) {
                    dirs.insert(p.to_owned());
                }
                parent = p;
            }
        }
        for dir in &dirs {
            let full = format!("{}/{dir}", root.remote);
            if let Err(e) = sftp.fs().create_dir(&full).await
                && sftp.fs().metadata(&full).await.is_err()
            {
                return Err(io_err(&format!("create remote directory {full}"), e));
            }
        }
        let read_only = !root.sync_back;
        let results: Vec<Result<String, SandboxError>> =
            futures::stream::iter(uploads.iter().cloned())
                .map(|path| {
                    let host_file = root.host.join(&path);
                    let remote_file = format!("{}/{path}", root.remote);
                    async move {
                        let bytes = tokio::task::spawn_blocking({
                            let host_file = host_file.clone();
                            move || read_no_follow(&host_file)
                        })
                        .await
                        .map_err(|e| io_err("read", e))??;
                        let mode = if read_only { 0o444 } else { bytes.1 };
                        write_remote_atomic(sftp, &remote_file, &bytes.0, mode).await?;
                        Ok(path)
                    }
                })
                .buffer_unordered(UPLOAD_CONCURRENCY)
                .collect()
                .await;
        let mut uploaded = Vec::new();
        for r in results {
            uploaded.push(r?);
        }
        report.uploaded += uploaded.len();
        if !uploaded.is_empty() {
            let after = self.list_remote(root).await?;
            for path in uploaded {
                if let (Some(h), Some(r)) = (host.files.get(&path), after.files.get(&path)) {
                    entries.insert(
                        path,
                        Entry {
                            host: (h.size, h.mtime_ns),
                            remote: r.clone(),
                        },
                    );
                }
            }
        }
        Ok(report)
    }
}

fn remote_exists(remote: &RemoteTree, entries: &BTreeMap<String, Entry>) -> bool {
    !(remote.files.is_empty()
        && remote.dirs.is_empty()
        && remote.links.is_empty()
        && entries.is_empty())
}

/// Read a host file without following a symlink in its last component;
/// returns its bytes and permission bits.
fn read_no_follow(path: &Path) -> Result<(Vec<u8>, u32), SandboxError> {
    use std::io::Read;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| io_err(&format!("read {}", path.display()), e))?;
    let mode = file
        .metadata()
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or(0o644);
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| io_err(&format!("read {}", path.display()), e))?;
    Ok((bytes, mode))
}

/// `mkdir -p` over SFTP.
pub(crate) async fn mkdir_p(sftp: &Sftp, path: &str) -> Result<(), SandboxError> {
    let mut current = String::new();
    for seg in path.split('/').filter(|s| !s.is_empty()) {
        current.push('/');
        current.push_str(seg);
        if sftp.fs().metadata(&current).await.is_ok() {
            continue;
        }
        if let Err(e) = sftp.fs().create_dir(&current).await
            && sftp.fs().metadata(&current).await.is_err()
        {
            return Err(io_err(&format!("create remote directory {current}"), e));
        }
    }
    Ok(())
}

/// A random temp name in `path`'s directory.
pub(crate) fn temp_sibling(path: &str) -> String {
    let (dir, _) = path.rsplit_once('/').unwrap_or(("", path));
    let mut bytes = [0u8; 8];
    let _ = getrandom::fill(&mut bytes);
    let suffix: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{dir}/.talon-tmp-{suffix}")
}

/// Write `bytes` to a temp file next to `path`, set its mode, rename it
/// into place (atomic with the server's posix-rename).
pub(crate) async fn write_remote_atomic(
    sftp: &Sftp,
    path: &str,
    bytes: &[u8],
    mode: u32,
) -> Result<(), SandboxError> {
    let temp = temp_sibling(path);
    let result = async {
        let mut file = sftp
            .options()
            .write(true)
            .create_new(true)
            .open(&temp)
            .await
            .map_err(|e| io_err(&format!("create {temp}"), e))?;
        file.write_all(bytes)
            .await
            .map_err(|e| io_err(&format!("write {temp}"), e))?;
        file.set_permissions(permissions(mode))
            .await
            .map_err(|e| io_err(&format!("chmod {temp}"), e))?;
        file.close()
            .await
            .map_err(|e| io_err(&format!("close {temp}"), e))?;
        sftp.fs()
            .rename(&temp, path)
            .await
            .map_err(|e| io_err(&format!("rename {temp} to {path}"), e))
    }
    .await;
    if result.is_err() {
        let _ = sftp.fs().remove_file(&temp).await;
    }
    result
}

/// SFTP permissions from `rwx` bits (special bits dropped).
pub(crate) fn permissions(mode: u32) -> Permissions {
    // Masked to 0o777, so the value fits.
    Permissions::from((mode & 0o777) as u16)
}

#[cfg(test)]
#[path = "sync_tests.rs"]
mod tests;
