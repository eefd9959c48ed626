//! Workspace mount plans: what a sandbox sees where, per
//! `workspaceAccess`.
//!
//! | access | workdir (`/workspace`) | `/agent` | materialised skills |
//! |---|---|---|---|
//! | `rw` | the agent workspace, writable | — (it *is* the workspace) | read-only overlay |
//! | `ro` | the scope's sandbox workspace, writable scratch | the agent workspace, read-only | read-only overlay |
//! | `none` | the scope's sandbox workspace, writable scratch | — | read-only overlay |
//!
//! With `none` and `ro` the workdir is the scope's own directory
//! (`<workspaceRoot>/<slug>`), seeded once from the agent's bootstrap
//! files ([`crate::prepare_sandbox_workspace`]). It is writable (OpenClaw
//! mounts it read-only, which its users asked to change: openclaw#37634,
//! #46026): it never touches the agent's real workspace, so writing there
//! widens nothing, and a read-only workdir breaks every tool that writes a
//! scratch file. `ro` shows the agent's real workspace read-only at
//! `/agent`.
//!
//! The materialised skills (the agent's eligible skills, copied by
//! [`crate::mirror_skills`]) are laid over the workdir read-only at
//! `<workdir>/.talon/sandbox-skills/skills` in every mode. With `rw` the
//! agent workspace's own skill directories are laid over it read-only too
//! (`<agent ws>/skills` → `<workdir>/skills`, `<agent ws>/.agents/skills`
//! → `<workdir>/.agents/skills`): the agent can read its instructions but
//! not rewrite them. An overlay is only made for a real directory (not a
//! symlink) whose canonical path stays inside its root. Custom
//! `docker.binds` come last (read-only when their options contain `ro`).

use std::path::{Path, PathBuf};

use serde::Serialize;
use talon_fs_bridge::{FsError, Mount, MountBridge};

use crate::bind_spec::{BindSpec, is_within};
use crate::docker_config::AGENT_WORKSPACE_MOUNT;
use crate::sandbox_config::WorkspaceAccess;

/// The mount-format version (recorded in the config hash; a change
/// recreates every sandbox). 4: the workdir is writable scratch for
/// `none` / `ro`, and the materialised skills are overlaid in every mode.
pub const MOUNT_FORMAT_VERSION: u32 = 4;
/// Where materialised skills appear under the workdir.
pub const MATERIALIZED_SKILLS_MOUNT: &str = ".talon/sandbox-skills/skills";

/// What a mount is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum MountKind {
    /// The workspace at the workdir.
    Workspace,
    /// The agent's own workspace at `/agent`.
    Agent,
    /// A read-only skills overlay.
    Skills,
    /// A custom bind from `docker.binds`.
    Bind,
}

/// One mount of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MountEntry {
    /// The host directory (or file).
    pub host_path: PathBuf,
    /// Where it appears in the sandbox.
    pub container_path: String,
    /// Whether the sandbox may not write to it.
    pub read_only: bool,
    /// What it is for.
    pub kind: MountKind,
    /// A custom bind's options as written (`ro`, `ro,z`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bind_options: Option<String>,
}

impl MountEntry {
    /// The Docker `-v` string: `host:container:z` / `host:container:ro,z`
    /// for managed mounts; a custom bind keeps its own options.
    pub fn docker_bind(&self) -> String {
        let host = self.host_path.to_string_lossy();
        match (self.kind, &self.bind_options) {
            (MountKind::Bind, Some(opts)) => format!("{host}:{}:{opts}", self.container_path),
            (MountKind::Bind, None) => format!("{host}:{}", self.container_path),
            _ => {
                let mode = if self.read_only { "ro,z" } else { "z" };
                format!("{host}:{}:{mode}", self.container_path)
            }
        }
    }
}

/// Every mount of a sandbox, in mount order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MountPlan {
    /// The mounts: workspace, agent, skills overlays, custom binds.
    pub entries: Vec<MountEntry>,
}

/// What a mount plan is built from.
#[derive(Debug, Clone, Copy)]
pub struct MountPlanInputs<'a> {
    /// The workspace access mode.
    pub access: WorkspaceAccess,
    /// The container workdir (`/workspace`).
    pub workdir: &'a str,
    /// The scope's sandbox workspace dir (the copy used for `ro`/`none`).
    pub sandbox_workspace_dir: &'a Path,
    /// The agent's own workspace dir.
    pub agent_workspace_dir: &'a Path,
    /// The materialised skills root, when there is one (it holds
    /// `skills/`).
    pub materialized_skills_root: Option<&'a Path>,
    /// The resolved `docker.binds`.
    pub binds: &'a [String],
}

/// The dir mounted at the workdir: the agent workspace for `rw`, the
/// scope's sandbox copy otherwise.
pub fn mounted_workspace_dir(
    access: WorkspaceAccess,
    sandbox_workspace_dir: &Path,
    agent_workspace_dir: &Path,
) -> PathBuf {
    match access {
        WorkspaceAccess::Rw => agent_workspace_dir.to_path_buf(),
        WorkspaceAccess::Ro | WorkspaceAccess::None => sandbox_workspace_dir.to_path_buf(),
    }
}

