//! [`DockerBackend`]: connecting to the engine and ensuring one container
//! per sandbox scope (reuse by config hash, recreate when stale, keep a
//! hot one with a warning).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bollard::models::MountPoint;
use bollard::query_parameters::{CreateContainerOptionsBuilder, RemoveContainerOptionsBuilder};
use bollard::{API_DEFAULT_VERSION, Docker};
use talon_sandbox_core::{
    PinnedSource, SandboxError, SandboxErrorKind, SandboxHandle, SharedEventSink,
};

use crate::create::{create_body, read_only_depth, resolve_user};
use crate::engine_error::{engine_error, image_missing, is_not_found, status_of, unavailable};
use crate::exec::ExecTarget;
use crate::handle::DockerSandbox;
use crate::labels;
use crate::spec::{BindMount, ContainerSpec, check_container_name, check_image_ref};
use crate::usage::UsageClock;

/// OpenClaw's `HOT_CONTAINER_WINDOW_MS`: a running container used this
/// recently is not recreated on a config change.
pub const HOT_WINDOW: Duration = Duration::from_secs(5 * 60);
/// Request timeout towards the engine (response headers; attached exec
/// streams are not limited by it).
const REQUEST_TIMEOUT_SECS: u64 = 60;
/// How long a fresh container may take to run its first exec.
const READY_TIMEOUT: Duration = Duration::from_secs(15);
/// How long `setupCommand` may run.
const SETUP_TIMEOUT: Duration = Duration::from_secs(600);
const DEFAULT_SOCKET: &str = "/var/run/docker.sock";

/// The Docker sandbox backend: one engine connection, containers per scope.
///
/// Cheap to clone; clones share the connection, the per-name locks and the
/// last-used clock.
#[derive(Debug, Clone)]
pub struct DockerBackend {
    pub(crate) docker: Docker,
    pub(crate) addr: Arc<str>,
    hot_window: Duration,
    pub(crate) usage: UsageClock,
    locks: Arc<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>>,
    home_dirs: Arc<[PathBuf]>,
    events: Option<SharedEventSink>,
}

impl DockerBackend {
    /// Connect to the local engine (`DOCKER_HOST`, else
    /// `/var/run/docker.sock`), negotiate the API version and ping it.
    pub async fn connect() -> Result<Self, SandboxError> {
        let addr = std::env::var("DOCKER_HOST")
            .ok()
            .filter(|h| !h.trim().is_empty())
            .unwrap_or_else(|| format!("unix://{DEFAULT_SOCKET}"));
        let docker = Docker::connect_with_local_defaults()
            .map_err(|e| unavailable(&addr, "connect", &e))?
            .with_timeout(Duration::from_secs(REQUEST_TIMEOUT_SECS));
        Self::finish_connect(docker, addr).await
    }

    /// Connect to the engine listening on the unix socket at `path`.
    pub async fn connect_unix(path: impl AsRef<Path>) -> Result<Self, SandboxError> {
        let path = path.as_ref();
        let addr = format!("unix://{}", path.display());
        let text = path.to_str().ok_or_else(|| {
            SandboxError::config(format!(
                "Docker socket path {} is not UTF-8",
                path.display()
            ))
        })?;
        let docker = Docker::connect_with_unix(text, REQUEST_TIMEOUT_SECS, API_DEFAULT_VERSION)
            .map_err(|e| unavailable(&addr, "connect", &e))?;
        Self::finish_connect(docker, addr).await
    }

    async fn finish_connect(docker: Docker, addr: String) -> Result<Self, SandboxError> {
        let docker = docker
            .negotiate_version()
            .await
            .map_err(|e| engine_error(&addr, "negotiate the API version", e))?;
        docker
            .ping()
            .await
            .map_err(|e| engine_error(&addr, "ping it", e))?;
        tracing::debug!(engine = %addr, "connected to the Docker engine");
        Ok(DockerBackend {
            docker,
            addr: addr.into(),
            hot_window: HOT_WINDOW,
            usage: UsageClock::default(),
            locks: Arc::default(),
            home_dirs: crate::request::process_home_dirs().into(),
            events: None,
        })
    }

    /// Use another hot window (default [`HOT_WINDOW`], 5 minutes).
    pub fn with_hot_window(mut self, window: Duration) -> Self {
        self.hot_window = window;
        self
    }

