//! The materialised skills: a copy of the agent's eligible skills that a
//! sandbox sees read-only at `<workdir>/.talon/sandbox-skills/skills`.
//!
//! The root is `<state dir>/sandbox/skills-workspaces/<slug>/.talon/sandbox-skills`
//! ([`materialized_skills_root`]); its `skills/` holds one directory per
//! skill, named after the skill's own directory. The caller (the runtime)
//! knows which skills are eligible and passes their directories to
//! [`mirror_skills`]; this module only copies, and copies defensively,
//! since a skill directory may be written by the agent or a project:
//! - only regular files with one link are copied, opened `O_NOFOLLOW`
//!   beneath a directory fd and re-checked by `fstat`; symlinks, FIFOs,
//!   devices, sockets and hard links are skipped and reported, and
//!   hidden entries (`.git`, `.env`, ...) are left out;
//! - [`MirrorLimits`] caps the file size, the files and bytes per skill,
//!   the skills, and the depth; what is over a cap is skipped and
//!   reported;
//! - one mirror runs at a time per root (an `flock` on it);
//! - a skill is copied into a temp directory and swapped into place
//!   (`RENAME_EXCHANGE`), so the mounted `skills/` directory itself is
//!   never replaced (a running container keeps seeing it) and a reader
//!   sees the old or the new copy of a skill, never half of one.
//!
//! A refresh is cheap when nothing changed: each skill's tree is only
//! `lstat`ed and fingerprinted (paths, sizes, modification times, modes,
//! inodes) and compared with the fingerprint recorded at the last copy
//! (`<root>/.talon-skills-mirror.json`, outside the mount).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags, RenameFlags, Stat};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::safe_fs::{
    Created, SkipReason, create_new_file, judge_regular, lstat_at, make_subdir, open_subdir,
    read_regular, replace_file, temp_name,
};
use crate::sandbox_config::SandboxScope;
use crate::scope::scope_slug;
use crate::workspace_seed::{SkippedFile, WorkspaceError, create_and_open_dir};

/// The manifest of the last copy, in the materialised root.
pub const SKILLS_MIRROR_MANIFEST: &str = ".talon-skills-mirror.json";

/// Where a scope's skills are materialised:
/// `<state dir>/sandbox/skills-workspaces/<slug>/.talon/sandbox-skills`
/// (it holds `skills/`).
pub fn materialized_skills_root(state_dir: &Path, scope: SandboxScope, scope_key: &str) -> PathBuf {
    state_dir
        .join("sandbox")
        .join("skills-workspaces")
        .join(scope_slug(scope, scope_key))
        .join(".talon")
        .join("sandbox-skills")
}

/// One skill to mirror: its directory (the one holding `SKILL.md`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillDir {
    /// The skill's directory.
    pub dir: PathBuf,
}

/// Caps on what is mirrored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MirrorLimits {
    /// The largest file copied.
    pub max_file_bytes: u64,
    /// The most files copied per skill.
    pub max_files_per_skill: usize,
    /// The most bytes copied per skill.
    pub max_bytes_per_skill: u64,
    /// The most skills mirrored.
    pub max_skills: usize,
    /// The deepest directory level copied below a skill's directory.
    pub max_depth: usize,
}

impl Default for MirrorLimits {
    /// 4 MiB per file, 512 files and 32 MiB per skill, 512 skills, 16
    /// levels.
    fn default() -> Self {
        MirrorLimits {
            max_file_bytes: 4 * 1024 * 1024,
            max_files_per_skill: 512,
            max_bytes_per_skill: 32 * 1024 * 1024,
            max_skills: 512,
            max_depth: 16,
        }
    }
}

/// What [`mirror_skills`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MirrorReport {
    /// The mirrored directory names, sorted.
    pub skills: Vec<String>,
    /// Skills copied (new or changed) by this call.
    pub copied: Vec<String>,
    /// Skills removed (no longer eligible).
    pub removed: Vec<String>,
    /// Entries not copied (`<skill>/<path>`), with the reason.
    pub skipped: Vec<SkippedFile>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Manifest {
    /// Directory name → fingerprint of the source tree it was copied from.
    skills: BTreeMap<String, String>,
}

/// A valid directory name for a mirrored skill: one plain component.
fn mirror_name(dir: &Path) -> Option<String> {
    let name = dir.file_name()?.to_str()?;
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name.len() <= 128
        && !name.contains(['/', '\0']);
    ok.then(|| name.to_owned())
}

