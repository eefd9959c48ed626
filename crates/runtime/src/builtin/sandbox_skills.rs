//! The agent's eligible skills, mirrored for its sandbox: loaded from the
//! same six sources as `skills.list` (`skills.load.extraDirs`, bundled
//! from `TALON_BUNDLED_SKILLS_DIR`, managed, personal, project,
//! workspace) and copied by [`talon_sandbox_core::mirror_skills`] into the
//! scope's materialised root, which the sandbox mounts read-only at
//! `<workdir>/.talon/sandbox-skills/skills`.
//!
//! The mirror is refreshed when a run's sandbox target is worked out,
//! before each ensure of the sandbox (first use, and again after it was
//! gone), and, at most every [`REFRESH_INTERVAL`], before a command is
//! launched or a file is read, listed or stat'ed in the sandbox
//! ([`RefreshingLauncher`], [`RefreshingBridge`]), so a skill edited during
//! a long session reaches its sandbox. A refresh that finds every skill's
//! tree unchanged copies nothing. The mounted directory keeps its inode,
//! so a running sandbox sees a refreshed mirror without being recreated,
//! and the config hash (which names the directory, not its contents) stays
//! the same.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use talon_config::TalonConfig;
use talon_fs_bridge::{
    Access, DirEntry, EditFn, FileContents, FileStat, FsBridge, FsError, ResolvedPath,
    WriteOptions, WriteReport,
};
use talon_sandbox_core::{
    LaunchRequest, LaunchedProcess, MirrorLimits, ProcessLauncher, SandboxError, SkillDir,
    mirror_skills,
};

/// The shortest time between two refreshes triggered by tool calls.
pub(crate) const REFRESH_INTERVAL: Duration = Duration::from_secs(5);

/// What it takes to mirror one agent's skills into one scope's root.
#[derive(Debug, Clone)]
pub(crate) struct SandboxSkills {
    pub(crate) config: Arc<TalonConfig>,
    pub(crate) config_dir: PathBuf,
    pub(crate) state_dir: PathBuf,
    pub(crate) home: Option<PathBuf>,
    pub(crate) workspace: PathBuf,
    /// `<state dir>/sandbox/skills-workspaces/<slug>/.talon/sandbox-skills`.
    pub(crate) root: PathBuf,
}

impl SandboxSkills {
    /// The eligible skills' directories (the directory of each `SKILL.md`).
    fn eligible(&self) -> Vec<SkillDir> {
        let skills_config = self.config.skills_config();
        let extra = skills_config.extra_dirs(&self.config_dir, self.home.as_deref());
        let bundled = std::env::var_os("TALON_BUNDLED_SKILLS_DIR")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        let roots = talon_skills::SkillRoots::resolve(
            Some(&self.workspace),
            &self.state_dir,
            self.home.as_deref(),
            extra,
            bundled,
        );
        let json = serde_json::to_value(&*self.config).unwrap_or(serde_json::Value::Null);
        let eligibility = talon_skills::default_eligibility_context(json);
        let set = talon_skills::load_skills_with_config(&roots, &skills_config, &eligibility);
        set.skills
            .iter()
            .filter(|s| s.eligibility.eligible)
            .filter_map(|s| s.location.parent().map(Path::to_path_buf))
            .map(|dir| SkillDir { dir })
            .collect()
    }

    /// Make the mirror match the agent's eligible skills now. A failure is
    /// logged and leaves the sandbox without (or with the previous) skills;
    /// it never widens what the sandbox sees.
    pub(crate) fn refresh(&self) {
        let skills = self.eligible();
        match mirror_skills(&self.root, &skills, &MirrorLimits::default()) {
            Ok(report) => {
                if !report.skipped.is_empty() {
                    tracing::warn!(
                        root = %self.root.display(),
                        skipped = report.skipped.len(),
                        "some skill files were not mirrored into the sandbox (see the earlier warnings)"
                    );
                }
            }
            Err(e) => tracing::warn!(
                root = %self.root.display(),
                "the sandbox's skills cannot be mirrored: {e}"
            ),
        }
    }
}