    /// Use these home directories (instead of `$HOME`, `$TALON_HOME`,
    /// `$USERPROFILE` and the OS home) when security validation blocks
    /// credential directories (`~/.ssh`, `~/.aws`, ...) as bind sources.
    pub fn with_home_dirs(mut self, dirs: Vec<PathBuf>) -> Self {
        self.home_dirs = dirs.into();
        self
    }

    /// Send this backend's [`SandboxEvent`](talon_sandbox_core::SandboxEvent)s
    /// (a container recycled after an OOM kill or repeated engine kills)
    /// to `sink`. Without one they are only logged.
    pub fn with_event_sink(mut self, sink: SharedEventSink) -> Self {
        self.events = Some(sink);
        self
    }

    /// The home directories security validation protects.
    pub fn home_dirs(&self) -> &[PathBuf] {
        &self.home_dirs
    }

    /// The engine address (`unix:///var/run/docker.sock`, ...).
    pub fn engine_address(&self) -> &str {
        &self.addr
    }

    /// The `bollard` client, for callers that need an engine call this
    /// crate does not wrap.
    pub fn docker(&self) -> &Docker {
        &self.docker
    }

    fn lock_for(&self, name: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = self.locks.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(locks.entry(name.to_owned()).or_default())
    }

    /// Make sure the container for `spec` exists, runs and matches its
    /// config hash, and return a handle to it.
    ///
    /// - No container: create it (image checked first), start it, wait
    ///   until an exec runs, then run `setupCommand`.
    /// - Same hash: reuse it (start it when stopped).
    /// - Different hash, running and used within the hot window (or never
    ///   seen by this process): keep it and log a warning telling the
    ///   operator to recreate it by hand; with
    ///   [`require_current_config`](ContainerSpec::require_current_config)
    ///   refuse instead.
    /// - Different hash otherwise: remove it and create a new one.
    ///
    /// A container of that name without the `talon.sandbox=1` label is
    /// never touched: that is an error.
    ///
    /// The spec is trusted as given: security validation is the caller's
    /// (the [`SandboxBackend`](talon_sandbox_core::SandboxBackend) `ensure`
    /// runs it before calling this).
    pub async fn ensure_container(
        &self,
        spec: &ContainerSpec,
    ) -> Result<Arc<DockerSandbox>, SandboxError> {
        check_container_name(&spec.name)?;
        check_image_ref(&spec.image)?;
        let lock = self.lock_for(&spec.name);
        let _guard = lock.lock().await;
        let last_used = self.usage.last(&spec.name);
        let what = format!("inspect container {}", spec.name);
        let existing = match self.docker.inspect_container(&spec.name, None).await {
            Ok(info) => Some(info),
            Err(e) if is_not_found(&e) => None,
            Err(e) => return Err(engine_error(&self.addr, &what, e)),
        };
        let handle = match existing {
            None => self.create(spec).await?,
            Some(info) => {
                let labels = info
                    .config
                    .as_ref()
                    .and_then(|c| c.labels.clone())
                    .unwrap_or_default();
                if labels.get(labels::SANDBOX).map(String::as_str) != Some("1") {
                    return Err(SandboxError::config(format!(
                        "a container named {} exists but Talon does not own it (no {}=1 label); \
                         remove or rename it, or change the sandbox container prefix",
                        spec.name,
                        labels::SANDBOX
                    )));
                }
                let id = info.id.clone().unwrap_or_else(|| spec.name.clone());
                let running = info.state.as_ref().and_then(|s| s.running) == Some(true);
                let current = labels.get(labels::CONFIG_HASH).map(String::as_str);
                if current == Some(spec.config_hash.as_str()) {
                    if !running {
                        self.start_and_wait(spec).await?;
                    }
                    self.handle(spec, id, false, false)?
                } else {
                    let hot = running && last_used.is_none_or(|t| t.elapsed() < self.hot_window);
                    if hot {
                        let hint = recreate_hint(&spec.scope_key);
                        if spec.require_current_config {
                            return Err(SandboxError::config(format!(
                                "sandbox config changed for {} but the container is in use and \
                                 this run requires the current config; recreate it: {hint}",
                                spec.name
                            )));
                        }
                        tracing::warn!(
                            container = %spec.name,
                            "Sandbox config changed for {} (recently used). Recreate to apply: {hint}",
                            spec.name
                        );
                        // The file bridge and execs must see the mounts
                        // the container really has, not the new config's.
                        let mut actual = spec.clone();
                        actual.binds = info
                            .mounts
                            .as_ref()
                            .map(|mounts| mounts.iter().filter_map(bind_of).collect())
                            .unwrap_or_default();
                        if let Some(dir) = info
                            .config
                            .as_ref()
                            .and_then(|c| c.working_dir.clone())
                            .filter(|d| !d.is_empty())
                        {
                            actual.workdir = dir;
                        }
                        self.handle(&actual, id, false, true)?
                    } else {
                        tracing::info!(container = %spec.name, "sandbox config changed; recreating the container");
                        self.force_remove(&spec.name).await?;
                        self.create(spec).await?
                    }
                }
            }
        };
        self.usage.touch(&spec.name);
        Ok(Arc::new(handle))
    }

