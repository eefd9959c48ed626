//! The agent's eligible skills, mirrored for its sandbox: loaded from the
//! same six sources as `skills.list` (`skills.load.extraDirs`, bundled
//! from `TALON_BUNDLED_SKILLS_DIR`, managed, personal, project,
//! workspace) and copied by [`talon_sandbox_core::mirror_skills`] into the
//! scope's materialised root, which the sandbox mounts read-only at
//! `<workdir>/.talon/sandbox-skills/skills`.
//!
//! The mirror is refreshed when a run's sandbox target is worked out and
//! before each ensure of the sandbox (first use, and again after it was
//! gone); a refresh that finds every skill's tree unchanged copies
//! nothing. The mounted directory keeps its inode, so a running sandbox
//! sees a refreshed mirror without being recreated, and the config hash
//! (which names the directory, not its contents) stays the same.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use talon_config::TalonConfig;
use talon_sandbox_core::{MirrorLimits, SkillDir, mirror_skills};

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
        let extra: Vec<PathBuf> = skills_config
            .load
            .as_ref()
            .and_then(|l| l.extra_dirs.clone())
            .unwrap_or_default()
            .iter()
            .map(|d| self.config_dir.join(d))
            .collect();
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