/// Refreshes one scope's mirror when the last refresh is older than
/// [`REFRESH_INTERVAL`].
#[derive(Debug)]
pub(crate) struct SkillsRefresher {
    skills: SandboxSkills,
    last: Mutex<Instant>,
}

impl SkillsRefresher {
    /// A refresher for `skills`, which were just refreshed.
    pub(crate) fn new(skills: SandboxSkills) -> Self {
        SkillsRefresher {
            skills,
            last: Mutex::new(Instant::now()),
        }
    }

    /// Refresh now, off the async threads.
    pub(crate) async fn refresh(&self) {
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
        let skills = self.skills.clone();
        if let Err(e) = tokio::task::spawn_blocking(move || skills.refresh()).await {
            tracing::warn!("the sandbox skills refresh failed: {e}");
        }
    }

    /// Refresh when the last one is older than [`REFRESH_INTERVAL`].
    async fn refresh_if_due(&self) {
        let due = {
            let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
            let due = last.elapsed() >= REFRESH_INTERVAL;
            if due {
                *last = Instant::now();
            }
            due
        };
        if due {
            self.refresh().await;
        }
    }
}

/// A sandbox launcher that refreshes the skills mirror (when due) before
/// each command.
#[derive(Debug)]
pub(crate) struct RefreshingLauncher {
    pub(crate) inner: Arc<dyn ProcessLauncher>,
    pub(crate) refresher: Arc<SkillsRefresher>,
}

#[async_trait::async_trait]
impl ProcessLauncher for RefreshingLauncher {
    fn id(&self) -> &str {
        self.inner.id()
    }

    async fn launch(&self, request: LaunchRequest) -> Result<LaunchedProcess, SandboxError> {
        self.refresher.refresh_if_due().await;
        self.inner.launch(request).await
    }
}

/// A sandbox file bridge that refreshes the skills mirror (when due)
/// before reading, listing or stat'ing.
#[derive(Debug)]
pub(crate) struct RefreshingBridge {
    pub(crate) inner: Arc<dyn FsBridge>,
    pub(crate) refresher: Arc<SkillsRefresher>,
}

#[async_trait::async_trait]
impl FsBridge for RefreshingBridge {
    fn cwd(&self) -> &str {
        self.inner.cwd()
    }

    async fn resolve(&self, path: &str, access: Access) -> Result<ResolvedPath, FsError> {
        self.inner.resolve(path, access).await
    }

    async fn read(&self, path: &str, max_bytes: Option<u64>) -> Result<FileContents, FsError> {
        self.refresher.refresh_if_due().await;
        self.inner.read(path, max_bytes).await
    }

    async fn write(
        &self,
        path: &str,
        data: &[u8],
        options: WriteOptions,
    ) -> Result<WriteReport, FsError> {
        self.inner.write(path, data, options).await
    }

    async fn edit(&self, path: &str, edit: &EditFn<'_>) -> Result<WriteReport, FsError> {
        self.inner.edit(path, edit).await
    }

    async fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        self.refresher.refresh_if_due().await;
        self.inner.stat(path).await
    }

    async fn list(&self, path: &str) -> Result<Vec<DirEntry>, FsError> {
        self.refresher.refresh_if_due().await;
        self.inner.list(path).await
    }

    async fn mkdir(&self, path: &str, recursive: bool) -> Result<(), FsError> {
        self.inner.mkdir(path, recursive).await
    }

    async fn remove(&self, path: &str, recursive: bool) -> Result<(), FsError> {
        self.inner.remove(path, recursive).await
    }

    async fn rename(&self, from: &str, to: &str, overwrite: bool) -> Result<(), FsError> {
        self.inner.rename(from, to, overwrite).await
    }
}