    /// Where `spec`'s execs run: container `id` (its name while the id is
    /// not known).
    fn target(&self, spec: &ContainerSpec, id: &str) -> ExecTarget {
        ExecTarget {
            docker: self.docker.clone(),
            addr: Arc::clone(&self.addr),
            container: spec.name.as_str().into(),
            id: id.into(),
            scope_key: spec.scope_key.as_str().into(),
            workdir: spec.workdir.as_str().into(),
            usage: self.usage.clone(),
            health: Arc::default(),
            events: self.events.clone(),
        }
    }

    fn handle(
        &self,
        spec: &ContainerSpec,
        id: String,
        created: bool,
        stale_config: bool,
    ) -> Result<DockerSandbox, SandboxError> {
        DockerSandbox::new(
            self.target(spec, &id),
            id,
            spec.binds.clone(),
            created,
            stale_config,
        )
    }

    async fn create(&self, spec: &ContainerSpec) -> Result<DockerSandbox, SandboxError> {
        match self.docker.inspect_image(&spec.image).await {
            Ok(_) => {}
            Err(e) if is_not_found(&e) => return Err(image_missing(&spec.image)),
            Err(e) => {
                return Err(engine_error(
                    &self.addr,
                    &format!("inspect image {}", spec.image),
                    e,
                ));
            }
        }
        let user = resolve_user(spec)?;
        let version = self.docker.client_version();
        let depth = read_only_depth(version.major_version, version.minor_version)?;
        // Every source handed to the engine is its canonical path (no
        // symlink left to swap), pinned by validation or here, and checked
        // to still be the same file immediately before create.
        let mut spec = spec.clone();
        for bind in &mut spec.binds {
            let pinned = match bind.pinned.take() {
                Some(pinned) => pinned,
                None => PinnedSource::resolve(&bind.host).map_err(|e| {
                    SandboxError::config(format!(
                        "sandbox mount source {} (for {}) cannot be resolved ({e}); create it or \
                         remove the mount",
                        bind.host.display(),
                        bind.container
                    ))
                })?,
            };
            pinned.verify(&bind.container)?;
            bind.host = pinned.canonical.clone();
            bind.pinned = Some(pinned);
        }
        let spec = &spec;
        let body = create_body(spec, user, depth)?;
        let options = CreateContainerOptionsBuilder::default()
            .name(&spec.name)
            .build();
        let created = self
            .docker
            .create_container(Some(options), body)
            .await
            .map_err(|e| engine_error(&self.addr, &format!("create container {}", spec.name), e))?;
        for warning in &created.warnings {
            tracing::warn!(container = %spec.name, "Docker engine warning at create: {warning}");
        }
        if let Err(e) = self.check_mounts(spec).await {
            if let Err(cleanup) = self.force_remove(&spec.name).await {
                tracing::warn!(container = %spec.name, "could not remove a container whose mounts failed the check: {cleanup}");
            }
            return Err(e);
        }
        tracing::info!(container = %spec.name, image = %spec.image, "sandbox container created");
        let ready = async {
            self.start_and_wait(spec).await?;
            // The mount happened at start: the sources must still be the
            // files validated, and the container must see exactly them.
            self.check_mounts(spec).await?;
            self.check_seen_identities(spec).await?;
            let handle = self.handle(spec, created.id.clone(), true, false)?;
            if let Some(setup) = spec
                .setup_command
                .as_deref()
                .filter(|s| !s.trim().is_empty())
            {
                let out = handle
                    .run_script(
                        "exec /bin/sh -lc \"$1\"",
                        &[setup.to_owned()],
                        None,
                        SETUP_TIMEOUT,
                    )
                    .await?;
                if !out.status.success() {
                    let stderr = String::from_utf8_lossy(&out.stderr);
                    let tail: String = stderr
                        .chars()
                        .rev()
                        .take(500)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect();
                    return Err(SandboxError::config(format!(
                        "sandbox setupCommand failed in container {} ({:?}): {}",
                        spec.name,
                        out.status,
                        tail.trim()
                    )));
                }
            }
            Ok(handle)
        };
        match ready.await {
            Ok(handle) => Ok(handle),
            Err(e) => {
                // Never leave a half-made container behind: the next
                // ensure would reuse it as if it were good.
                if let Err(cleanup) = self.force_remove(&spec.name).await {
                    tracing::warn!(container = %spec.name, "could not remove a container that failed to start: {cleanup}");
                }
                Err(e)
            }
        }
    }

