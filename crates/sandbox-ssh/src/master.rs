//! Starting the OpenSSH ControlMaster with an environment built by
//! policy.
//!
//! `openssh`'s own `SessionBuilder::launch_master` starts `ssh` with the
//! whole environment of the process running Talon: model API keys and the
//! gateway token would sit in the master's environment, reach any
//! `ProxyCommand` or `LocalCommand` the user's ssh config runs, and be
//! offered to the server by a `SendEnv` line. The master is started here
//! instead: its environment is the core base of the default exec
//! environment policy (no credential-looking or Talon variable) plus
//! `SSH_AUTH_SOCK` (the client authenticates with the operator's agent;
//! the agent is never forwarded), and the command line turns off agent,
//! X11 and environment forwarding and local commands whatever the ssh
//! config says. The session is then driven over the master's mux socket.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;

use talon_exec_env::{EnvPolicy, process_env};
use talon_proc_tree::{ChildCommand, ChildEnv, ProcessGroup};

use crate::target::SshTarget;

/// The one host variable the ssh client needs beyond the core base.
const AGENT_SOCKET: &str = "SSH_AUTH_SOCK";

/// Options that hold whatever the user's ssh config says: nothing of the
/// local environment or agent leaves with the connection, and no local
/// command runs.
const FIXED_OPTIONS: [&str; 5] = [
    "ForwardAgent=no",
    "ForwardX11=no",
    "PermitLocalCommand=no",
    "SendEnv=-*",
    "BatchMode=yes",
];

/// The master's environment, from the host environment `host`.
pub(crate) fn master_env(host: Vec<(String, String)>) -> BTreeMap<String, String> {
    let agent = host
        .iter()
        .find(|(k, _)| k == AGENT_SOCKET)
        .map(|(_, v)| v.clone());
    let mut env = EnvPolicy::default().host_env(host);
    if let Some(sock) = agent {
        env.insert(AGENT_SOCKET.to_owned(), sock);
    }
    env
}

/// The master's arguments (without the program name).
pub(crate) fn master_args(target: &SshTarget, dir: &Path) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = Vec::new();
    let mut push = |a: &dyn AsRef<std::ffi::OsStr>| args.push(a.as_ref().to_owned());
    push(&"-E");
    push(&dir.join("log"));
    push(&"-S");
    push(&dir.join("master"));
    push(&"-M");
    push(&"-f");
    push(&"-N");
    push(&"-o");
    push(&"ControlPersist=yes");
    push(&"-o");
    push(&match target.host_key_policy {
        talon_sandbox_core::HostKeyPolicy::Strict => "StrictHostKeyChecking=yes",
        talon_sandbox_core::HostKeyPolicy::AcceptNew => "StrictHostKeyChecking=accept-new",
    });
    for option in FIXED_OPTIONS {
        push(&"-o");
        push(&option);
    }
    push(&"-o");
    push(&format!(
        "ConnectTimeout={}",
        target.connect_timeout.as_secs().max(1)
    ));
    if let Some(interval) = target.keepalive {
        push(&"-o");
        push(&format!(
            "ServerAliveInterval={}",
            interval.as_secs().max(1)
        ));
    }
    push(&"-p");
    push(&target.port.to_string());
    if let Some(user) = &target.user {
        push(&"-l");
        push(user);
    }
    if let Some(key) = &target.identity_file {
        // Only this key is offered.
        push(&"-o");
        push(&"IdentitiesOnly=yes");
        push(&"-i");
        push(key);
    }
    if let Some(known) = &target.known_hosts_file {
        let mut option = std::ffi::OsString::from("UserKnownHostsFile=");
        option.push(known);
        push(&"-o");
        push(&option);
    }
    // The host was validated by `SshTarget::from_settings`; `--` keeps a
    // name that starts with `-` from being read as an option all the same.
    push(&"--");
    push(&target.host);
    args
}

/// Why the master did not start.
#[derive(Debug)]
pub(crate) enum MasterError {
    /// The control directory could not be made, or `ssh` not run.
    Io(std::io::Error),
    /// `ssh` ran and refused the host's key (unknown or changed); its log.
    HostKey(String),
    /// `ssh` ran and failed otherwise; its log.
    Failed(String),
}

impl MasterError {
    /// `ssh` failed with `log`: a host-key refusal or another failure.
    /// ssh says why only in its log (every failure exits 255), so this
    /// is where its words are read, once.
    fn from_log(log: String) -> Self {
        const HOST_KEY_MARKERS: [&str; 4] = [
            "Host key verification failed",
            "REMOTE HOST IDENTIFICATION HAS CHANGED",
            "No ED25519 host key is known",
            "host key",
        ];
        if HOST_KEY_MARKERS.iter().any(|m| log.contains(m)) {
            MasterError::HostKey(log)
        } else {
            MasterError::Failed(log)
        }
    }
}

impl std::fmt::Display for MasterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MasterError::Io(e) => write!(f, "cannot start ssh: {e}"),
            MasterError::HostKey(log) | MasterError::Failed(log) => {
                write!(f, "ssh failed: {}", log.trim())
            }
        }
    }
}

impl std::error::Error for MasterError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MasterError::Io(e) => Some(e),
            MasterError::HostKey(_) | MasterError::Failed(_) => None,
        }
    }
}

/// Start a master for `target` in a fresh directory under its control
/// directory and return that directory (the master's socket is
/// `master` in it; dropping the session that owns it stops the master).
pub(crate) async fn launch_master(target: &SshTarget) -> Result<tempfile::TempDir, MasterError> {
    let dir = tempfile::Builder::new()
        .prefix(".ssh-connection")
        .tempdir_in(&target.control_dir)
        .map_err(MasterError::Io)?;
    let mut ssh = ChildCommand::new(
        "ssh",
        ChildEnv::exact(master_env(process_env())),
        ProcessGroup::Parent,
    );
    ssh.args(master_args(target, dir.path()))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // `-f`: ssh forks into the background once authenticated; this waits
    // for the foreground part only.
    let status = tokio::process::Command::from(ssh.into_std())
        .status()
        .await
        .map_err(MasterError::Io)?;
    if status.success() {
        Ok(dir)
    } else {
        let log = std::fs::read_to_string(dir.path().join("log")).unwrap_or_default();
        Err(MasterError::from_log(log))
    }
}

#[cfg(test)]
#[path = "master_tests.rs"]
mod tests;
