//! [`SshTarget`]: where and how to connect, from the resolved
//! [`SshSettings`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use talon_sandbox_core::{HostKeyPolicy, SandboxError, SshSettings};

/// One remote host and how to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshTarget {
    /// Host name or address.
    pub host: String,
    /// Port.
    pub port: u16,
    /// Remote user (`None`: the ssh client's default).
    pub user: Option<String>,
    /// Private key file.
    pub identity_file: Option<PathBuf>,
    /// Known-hosts file (`None`: the ssh client's default).
    pub known_hosts_file: Option<PathBuf>,
    /// Host-key policy.
    pub host_key_policy: HostKeyPolicy,
    /// Remote directory holding per-scope workspaces.
    pub workspace_root: String,
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// Limit for backend-internal remote commands.
    pub command_timeout: Duration,
    /// Keepalive interval (`None`: off).
    pub keepalive: Option<Duration>,
    /// Where the control sockets live (short: a unix socket path has
    /// about 108 bytes).
    pub control_dir: PathBuf,
}

fn expand_home(raw: &str, home: Option<&Path>) -> PathBuf {
    match (raw.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(raw),
    }
}

impl SshTarget {
    /// The target of `settings`; `home` expands `~/` in key and
    /// known-hosts paths. Refuses settings without a host.
    pub fn from_settings(
        settings: &SshSettings,
        home: Option<&Path>,
    ) -> Result<Self, SandboxError> {
        let host = settings.host.clone().ok_or_else(|| {
            SandboxError::config(
                "the ssh sandbox backend needs a host: set agents.defaults.sandbox.ssh.host \
                 (and user, identityFile, knownHostsFile as needed)"
                    .to_owned(),
            )
        })?;
        // The host and user reach the ssh command line: refuse what
        // config validation refuses, even when the settings were built
        // by hand.
        let checked = talon_sandbox_core::SshConfig {
            host: Some(host.clone()),
            user: settings.user.clone(),
            ..Default::default()
        };
        if let Some((field, problem)) = checked.validate().into_iter().next() {
            return Err(SandboxError::config(format!(
                "sandbox.ssh.{field}: {problem}"
            )));
        }
        if let Some(root_problem) =
            talon_sandbox_core::remote_root_problem(&settings.workspace_root)
        {
            return Err(SandboxError::config(format!(
                "sandbox.ssh.workspaceRoot: {root_problem}"
            )));
        }
        Ok(SshTarget {
            host,
            port: settings.port,
            user: settings.user.clone(),
            identity_file: settings
                .identity_file
                .as_deref()
                .map(|p| expand_home(p, home)),
            known_hosts_file: settings
                .known_hosts_file
                .as_deref()
                .map(|p| expand_home(p, home)),
            host_key_policy: settings.host_key_policy,
            workspace_root: settings.workspace_root.clone(),
            connect_timeout: Duration::from_secs(settings.connect_timeout_seconds),
            command_timeout: Duration::from_secs(settings.command_timeout_seconds),
            keepalive: (settings.keepalive_seconds > 0)
                .then(|| Duration::from_secs(settings.keepalive_seconds)),
            control_dir: std::env::temp_dir(),
        })
    }

    /// A target with defaults for everything but host, port and user
    /// (tests and tools build on it).
    pub fn new(host: impl Into<String>, port: u16, user: Option<String>) -> Self {
        let defaults = SshSettings::default();
        SshTarget {
            host: host.into(),
            port,
            user,
            identity_file: None,
            known_hosts_file: None,
            host_key_policy: HostKeyPolicy::Strict,
            workspace_root: defaults.workspace_root,
            connect_timeout: Duration::from_secs(defaults.connect_timeout_seconds),
            command_timeout: Duration::from_secs(defaults.command_timeout_seconds),
            keepalive: Some(Duration::from_secs(defaults.keepalive_seconds)),
            control_dir: std::env::temp_dir(),
        }
    }

    /// `user@host:port` for messages and `talon sandbox explain`.
    pub fn display(&self) -> String {
        match &self.user {
            Some(user) => format!("{user}@{}:{}", self.host, self.port),
            None => format!("{}:{}", self.host, self.port),
        }
    }

    /// The remote directory of one sandbox.
    pub fn sandbox_dir(&self, name: &str) -> String {
        format!("{}/{name}", self.workspace_root)
    }
}

#[cfg(test)]
#[path = "target_tests.rs"]
mod tests;
