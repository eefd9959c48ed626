//! [`SshBackend`]: sandboxes on a remote host, one remote directory and
//! one multiplexed connection per scope.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use talon_sandbox_core::{
    MountKind, OwnedSandbox, SandboxBackend, SandboxError, SandboxErrorKind, SandboxHandle,
    SandboxRequest, SecurityEnv, ensure_workspace_security, prepare_sandbox_workspace,
};

use crate::bridge::{RemoteBridge, RemoteMount};
use crate::connection::SshConnection;
use crate::exec::SshLauncher;
use crate::handle::{SshSandbox, SyncHooks, SyncedBridge};
use crate::marker::{MANIFEST_FILE, MARKER_FILE, Marker, is_sandbox_name, now_ms};
use crate::sync::{SyncRoot, WorkspaceSync, mkdir_p, write_remote_atomic};
use crate::target::SshTarget;

/// Lists `<root>/*/` directories holding a marker file (never following
/// symlinks): `NAME\tMARKER-JSON\0` records.
const LIST_OWNED_SCRIPT: &str = r#"root="$1"
[ -d "$root" ] || exit 0
for m in "$root"/*/.talon-sandbox.json; do
  [ -f "$m" ] && [ ! -L "$m" ] || continue
  d=${m%/.talon-sandbox.json}
  [ -L "$d" ] && continue
  printf '%s\t%s\0' "${d##*/}" "$(head -c 8192 -- "$m")"
done
exit 0"#;

/// Removes `<root>/<name>` only when it is a real directory holding
/// Talon's marker (exit 4: absent, 5: not Talon's).
const REMOVE_SCRIPT: &str = r#"d="$1/$2"
[ -d "$d" ] && [ ! -L "$d" ] || exit 4
m="$d/.talon-sandbox.json"
[ -f "$m" ] && [ ! -L "$m" ] || exit 5
grep -Eq '"talonSandbox": ?1[,}[:space:]]' "$m" || exit 5
rm -rf -- "$d""#;

/// The SSH sandbox backend (id `ssh`).
#[derive(Debug, Default)]
pub struct SshBackend {
    home: Option<PathBuf>,
    control_dir: Option<PathBuf>,
    targets: Mutex<Vec<SshTarget>>,
    sandboxes: tokio::sync::Mutex<HashMap<String, Arc<SshSandbox>>>,
    admin: Mutex<HashMap<String, Arc<SshConnection>>>,
    capabilities: Vec<String>,
}

fn target_key(t: &SshTarget) -> String {
    format!("{}|{}", t.display(), t.workspace_root)
}

impl SshBackend {
    /// A backend; `home` expands `~/` in configured key and known-hosts
    /// paths.
    pub fn new(home: Option<PathBuf>) -> Self {
        SshBackend {
            home,
            ..Default::default()
        }
    }

    /// Put control sockets in `dir` (default: the temp dir; keep it short).
    pub fn with_control_dir(mut self, dir: PathBuf) -> Self {
        self.control_dir = Some(dir);
        self
    }

    /// Also list and remove sandboxes on these targets (`talon sandbox
    /// ls|rm` pass every configured one).
    pub fn with_targets(self, targets: Vec<SshTarget>) -> Self {
        for t in targets {
            self.remember(t);
        }
        self
    }

    fn remember(&self, target: SshTarget) {
        let mut targets = self.targets.lock().unwrap_or_else(PoisonError::into_inner);
        if !targets.iter().any(|t| target_key(t) == target_key(&target)) {
            targets.push(target);
        }
    }

    /// The target a request's settings name.
    pub fn target_for(&self, request: &SandboxRequest) -> Result<SshTarget, SandboxError> {
        let mut target = SshTarget::from_settings(&request.config.ssh, self.home.as_deref())?;
        if let Some(dir) = &self.control_dir {
            target.control_dir = dir.clone();
        }
        Ok(target)
    }