/// Make `<root>/skills` hold exactly `skills` (see the module docs).
/// Creates the root when missing. Fails only when the root itself cannot
/// be made or written; a bad skill is skipped and reported.
pub fn mirror_skills(
    root: &Path,
    skills: &[SkillDir],
    limits: &MirrorLimits,
) -> Result<MirrorReport, WorkspaceError> {
    let root_fd = create_and_open_dir(root)?;
    // One mirror at a time per root, across threads and processes (the CLI
    // and a gateway may refresh the same scope): another's cleanup must not
    // remove this one's temp copy. Released when `root_fd` closes.
    rustix::fs::flock(&root_fd, rustix::fs::FlockOperation::LockExclusive).map_err(|e| {
        WorkspaceError::Write {
            path: root.to_path_buf(),
            source: e.into(),
        }
    })?;
    let write_err =
        |path: PathBuf| move |source: std::io::Error| WorkspaceError::Write { path, source };
    let skills_dir = root.join("skills");
    let out =
        make_subdir(root_fd.as_fd(), "skills").map_err(|source| WorkspaceError::NotADirectory {
            path: skills_dir.clone(),
            source,
        })?;
    let old: Manifest = std::fs::read(root.join(SKILLS_MIRROR_MANIFEST))
        .ok()
        .and_then(|t| serde_json::from_slice(&t).ok())
        .unwrap_or_default();
    let mut report = MirrorReport::default();
    let mut manifest = Manifest::default();
    let mut wanted: BTreeSet<String> = BTreeSet::new();
    for skill in skills {
        let Some(base) = mirror_name(&skill.dir) else {
            report.skipped.push(SkippedFile {
                path: skill.dir.display().to_string(),
                reason: SkipReason::UnusableName,
            });
            continue;
        };
        if wanted.len() >= limits.max_skills {
            report.skipped.push(SkippedFile {
                path: base,
                reason: SkipReason::Limit {
                    limit: "skills".to_owned(),
                },
            });
            continue;
        }
        let mut name = base.clone();
        let mut n = 2;
        while wanted.contains(&name) {
            name = format!("{base}-{n}");
            n += 1;
        }
        // The skill's directory itself was vetted by the skills loader
        // (a symlinked skill is allowed for the operator's own roots);
        // nothing beneath it is followed.
        let src = match rustix::fs::open(
            &skill.dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(e) => {
                report.skipped.push(SkippedFile {
                    path: name,
                    reason: SkipReason::Unreadable {
                        error: e.to_string(),
                    },
                });
                continue;
            }
        };
        let mut walk = Walk::new(limits, &name);
        walk.tree(src.as_fd(), None, "", 0);
        let fingerprint = walk.fingerprint();
        wanted.insert(name.clone());
        let existing = lstat_at(out.as_fd(), &name).ok().flatten();
        let current = existing
            .as_ref()
            .is_some_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory);
        if existing.is_some() && !current {
            // Not a directory Talon made: out of the way.
            let _ = rustix::fs::unlinkat(out.as_fd(), name.as_str(), rustix::fs::AtFlags::empty());
        }
        if current && old.skills.get(&name) == Some(&fingerprint) {
            manifest.skills.insert(name, fingerprint);
            continue;
        }
        let tmp = temp_name(&name);
        let tmp_fd = make_subdir(out.as_fd(), &tmp).map_err(write_err(skills_dir.join(&tmp)))?;
        let mut copy = Walk::new(limits, &name);
        copy.tree(src.as_fd(), Some(tmp_fd.as_fd()), "", 0);
        drop(tmp_fd);
        let swapped = if current {
            rustix::fs::renameat_with(
                out.as_fd(),
                tmp.as_str(),
                out.as_fd(),
                name.as_str(),
                RenameFlags::EXCHANGE,
            )
        } else {
            rustix::fs::renameat_with(
                out.as_fd(),
                tmp.as_str(),
                out.as_fd(),
                name.as_str(),
                RenameFlags::NOREPLACE,
            )
        };
        if let Err(e) = swapped {
            let _ = std::fs::remove_dir_all(skills_dir.join(&tmp));
            return Err(WorkspaceError::Write {
                path: skills_dir.join(&name),
                source: e.into(),
            });
        }
        // After an exchange the temp name holds the old copy.
        let _ = std::fs::remove_dir_all(skills_dir.join(&tmp));
        for skipped in &copy.skipped {
            tracing::warn!(skill = %name, file = %skipped.path, "skill file not mirrored into the sandbox: {}", skipped.reason);
        }
        report.skipped.extend(copy.skipped);
        report.copied.push(name.clone());
        manifest.skills.insert(name, fingerprint);
    }
    // Whatever else is there (skills no longer eligible, leftovers of an
    // interrupted copy) goes.
    for entry in list_names(out.as_fd()) {
        if !wanted.contains(&entry) {
            let _ = std::fs::remove_dir_all(skills_dir.join(&entry))
                .or_else(|_| std::fs::remove_file(skills_dir.join(&entry)));
            if !entry.ends_with(".talon-tmp") {
                report.removed.push(entry);
            }
        }
    }
    let text = serde_json::to_vec(&manifest).unwrap_or_default();
    replace_file(root_fd.as_fd(), SKILLS_MIRROR_MANIFEST, &text)
        .map_err(write_err(root.join(SKILLS_MIRROR_MANIFEST)))?;
    report.skills = wanted.into_iter().collect();
    if !report.copied.is_empty() || !report.removed.is_empty() {
        tracing::info!(root = %root.display(), copied = ?report.copied, removed = ?report.removed, "sandbox skills mirrored");
    }
    Ok(report)
}

