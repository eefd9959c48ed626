//! The approvals file, `<state dir>/exec-approvals.json`: per-agent
//! allowlists (and optional policy overrides that can only tighten
//! `tools.exec`), read on every check and written atomically with mode
//! 0600.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::exec_approvals::allowlist::{AllowlistEntry, CompiledEntry};
use crate::exec_approvals::policy::{ExecAsk, ExecPolicy, ExecSecurity};

/// The file name under the state directory.
pub const EXEC_APPROVALS_FILE: &str = "exec-approvals.json";

/// The only file version (OpenClaw's `version: 1`).
pub const EXEC_APPROVALS_VERSION: u32 = 1;

/// The agent key whose allowlist applies to every agent (OpenClaw's `*`).
pub const ALL_AGENTS: &str = "*";

/// Why the approvals file cannot be used. Every variant means: no command
/// is run until it is fixed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExecApprovalsError {
    /// The file exists but cannot be read.
    #[error(
        "cannot read the exec approvals file {path}: {source}; fix its permissions (until then no command runs)"
    )]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not JSON of the expected shape.
    #[error(
        "{path}:{line}:{column}: the exec approvals file does not parse: {message}; fix that line or remove the file (until then no command runs)"
    )]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The file parses but a value is not accepted.
    #[error(
        "{path}: {key}: {message}; fix it by hand or with `talon approvals allowlist remove` (until then no command runs)"
    )]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The key path, e.g. `agents.main.allowlist[2].pattern`.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// The file cannot be written.
    #[error("cannot write the exec approvals file {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// Policy overrides in the file (`defaults` or one agent).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FilePolicy {
    /// Tightens `tools.exec.security`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<ExecSecurity>,
    /// Tightens `tools.exec.ask`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ask: Option<ExecAsk>,
    /// What a needed approval falls back to when no approver is attached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ask_fallback: Option<ExecSecurity>,
    /// OpenClaw's skill-CLI auto-allow; kept, but Talon never widens the
    /// allowlist with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_allow_skills: Option<bool>,
}

/// One agent's section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentApprovals {
    /// Tightens `tools.exec.security` for this agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<ExecSecurity>,
    /// Tightens `tools.exec.ask` for this agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ask: Option<ExecAsk>,
    /// See [`FilePolicy::ask_fallback`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ask_fallback: Option<ExecSecurity>,
    /// See [`FilePolicy::auto_allow_skills`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_allow_skills: Option<bool>,
    /// The agent's allowlist.
    #[serde(default)]
    pub allowlist: Vec<AllowlistEntry>,
    /// OpenClaw's MCP tool grants: kept as found, not interpreted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_tools: Option<serde_json::Value>,
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecApprovalsFile {
    /// Always 1.
    pub version: u32,
    /// OpenClaw's companion-app socket: kept as found, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<serde_json::Value>,
    /// Overrides for every agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defaults: Option<FilePolicy>,
    /// Per agent id (lower case); `*` applies to every agent.
    #[serde(default)]
    pub agents: BTreeMap<String, AgentApprovals>,
}

impl Default for ExecApprovalsFile {
    fn default() -> Self {
        ExecApprovalsFile {
            version: EXEC_APPROVALS_VERSION,
            socket: None,
            defaults: None,
            agents: BTreeMap::new(),
        }
    }
}

/// What the file says about one agent, compiled.
#[derive(Debug, Clone, Default)]
pub struct AgentView {
    pub(crate) entries: Vec<CompiledEntry>,
    /// The file's overrides as a policy to combine (stricter-of) with the
    /// configured one; fields the file leaves out are the most permissive.
    pub(crate) overrides: ExecPolicy,
    /// `askFallback`: the agent's, else `*`'s, else `defaults`'.
    pub(crate) ask_fallback: Option<ExecSecurity>,
}

impl AgentView {
    /// The allowlist entries that apply (`*` first, then the agent's).
    pub fn entries(&self) -> impl Iterator<Item = &AllowlistEntry> {
        self.entries.iter().map(|e| &e.entry)
    }
}

/// The approvals file of one state directory.
#[derive(Debug, Clone)]
pub struct ExecApprovalsStore {
    path: PathBuf,
}