    fn admin_conn(&self, target: &SshTarget) -> Arc<SshConnection> {
        let mut map = self.admin.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(
            map.entry(target_key(target))
                .or_insert_with(|| Arc::new(SshConnection::new(target.clone()))),
        )
    }

    /// Ensure the sandbox for `request`, typed.
    pub async fn ensure_sandbox(
        &self,
        request: &SandboxRequest,
    ) -> Result<Arc<SshSandbox>, SandboxError> {
        let target = self.target_for(request)?;
        let name = request.sandbox_name.clone();
        if !is_sandbox_name(&name) {
            return Err(SandboxError::config(format!(
                "sandbox name `{name}` cannot be a remote directory name"
            )));
        }
        let key = format!("{}|{name}", target_key(&target));
        let mut cache = self.sandboxes.lock().await;
        if let Some(hit) = cache.get(&key)
            && hit.config_hash == request.config_hash
        {
            return Ok(Arc::clone(hit));
        }
        // The workspaces it would copy to the remote host are judged like
        // any bind (no home, no credentials, no Talon state or config).
        let homes: Vec<PathBuf> = self.home.iter().cloned().collect();
        ensure_workspace_security(request, &SecurityEnv::for_request(request, &homes))?;
        // The scope's scratch workspace (`none` / `ro`) is seeded locally
        // before anything remote happens, so the sync uploads the same
        // files the Docker and local backends show.
        prepare_sandbox_workspace(request)?;
        self.remember(target.clone());
        let conn = Arc::new(SshConnection::new(target.clone()));
        let remote_dir = target.sandbox_dir(&name);
        // The path the runtime was told before ensuring (one rule).
        let workdir = SandboxBackend::workdir(self, request);
        let sftp = conn.sftp().await?;

        // Ownership: an existing directory must carry our marker.
        let marker_path = format!("{remote_dir}/{MARKER_FILE}");
        let existing = match sftp.fs().symlink_metadata(&remote_dir).await {
            Ok(meta) => {
                if !meta.file_type().is_some_and(|t| t.is_dir()) {
                    return Err(SandboxError::config(format!(
                        "{remote_dir} on {} exists but is not a directory; Talon will not touch \
                         it — remove it or change sandbox.ssh.workspaceRoot",
                        target.display()
                    )));
                }
                let marker = sftp.fs().read(&marker_path).await.ok().and_then(|bytes| {
                    serde_json::from_slice::<Marker>(&bytes)
                        .ok()
                        .filter(|m| m.talon_sandbox == 1)
                });
                match marker {
                    Some(m) => Some(m),
                    None => {
                        return Err(SandboxError::config(format!(
                            "{remote_dir} on {} exists but Talon did not create it (no {MARKER_FILE}); \
                             remove or rename it, or change sandbox.ssh.workspaceRoot",
                            target.display()
                        )));
                    }
                }
            }
            Err(_) => None,
        };
        if existing.is_none() {
            mkdir_p(&sftp, &remote_dir).await?;
        }
        let marker = Marker {
            talon_sandbox: 1,
            name: name.clone(),
            scope_key: request.scope_key.clone(),
            config_hash: request.config_hash.clone(),
            created_at_ms: existing.as_ref().map_or_else(now_ms, |m| m.created_at_ms),
            last_used_at_ms: now_ms(),
        };
        let text = serde_json::to_vec(&marker)
            .map_err(|e| SandboxError::io(format!("marker: {e}")).with_source(e))?;
        write_remote_atomic(&sftp, &marker_path, &text, 0o644).await?;

        let (roots, mounts) = plan_roots(request, &remote_dir, &workdir)?;
        let sync = Arc::new(WorkspaceSync::new(
            Arc::clone(&conn),
            roots,
            format!("{remote_dir}/{MANIFEST_FILE}"),
        ));
        let report = sync.sync().await?;
        tracing::info!(
            sandbox = %name,
            target = %target.display(),
            uploaded = report.uploaded,
            "ssh sandbox workspace synced"
        );
        let inner = RemoteBridge::new(Arc::clone(&conn), mounts, &workdir)
            .await
            .map_err(|e| SandboxError::io(format!("remote file bridge: {e}")).with_source(e))?;
        let launcher =
            SshLauncher::new(Arc::clone(&conn), workdir.clone()).with_hooks(Arc::new(SyncHooks {
                sync: Arc::clone(&sync),
            }));
        let sandbox = Arc::new(SshSandbox {
            name,
            remote_dir,
            workdir,
            config_hash: request.config_hash.clone(),
            conn,
            launcher: Arc::new(launcher),
            bridge: Arc::new(SyncedBridge {
                inner,
                sync: Arc::clone(&sync),
            }),
            sync,
            capabilities: self.capabilities.clone(),
        });
        cache.insert(key, Arc::clone(&sandbox));
        Ok(sandbox)
    }