    /// Inspect the container: its bind mounts must be the spec's, from the
    /// pinned canonical sources, and each source must still be the file
    /// that was validated.
    async fn check_mounts(&self, spec: &ContainerSpec) -> Result<(), SandboxError> {
        let info = self
            .docker
            .inspect_container(&spec.name, None)
            .await
            .map_err(|e| {
                engine_error(&self.addr, &format!("inspect container {}", spec.name), e)
            })?;
        check_created_mounts(
            &spec.name,
            &spec.binds,
            info.mounts.as_deref().unwrap_or_default(),
        )?;
        for bind in &spec.binds {
            if let Some(pinned) = &bind.pinned {
                pinned.verify(&bind.container)?;
            }
        }
        Ok(())
    }

    /// From inside the running container, each bind target must be the
    /// very file (device and inode) that was pinned on the host: what the
    /// container sees, not what the engine reports.
    async fn check_seen_identities(&self, spec: &ContainerSpec) -> Result<(), SandboxError> {
        let pinned: Vec<(&BindMount, &PinnedSource)> = spec
            .binds
            .iter()
            .filter_map(|b| b.pinned.as_ref().map(|p| (b, p)))
            .collect();
        if pinned.is_empty() {
            return Ok(());
        }
        let args: Vec<String> = pinned.iter().map(|(b, _)| b.container.clone()).collect();
        let out = self
            .target(spec, &spec.name)
            .run_script(
                "exec stat -c '%d %i' -- \"$@\"",
                &args,
                None,
                Duration::from_secs(15),
            )
            .await?;
        let text = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = text.lines().collect();
        if !out.status.success() || lines.len() != pinned.len() {
            return Err(SandboxError::config(format!(
                "Sandbox security: container {} could not report what its mounts are (`stat -c` \
                 in the image failed: {:?}); it was removed and nothing ran. The image must \
                 provide `stat` (coreutils or busybox).",
                spec.name, out.status
            )));
        }
        for ((bind, pin), line) in pinned.iter().zip(lines) {
            let want = format!("{} {}", pin.dev, pin.ino);
            if line.trim() != want {
                return Err(SandboxError::config(format!(
                    "Sandbox security: inside container {} the mount at {} is not the validated \
                     source {} (device and inode {} instead of {want}); it was removed and \
                     nothing ran. Make sure nothing rewrites the mount sources while sandboxes \
                     are created.",
                    spec.name,
                    bind.container,
                    pin.canonical.display(),
                    line.trim()
                )));
            }
        }
        Ok(())
    }