fn join_container(base: &str, rel: &str) -> String {
    format!("{}/{rel}", base.trim_end_matches('/'))
}

/// `dir` is a real directory (not a symlink) whose canonical path stays
/// inside `root`'s canonical path.
fn contained_real_dir(dir: &Path, root: &Path) -> Option<PathBuf> {
    let meta = std::fs::symlink_metadata(dir).ok()?;
    if !meta.file_type().is_dir() {
        return None;
    }
    let real = std::fs::canonicalize(dir).ok()?;
    let root = std::fs::canonicalize(root).ok()?;
    is_within(&real, &root).then_some(real)
}

impl MountPlan {
    /// Build the plan (see the module docs). Reads the file system only to
    /// decide which skill overlays exist.
    pub fn build(inputs: &MountPlanInputs<'_>) -> MountPlan {
        let workdir = inputs.workdir;
        let workspace = mounted_workspace_dir(
            inputs.access,
            inputs.sandbox_workspace_dir,
            inputs.agent_workspace_dir,
        );
        let mut entries = vec![MountEntry {
            host_path: workspace.clone(),
            container_path: workdir.to_owned(),
            // Writable in every mode: the agent's own workspace for `rw`,
            // the scope's scratch copy otherwise (see the module docs).
            read_only: false,
            kind: MountKind::Workspace,
            bind_options: None,
        }];
        if inputs.access != WorkspaceAccess::None && workspace != inputs.agent_workspace_dir {
            entries.push(MountEntry {
                host_path: inputs.agent_workspace_dir.to_path_buf(),
                container_path: AGENT_WORKSPACE_MOUNT.to_owned(),
                read_only: inputs.access != WorkspaceAccess::Rw,
                kind: MountKind::Agent,
                bind_options: None,
            });
        }
        let mut overlays: Vec<(PathBuf, &Path, String)> = Vec::new();
        if inputs.access == WorkspaceAccess::Rw {
            let agent_ws = inputs.agent_workspace_dir;
            overlays.push((
                agent_ws.join("skills"),
                agent_ws,
                join_container(workdir, "skills"),
            ));
            overlays.push((
                agent_ws.join(".agents").join("skills"),
                agent_ws,
                join_container(workdir, ".agents/skills"),
            ));
        }
        if let Some(root) = inputs.materialized_skills_root {
            overlays.push((
                root.join("skills"),
                root,
                join_container(workdir, MATERIALIZED_SKILLS_MOUNT),
            ));
        }
        for (dir, root, container_path) in overlays {
            if let Some(real) = contained_real_dir(&dir, root) {
                entries.push(MountEntry {
                    host_path: real,
                    container_path,
                    read_only: true,
                    kind: MountKind::Skills,
                    bind_options: None,
                });
            }
        }
        for bind in inputs.binds {
            if let Some(spec) = BindSpec::parse(bind) {
                entries.push(MountEntry {
                    host_path: PathBuf::from(&spec.source),
                    container_path: spec.target.clone(),
                    read_only: spec.read_only(),
                    kind: MountKind::Bind,
                    bind_options: spec.options.clone(),
                });
            }
        }
        MountPlan { entries }
    }

    /// Every mount as a Docker `-v` string, in order.
    pub fn docker_binds(&self) -> Vec<String> {
        self.entries.iter().map(MountEntry::docker_bind).collect()
    }

    /// The plan as file-bridge mounts, for the directories among them (a
    /// custom bind of a single file is not reachable through the file
    /// tools; commands in the sandbox still see it).
    pub fn fs_bridge_mounts(&self) -> Vec<Mount> {
        self.entries
            .iter()
            .filter(|e| e.kind != MountKind::Bind || e.host_path.is_dir())
            .map(|e| Mount {
                container_path: e.container_path.clone(),
                host_root: e.host_path.clone(),
                read_only: e.read_only,
            })
            .collect()
    }

    /// A file bridge over [`MountPlan::fs_bridge_mounts`] with relative
    /// paths starting at `cwd` (the workdir). Fails when a mounted
    /// directory does not exist (yet) or `cwd` is under no mount.
    pub fn mount_bridge(&self, cwd: &str) -> Result<MountBridge, FsError> {
        MountBridge::new(self.fs_bridge_mounts(), cwd)
    }

    /// The read-only skill overlays as `host:container:ro` (a config-hash
    /// input).
    pub fn read_only_skill_mounts(&self) -> Vec<String> {
        self.entries
            .iter()
            .filter(|e| e.kind == MountKind::Skills)
            .map(|e| format!("{}:{}:ro", e.host_path.to_string_lossy(), e.container_path))
            .collect()
    }
}

#[cfg(test)]
#[path = "mounts_tests.rs"]
mod tests;