impl ExecApprovalsStore {
    /// The store at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        ExecApprovalsStore { path: path.into() }
    }

    /// The store at `<state_dir>/exec-approvals.json`.
    pub fn in_state_dir(state_dir: &Path) -> Self {
        ExecApprovalsStore::new(state_dir.join(EXEC_APPROVALS_FILE))
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Read and check the whole file; a missing file is an empty one.
    pub fn load(&self) -> Result<ExecApprovalsFile, ExecApprovalsError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(ExecApprovalsFile::default());
            }
            Err(source) => {
                return Err(ExecApprovalsError::Read {
                    path: self.path.clone(),
                    source,
                });
            }
        };
        self.parse(&text)
    }

    /// Parse and check `text` as this store's file (errors name its path).
    pub fn parse(&self, text: &str) -> Result<ExecApprovalsFile, ExecApprovalsError> {
        let file: ExecApprovalsFile =
            serde_json::from_str(text).map_err(|e| ExecApprovalsError::Parse {
                path: self.path.clone(),
                line: e.line(),
                column: e.column(),
                message: e.to_string(),
            })?;
        self.check(&file)?;
        Ok(file)
    }

    fn invalid(&self, key: String, message: String) -> ExecApprovalsError {
        ExecApprovalsError::Invalid {
            path: self.path.clone(),
            key,
            message,
        }
    }

    fn check(&self, file: &ExecApprovalsFile) -> Result<(), ExecApprovalsError> {
        if file.version != EXEC_APPROVALS_VERSION {
            return Err(self.invalid(
                "version".to_owned(),
                format!(
                    "version {} is not supported (expected {EXEC_APPROVALS_VERSION})",
                    file.version
                ),
            ));
        }
        for (agent, section) in &file.agents {
            if agent.trim().is_empty() {
                return Err(self.invalid("agents".to_owned(), "an agent id is empty".to_owned()));
            }
            for (i, entry) in section.allowlist.iter().enumerate() {
                CompiledEntry::compile(entry.clone()).map_err(|m| {
                    self.invalid(format!("agents.{agent}.allowlist[{i}]"), m.to_string())
                })?;
            }
        }
        Ok(())
    }

    /// What applies to `agent_id`: the `*` and the agent's entries, and
    /// the overrides of `defaults` and the agent's section.
    pub fn agent_view(&self, agent_id: &str) -> Result<AgentView, ExecApprovalsError> {
        let file = self.load()?;
        let agent_id = agent_id.trim().to_lowercase();
        let mut view = AgentView {
            entries: Vec::new(),
            overrides: ExecPolicy {
                security: ExecSecurity::Full,
                ask: ExecAsk::Off,
                ask_fallback: ExecSecurity::Full,
            },
            ask_fallback: None,
        };
        let mut tighten = |security: Option<ExecSecurity>, ask: Option<ExecAsk>| {
            view.overrides = view.overrides.stricter(ExecPolicy {
                security: security.unwrap_or(ExecSecurity::Full),
                ask: ask.unwrap_or(ExecAsk::Off),
                ask_fallback: ExecSecurity::Full,
            });
        };
        if let Some(d) = &file.defaults {
            tighten(d.security, d.ask);
        }
        for key in [ALL_AGENTS, agent_id.as_str()] {
            if let Some(section) = file.agents.get(key) {
                tighten(section.security, section.ask);
            }
        }
        view.ask_fallback = [agent_id.as_str(), ALL_AGENTS]
            .iter()
            .filter_map(|k| file.agents.get(*k).and_then(|s| s.ask_fallback))
            .chain(file.defaults.as_ref().and_then(|d| d.ask_fallback))
            .next();
        for key in [ALL_AGENTS, agent_id.as_str()] {
            if let Some(section) = file.agents.get(key) {
                for entry in &section.allowlist {
                    // Checked by `load`; an error here cannot happen, but
                    // it must not be skipped silently either.
                    let compiled = CompiledEntry::compile(entry.clone()).map_err(|m| {
                        self.invalid(format!("agents.{key}.allowlist"), m.to_string())
                    })?;
                    view.entries.push(compiled);
                }
            }
        }
        Ok(view)
    }

    /// Add `entries` to `agent_id`'s allowlist (an entry equal in pattern,
    /// argPattern and args to one already there is skipped). Returns how
    /// many were added.
    pub fn add(
        &self,
        agent_id: &str,
        entries: Vec<AllowlistEntry>,
    ) -> Result<usize, ExecApprovalsError> {
        for entry in &entries {
            CompiledEntry::compile(entry.clone())
                .map_err(|m| self.invalid("pattern".to_owned(), m.to_string()))?;
        }
        self.update(|file| {
            let list = &mut file
                .agents
                .entry(agent_id.trim().to_lowercase())
                .or_default()
                .allowlist;
            let mut added = 0;
            for mut entry in entries {
                let exists = list.iter().any(|e| {
                    e.pattern == entry.pattern
                        && e.arg_pattern == entry.arg_pattern
                        && e.args == entry.args
                });
                if !exists {
                    if entry.id.is_none() {
                        entry.id = Some(crate::approval::new_approval_id());
                    }
                    if entry.added_at.is_none() {
                        entry.added_at = Some(crate::approval::now_ms());
                    }
                    list.push(entry);
                    added += 1;
                }
            }
            added
        })
    }

    /// Remove the entries of `agent_id` whose pattern or id is `key`.
    /// Returns how many were removed.
    pub fn remove(&self, agent_id: &str, key: &str) -> Result<usize, ExecApprovalsError> {
        self.update(|file| {
            let agent = agent_id.trim().to_lowercase();
            let Some(section) = file.agents.get_mut(&agent) else {
                return 0;
            };
            let before = section.allowlist.len();
            section
                .allowlist
                .retain(|e| e.pattern != key && e.id.as_deref() != Some(key));
            before - section.allowlist.len()
        })
    }

    /// Lock, load, change, check and write back atomically.
    fn update<T>(
        &self,
        change: impl FnOnce(&mut ExecApprovalsFile) -> T,
    ) -> Result<T, ExecApprovalsError> {
        let write_err = |source| ExecApprovalsError::Write {
            path: self.path.clone(),
            source,
        };
        let dir = self
            .path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or_else(|| Path::new("."));
        std::fs::create_dir_all(dir).map_err(write_err)?;
        let lock_path = self.path.with_extension("json.lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&lock_path)
            .map_err(write_err)?;
        lock.lock().map_err(write_err)?;
        let mut file = self.load()?;
        let out = change(&mut file);
        self.check(&file)?;
        let mut text =
            serde_json::to_string_pretty(&file).map_err(|e| write_err(std::io::Error::other(e)))?;
        text.push('\n');
        let tmp = self
            .path
            .with_extension(format!("json.tmp.{}", std::process::id()));
        let result = (|| {
            let mut f = OpenOptions::new()
                .create(true)
                .truncate(true)
                .write(true)
                .mode(0o600)
                .open(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, &self.path)?;
            File::open(dir)?.sync_all()
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result.map_err(write_err)?;
        drop(lock);
        Ok(out)
    }
}

#[cfg(test)]
#[path = "file_tests.rs"]
mod tests;