    /// Start a container and wait until it runs an exec.
    async fn start_and_wait(&self, spec: &ContainerSpec) -> Result<(), SandboxError> {
        let name = &spec.name;
        match self.docker.start_container(name, None).await {
            Ok(()) => {}
            // 304: already started.
            Err(e) if status_of(&e) == Some(304) => {}
            Err(e) => {
                return Err(engine_error(
                    &self.addr,
                    &format!("start container {name}"),
                    e,
                ));
            }
        }
        let deadline = tokio::time::Instant::now() + READY_TIMEOUT;
        let mut target: Option<ExecTarget> = None;
        loop {
            let info = self
                .docker
                .inspect_container(name, None)
                .await
                .map_err(|e| engine_error(&self.addr, &format!("inspect container {name}"), e))?;
            // Probes run against the container's id, so a probe that ends
            // in a recycle removes this container, never one created
            // meanwhile under the same name.
            let target = match &mut target {
                Some(target) => &*target,
                None => {
                    let Some(id) = info.id.as_deref().filter(|id| !id.is_empty()) else {
                        return Err(SandboxError::exec(format!(
                            "the Docker engine reported no id for container {name}; retry, or \
                             check the engine"
                        )));
                    };
                    &*target.insert(self.target(spec, id))
                }
            };
            let state = info.state.unwrap_or_default();
            if state.running != Some(true) {
                return Err(SandboxError::exec(format!(
                    "container {name} stopped right after start (exit code {}{}); the image {} \
                     must provide /bin/sh and `sleep infinity`",
                    state.exit_code.unwrap_or(-1),
                    state
                        .error
                        .filter(|e| !e.is_empty())
                        .map(|e| format!(", {e}"))
                        .unwrap_or_default(),
                    spec.image
                )));
            }
            let probe = target
                .run_script("exit 0", &[], None, Duration::from_secs(5))
                .await;
            match probe {
                Ok(out) if out.status.success() => return Ok(()),
                Err(e) if e.kind() == SandboxErrorKind::EngineUnavailable => return Err(e),
                other => {
                    if tokio::time::Instant::now() >= deadline {
                        return Err(SandboxError::timeout(format!(
                            "container {name} did not become ready within {} s (last probe: {})",
                            READY_TIMEOUT.as_secs(),
                            match other {
                                Ok(out) => format!("{:?}", out.status),
                                Err(e) => e.to_string(),
                            }
                        )));
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }

    pub(crate) async fn force_remove(&self, name: &str) -> Result<(), SandboxError> {
        let options = RemoveContainerOptionsBuilder::default()
            .force(true)
            .v(true)
            .build();
        match self.docker.remove_container(name, Some(options)).await {
            Ok(()) => {}
            Err(e) if is_not_found(&e) => {}
            Err(e) => {
                return Err(engine_error(
                    &self.addr,
                    &format!("remove container {name}"),
                    e,
                ));
            }
        }
        self.usage.forget(name);
        Ok(())
    }
}

/// A bind mount as the engine reports it on an inspected container.
fn bind_of(mount: &MountPoint) -> Option<BindMount> {
    if mount.typ.as_deref() != Some("bind") {
        return None;
    }
    Some(BindMount {
        host: mount.source.clone()?.into(),
        container: mount.destination.clone()?,
        read_only: mount.rw == Some(false),
        options: None,
        pinned: None,
    })
}

/// The binds of a created container must be exactly the spec's, each from
/// its pinned canonical source: a missing, extra or re-pointed bind is a
/// refusal naming it.
pub(crate) fn check_created_mounts(
    name: &str,
    spec_binds: &[BindMount],
    mounts: &[MountPoint],
) -> Result<(), SandboxError> {
    let seen: Vec<BindMount> = mounts.iter().filter_map(bind_of).collect();
    let refuse = |what: String| {
        SandboxError::config(format!(
            "Sandbox security: container {name} was created with {what}; it was removed and \
             nothing ran. Make sure nothing rewrites the mount sources while sandboxes are created."
        ))
    };
    if seen.len() != spec_binds.len() {
        return Err(refuse(format!(
            "{} bind mounts where {} were asked for",
            seen.len(),
            spec_binds.len()
        )));
    }
    for bind in spec_binds {
        let Some(got) = seen.iter().find(|m| m.container == bind.container) else {
            return Err(refuse(format!("no bind mount at {}", bind.container)));
        };
        if got.host != bind.host {
            return Err(refuse(format!(
                "the bind mount at {} from {} instead of the validated {}",
                bind.container,
                got.host.display(),
                bind.host.display()
            )));
        }
        if bind.read_only && !got.read_only {
            return Err(refuse(format!(
                "the read-only bind mount at {} writable",
                bind.container
            )));
        }
    }
    Ok(())
}

/// The CLI line that recreates a scope's container (OpenClaw's hints with
/// `talon` for `openclaw`).
pub fn recreate_hint(scope_key: &str) -> String {
    if scope_key == "shared" {
        return "talon sandbox recreate --all".to_owned();
    }
    match scope_key.strip_prefix("agent:") {
        Some(agent) if !agent.contains(':') => {
            format!("talon sandbox recreate --agent {}", shell_quote(agent))
        }
        _ => format!(
            "talon sandbox recreate --session {}",
            shell_quote(scope_key)
        ),
    }
}

fn shell_quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '/' | '@'))
    {
        text.to_owned()
    } else {
        let escaped: String = text
            .chars()
            .flat_map(|c| match c {
                '\'' => "'\\''".chars().collect::<Vec<_>>(),
                c if c.is_control() => c.escape_default().collect(),
                c => vec![c],
            })
            .collect();
        format!("'{escaped}'")
    }
}

#[cfg(test)]
#[path = "backend_tests.rs"]
mod tests;
