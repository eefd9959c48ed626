//! What an audit looks at.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use talon_config::TalonConfig;

/// Switches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AuditOptions {
    /// Also run the slow checks: the code-safety scan of every skill the
    /// agents would load.
    pub deep: bool,
}

/// Everything one audit reads. Nothing here is read from the process
/// environment by [`crate::audit`]; [`process_home_dirs`] is the helper a
/// binary uses to fill [`AuditInput::home_dirs`].
#[derive(Debug, Clone)]
pub struct AuditInput<'a> {
    /// The loaded configuration.
    pub config: &'a TalonConfig,
    /// Where it came from (a path, or `<built-in defaults>`).
    pub origin: &'a str,
    /// The config file, when there is one (its mode is checked, sandboxes
    /// must not mount it, relative paths resolve against its directory).
    pub config_file: Option<&'a Path>,
    /// The state directory (`TALON_STATE_DIR`, `~/.talon`).
    pub state_dir: &'a Path,
    /// The home directory (`~` in paths, personal skills).
    pub home: Option<&'a Path>,
    /// Every home directory whose credentials binds must not reach.
    pub home_dirs: Vec<PathBuf>,
    /// The address a running gateway listens on (it can differ from
    /// `gateway.bind` when `--bind` was given); `None`: the config's.
    pub gateway_listen: Option<SocketAddr>,
    /// The bundled skills directory (`--deep`).
    pub bundled_skills: Option<&'a Path>,
    /// `--deep`: the gateway to probe live (`None`: no probe; the
    /// gateway's own `security.audit` does not probe itself).
    pub gateway_probe: Option<crate::probe::GatewayProbe>,
    /// Switches.
    pub options: AuditOptions,
}

impl<'a> AuditInput<'a> {
    /// An audit of `config` (named `origin`) with `state_dir`, no config
    /// file, no home and default options.
    pub fn new(config: &'a TalonConfig, origin: &'a str, state_dir: &'a Path) -> Self {
        AuditInput {
            config,
            origin,
            config_file: None,
            state_dir,
            home: None,
            home_dirs: Vec::new(),
            gateway_listen: None,
            bundled_skills: None,
            gateway_probe: None,
            options: AuditOptions::default(),
        }
    }

    /// The directory relative config paths resolve against: the config
    /// file's, else the current one.
    pub(crate) fn config_dir(&self) -> PathBuf {
        self.config_file
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("."))
    }

    /// The config file as an absolute path (what sandboxes must not mount).
    pub(crate) fn config_file_abs(&self) -> Option<PathBuf> {
        self.config_file
            .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()))
    }
}

/// The home directories of this process (Talon's `home_dir()` and
/// `$HOME`, deduplicated), as the sandbox checks need them.
pub fn process_home_dirs() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for home in [
        talon_config::home_dir(),
        std::env::var_os("HOME").map(PathBuf::from),
    ]
    .into_iter()
    .flatten()
    {
        if !out.contains(&home) {
            out.push(home);
        }
    }
    out
}
