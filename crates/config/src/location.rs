//! Where the config file and the state directory are.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::ConfigError;
use crate::load::{Loaded, load};
use crate::model::TalonConfig;

/// The environment variable naming the config file.
pub const CONFIG_ENV: &str = "TALON_CONFIG";
/// The environment variable naming the state directory.
pub const STATE_DIR_ENV: &str = "TALON_STATE_DIR";
/// The directory under the home directory holding Talon's config and state.
pub const DEFAULT_DIR_NAME: &str = ".talon";
/// The config file's name inside [`DEFAULT_DIR_NAME`].
pub const DEFAULT_CONFIG_FILE: &str = "talon.json";

/// Where the config file is, and how it was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigLocation {
    /// Given on the command line (`--config`); it must exist.
    Explicit(PathBuf),
    /// Named by `TALON_CONFIG`; it must exist.
    Env(PathBuf),
    /// `~/.talon/talon.json`; a missing file means an empty configuration.
    Default(PathBuf),
    /// Nothing given and no home directory known: an empty configuration.
    Unresolved,
}

impl ConfigLocation {
    /// The file, if there is one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            ConfigLocation::Explicit(p) | ConfigLocation::Env(p) | ConfigLocation::Default(p) => {
                Some(p)
            }
            ConfigLocation::Unresolved => None,
        }
    }

    /// Whether a missing file is an error.
    pub fn must_exist(&self) -> bool {
        matches!(self, ConfigLocation::Explicit(_) | ConfigLocation::Env(_))
    }

    /// Load the file. A missing default file (or no location at all) is an
    /// empty configuration; a missing explicit or `TALON_CONFIG` file is
    /// [`ConfigError::Io`].
    pub fn load(&self) -> Result<Loaded, ConfigError> {
        match self {
            ConfigLocation::Explicit(p) | ConfigLocation::Env(p) => load(p),
            ConfigLocation::Default(p) => match std::fs::metadata(p) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    Ok(empty(p.display().to_string()))
                }
                _ => load(p),
            },
            ConfigLocation::Unresolved => Ok(empty("<built-in defaults>".to_owned())),
        }
    }
}

fn empty(origin: String) -> Loaded {
    Loaded {
        config: TalonConfig::default(),
        notices: Vec::new(),
        origin,
    }
}

/// [`resolve_config_path_from`] with the process environment
/// (`TALON_CONFIG`, `TALON_STATE_DIR`, and `HOME` or else `USERPROFILE`).
pub fn resolve_config_path(explicit: Option<&Path>) -> ConfigLocation {
    resolve_config_path_from(
        explicit,
        std::env::var_os(CONFIG_ENV),
        std::env::var_os(STATE_DIR_ENV),
        home_dir(),
    )
}

/// Choose the config file: `explicit` (the `--config` flag), else
/// `env_talon_config` (the value of `TALON_CONFIG`; empty counts as unset,
/// a leading `~` means `home`), else `talon.json` in the state directory
/// (`env_state_dir`, the value of `TALON_STATE_DIR` that `--state-dir`
/// sets, else `<home>/.talon`): the config moves with the state, so a
/// daemon or CLI given another state directory never reads the home
/// directory's config.
pub fn resolve_config_path_from(
    explicit: Option<&Path>,
    env_talon_config: Option<OsString>,
    env_state_dir: Option<OsString>,
    home: Option<PathBuf>,
) -> ConfigLocation {
    if let Some(p) = explicit {
        return ConfigLocation::Explicit(p.to_path_buf());
    }
    if let Some(v) = env_talon_config.filter(|v| !v.is_empty()) {
        return ConfigLocation::Env(expand_tilde(PathBuf::from(v), home.as_deref()));
    }
    if let Some(v) = env_state_dir.filter(|v| !v.is_empty()) {
        return ConfigLocation::Default(
            expand_tilde(PathBuf::from(v), home.as_deref()).join(DEFAULT_CONFIG_FILE),
        );
    }
    match home {
        Some(h) => ConfigLocation::Default(h.join(DEFAULT_DIR_NAME).join(DEFAULT_CONFIG_FILE)),
        None => ConfigLocation::Unresolved,
    }
}

/// [`state_dir_from`] with the process environment.
pub fn state_dir() -> PathBuf {
    state_dir_from(std::env::var_os(STATE_DIR_ENV), home_dir())
}

/// The state directory: `env_state_dir` (the value of `TALON_STATE_DIR`;
/// empty counts as unset, a leading `~` means `home`), else
/// `<home>/.talon`, else `.talon` relative to the working directory.
pub fn state_dir_from(env_state_dir: Option<OsString>, home: Option<PathBuf>) -> PathBuf {
    if let Some(v) = env_state_dir.filter(|v| !v.is_empty()) {
        return expand_tilde(PathBuf::from(v), home.as_deref());
    }
    match home {
        Some(h) => h.join(DEFAULT_DIR_NAME),
        None => PathBuf::from(DEFAULT_DIR_NAME),
    }
}

/// The user's home directory: `HOME`, else `USERPROFILE` (non-empty).
pub fn home_dir() -> Option<PathBuf> {
    ["HOME", "USERPROFILE"]
        .iter()
        .filter_map(std::env::var_os)
        .find(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn expand_tilde(path: PathBuf, home: Option<&Path>) -> PathBuf {
    let Some(home) = home else {
        return path;
    };
    match path.strip_prefix("~") {
        Ok(rest) => home.join(rest),
        Err(_) => path,
    }
}

#[cfg(test)]
#[path = "location_tests.rs"]
mod tests;

/// Make `dir` the state directory of this process: when `TALON_STATE_DIR`
/// does not already name it, run the current program again with the same
/// arguments and `TALON_STATE_DIR` set to `dir` (made absolute), since the
/// environment cannot be changed safely once threads exist. Returns
/// `Ok(())` when the variable already names `dir` (the re-run, or a caller
/// that set it), so the caller goes on; on success of the re-run this
/// never returns. Every component of the program that reads the state
/// directory, or the config file inside it, then agrees with `dir`.
pub fn reexec_with_state_dir(dir: &Path) -> std::io::Result<()> {
    use talon_proc_tree::{ChildCommand, ChildEnv, ProcessGroup};
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    if std::env::var_os(STATE_DIR_ENV).as_deref() == Some(dir.as_os_str()) {
        return Ok(());
    }
    let exe = std::env::current_exe()?;
    // The same program again, so the same environment, stdio and group.
    Err(
        ChildCommand::new(exe, ChildEnv::InheritParent, ProcessGroup::Parent)
            .args(std::env::args_os().skip(1))
            .env(STATE_DIR_ENV, &dir)
            .stdin(std::process::Stdio::inherit())
            .exec()
            .into_io_error(),
    )
}