/// The names in a directory, sorted (`.` and `..` left out).
fn list_names(dir: BorrowedFd<'_>) -> Vec<String> {
    let Ok(fd) = rustix::fs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return Vec::new();
    };
    let Ok(entries) = rustix::fs::Dir::read_from(&fd) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = OsStr::from_bytes(e.file_name().to_bytes())
                .to_str()?
                .to_owned();
            (name != "." && name != "..").then_some(name)
        })
        .collect();
    names.sort();
    names
}

/// One walk over a skill's tree: fingerprinting it, and (with a
/// destination) copying it.
struct Walk<'a> {
    limits: &'a MirrorLimits,
    skill: &'a str,
    files: usize,
    bytes: u64,
    hasher: Sha256,
    skipped: Vec<SkippedFile>,
}

impl<'a> Walk<'a> {
    fn new(limits: &'a MirrorLimits, skill: &'a str) -> Self {
        Walk {
            limits,
            skill,
            files: 0,
            bytes: 0,
            hasher: Sha256::new(),
            skipped: Vec::new(),
        }
    }

    fn fingerprint(&self) -> String {
        let digest = self.hasher.clone().finalize();
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn skip(&mut self, rel: &str, reason: SkipReason) {
        self.skipped.push(SkippedFile {
            path: format!("{}/{rel}", self.skill),
            reason,
        });
    }

    fn note(&mut self, kind: &str, rel: &str, st: &Stat) {
        self.hasher.update(format!(
            "{kind}\0{rel}\0{}\0{}\0{}\0{}\0{}\0{}\n",
            st.st_size, st.st_mtime, st.st_mtime_nsec, st.st_mode, st.st_ino, st.st_nlink
        ));
    }

    fn tree(
        &mut self,
        src: BorrowedFd<'_>,
        dst: Option<BorrowedFd<'_>>,
        prefix: &str,
        depth: usize,
    ) {
        for name in list_names(src) {
            if name.starts_with('.') {
                continue;
            }
            let rel = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            let st = match lstat_at(src, &name) {
                Ok(Some(st)) => st,
                Ok(None) => continue,
                Err(e) => {
                    self.skip(
                        &rel,
                        SkipReason::Unreadable {
                            error: e.to_string(),
                        },
                    );
                    continue;
                }
            };
            if FileType::from_raw_mode(st.st_mode) == FileType::Directory {
                if depth >= self.limits.max_depth {
                    self.skip(
                        &rel,
                        SkipReason::Limit {
                            limit: "depth".to_owned(),
                        },
                    );
                    continue;
                }
                self.note("d", &rel, &st);
                let Ok(sub) = open_subdir(src, &name) else {
                    self.skip(&rel, SkipReason::Changed);
                    continue;
                };
                let sub_dst: Option<OwnedFd> = match dst {
                    Some(d) => match make_subdir(d, &name) {
                        Ok(fd) => Some(fd),
                        Err(e) => {
                            self.skip(
                                &rel,
                                SkipReason::Unreadable {
                                    error: e.to_string(),
                                },
                            );
                            continue;
                        }
                    },
                    None => None,
                };
                self.tree(
                    sub.as_fd(),
                    sub_dst.as_ref().map(AsFd::as_fd),
                    &rel,
                    depth + 1,
                );
                continue;
            }
            self.note("f", &rel, &st);
            if let Err(reason) = judge_regular(&st, self.limits.max_file_bytes) {
                self.skip(&rel, reason);
                continue;
            }
            let size = u64::try_from(st.st_size).unwrap_or(u64::MAX);
            if self.files >= self.limits.max_files_per_skill {
                self.skip(
                    &rel,
                    SkipReason::Limit {
                        limit: "files per skill".to_owned(),
                    },
                );
                continue;
            }
            if self.bytes.saturating_add(size) > self.limits.max_bytes_per_skill {
                self.skip(
                    &rel,
                    SkipReason::Limit {
                        limit: "bytes per skill".to_owned(),
                    },
                );
                continue;
            }
            self.files += 1;
            self.bytes = self.bytes.saturating_add(size);
            let Some(d) = dst else { continue };
            match read_regular(src, &name, &st, self.limits.max_file_bytes) {
                Ok((bytes, st)) => {
                    let mode = if st.st_mode & 0o111 != 0 {
                        0o755
                    } else {
                        0o644
                    };
                    match create_new_file(d, &name, &bytes, mode, None) {
                        Ok(Created::Written) => {}
                        Ok(Created::Exists) => self.skip(&rel, SkipReason::Changed),
                        Err(e) => self.skip(
                            &rel,
                            SkipReason::Unreadable {
                                error: e.to_string(),
                            },
                        ),
                    }
                }
                Err(reason) => self.skip(&rel, reason),
            }
        }
    }
}

#[cfg(test)]
#[path = "skills_mirror_tests.rs"]
mod tests;