    /// Owned sandboxes on one target.
    pub async fn list_on(&self, target: &SshTarget) -> Result<Vec<OwnedSandbox>, SandboxError> {
        let conn = self.admin_conn(target);
        let out = conn
            .run(
                LIST_OWNED_SCRIPT,
                std::slice::from_ref(&target.workspace_root),
                None,
                target.command_timeout,
            )
            .await?;
        if !out.status.success() {
            return Err(SandboxError::exec(format!(
                "listing sandboxes on {} failed ({:?}): {}",
                target.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let mut list = Vec::new();
        for record in out.stdout.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            let text = String::from_utf8_lossy(record);
            let Some((dir, json)) = text.split_once('\t') else {
                continue;
            };
            let Ok(marker) = serde_json::from_str::<Marker>(json) else {
                continue;
            };
            if marker.talon_sandbox != 1 || !is_sandbox_name(dir) {
                continue;
            }
            let mut owned = OwnedSandbox::new("ssh", dir);
            owned.scope_key = Some(marker.scope_key);
            owned.config_hash = Some(marker.config_hash);
            owned.created_at_ms = Some(marker.created_at_ms);
            owned.last_used_at_ms = Some(marker.last_used_at_ms);
            owned.image = Some(format!("{}:{}", target.display(), target.sandbox_dir(dir)));
            list.push(owned);
        }
        list.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(list)
    }

    /// Remove one owned sandbox on `target`: `Ok(true)` removed,
    /// `Ok(false)` absent; a directory without the marker is refused.
    pub async fn remove_on(&self, target: &SshTarget, name: &str) -> Result<bool, SandboxError> {
        if !is_sandbox_name(name) {
            return Err(SandboxError::config(format!(
                "`{}` is not a sandbox name (letters, digits, `.`, `_`, `-`)",
                name.escape_default()
            )));
        }
        self.sandboxes.lock().await.retain(|k, _| {
            !k.starts_with(&format!("{}|", target_key(target))) || !k.ends_with(&format!("|{name}"))
        });
        let conn = self.admin_conn(target);
        let out = conn
            .run(
                REMOVE_SCRIPT,
                &[target.workspace_root.clone(), name.to_owned()],
                None,
                target.command_timeout,
            )
            .await?;
        match out.status {
            talon_sandbox_core::ExitStatus::Code(0) => Ok(true),
            talon_sandbox_core::ExitStatus::Code(4) => Ok(false),
            talon_sandbox_core::ExitStatus::Code(5) => Err(SandboxError::config(format!(
                "{} on {} has no Talon marker; it was left alone",
                target.sandbox_dir(name),
                target.display()
            ))),
            other => Err(SandboxError::exec(format!(
                "removing {} on {} failed ({other:?}): {}",
                target.sandbox_dir(name),
                target.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ))),
        }
    }

    fn known_targets(&self) -> Vec<SshTarget> {
        self.targets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// The sync roots and bridge mounts of a request's mount plan: the
/// workspace at `<dir>/workspace` (writable and synced back: the agent's
/// for `rw`, the scope's scratch copy for `none` / `ro`), `/agent` at
/// `<dir>/agent` and the skill overlays inside the workspace copy
/// (read-only, never synced back). Custom Docker binds do not apply to a
/// remote host and are skipped.
fn plan_roots(
    request: &SandboxRequest,
    remote_dir: &str,
    workdir: &str,
) -> Result<(Vec<SyncRoot>, Vec<RemoteMount>), SandboxError> {
    let container_workdir = request.config.docker.workdir.trim_end_matches('/');
    let mut roots: Vec<SyncRoot> = Vec::new();
    let mut overlays: Vec<String> = Vec::new();
    for entry in &request.mount_plan.entries {
        let remote = match entry.kind {
            MountKind::Workspace => workdir.to_owned(),
            MountKind::Agent => format!("{remote_dir}/agent"),
            MountKind::Skills => {
                let Some(rel) = entry
                    .container_path
                    .strip_prefix(container_workdir)
                    .map(|r| r.trim_start_matches('/'))
                    .filter(|r| !r.is_empty() && !r.split('/').any(|s| s == ".." || s == "."))
                else {
                    continue;
                };
                overlays.push(rel.to_owned());
                format!("{workdir}/{rel}")
            }
            MountKind::Bind => {
                tracing::warn!(
                    target = %entry.container_path,
                    "sandbox.docker.binds do not apply to the ssh backend; skipped"
                );
                continue;
            }
        };
        if entry.kind == MountKind::Workspace && !entry.host_path.exists() {
            std::fs::create_dir_all(&entry.host_path).map_err(|e| {
                SandboxError::io(format!(
                    "cannot create the sandbox workspace {}: {e}",
                    entry.host_path.display()
                ))
                .with_source(e)
            })?;
        }
        roots.push(SyncRoot {
            host: entry.host_path.clone(),
            remote,
            sync_back: !entry.read_only && entry.kind == MountKind::Workspace,
            excludes: Vec::new(),
        });
    }
    for root in &mut roots {
        if root.remote == workdir {
            root.excludes = overlays.clone();
        }
    }
    let mounts = roots
        .iter()
        .map(|r| RemoteMount {
            path: r.remote.clone(),
            read_only: !r.sync_back,
        })
        .collect();
    Ok((roots, mounts))
}

#[async_trait::async_trait]
impl SandboxBackend for SshBackend {
    fn id(&self) -> &str {
        "ssh"
    }

    fn capabilities(&self) -> &[String] {
        &self.capabilities
    }

    /// The scope's remote workspace copy,
    /// `<ssh.workspaceRoot>/<name>/workspace`: commands run there and
    /// relative paths resolve there, not at the container workdir.
    fn workdir(&self, request: &SandboxRequest) -> String {
        request.config.ssh.remote_workdir(&request.sandbox_name)
    }

    async fn ensure(
        &self,
        request: &SandboxRequest,
    ) -> Result<Arc<dyn SandboxHandle>, SandboxError> {
        Ok(self.ensure_sandbox(request).await? as Arc<dyn SandboxHandle>)
    }

    async fn list_owned(&self) -> Result<Vec<OwnedSandbox>, SandboxError> {
        let mut all = Vec::new();
        for target in self.known_targets() {
            all.extend(self.list_on(&target).await?);
        }
        Ok(all)
    }

    async fn remove(&self, name: &str) -> Result<(), SandboxError> {
        let mut refused = None;
        for target in self.known_targets() {
            match self.remove_on(&target, name).await {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(e) if e.kind() == SandboxErrorKind::Config => refused = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(refused.unwrap_or_else(|| {
            SandboxError::config(format!(
                "no remote sandbox Talon owns is named `{name}` on the configured ssh hosts"
            ))
        }))
    }
}

#[cfg(test)]
#[path = "backend_tests.rs"]
mod tests;
