//! File modes of the config file, the state directory and the gateway
//! token file.

use std::io::ErrorKind;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use talon_gateway_protocol::AuditSeverity;

use crate::findings::Findings;
use crate::input::AuditInput;

/// The gateway's generated token file inside the state directory (the
/// name `talon-gateway-core` uses).
pub(crate) const GATEWAY_TOKEN_FILE: &str = "gateway.token";

/// `(is a symlink, mode of what it names)`; `None` when it does not exist.
fn inspect(path: &Path, what: &str, out: &mut Findings) -> Option<(bool, u32)> {
    let link = match std::fs::symlink_metadata(path) {
        Ok(m) => m.file_type().is_symlink(),
        Err(e) if e.kind() == ErrorKind::NotFound => return None,
        Err(e) => {
            out.incomplete(what, format!("cannot stat {}: {e}", path.display()));
            return None;
        }
    };
    match std::fs::metadata(path) {
        Ok(m) => Some((link, m.permissions().mode() & 0o7777)),
        Err(e) => {
            out.incomplete(what, format!("cannot stat {}: {e}", path.display()));
            None
        }
    }
}

pub(crate) fn check(input: &AuditInput<'_>, holds_secrets: bool, out: &mut Findings) {
    if let Some(file) = input.config_file {
        config_file(file, holds_secrets, out);
    }
    state_dir(input.state_dir, out);
    let token = input.state_dir.join(GATEWAY_TOKEN_FILE);
    if let Some((_, mode)) = inspect(&token, "the gateway token file's mode", out)
        && mode & 0o077 != 0
    {
        out.push(
            "talon.fs.gateway_token.perms_readable",
            AuditSeverity::Warn,
            "the gateway token file is accessible to group or others",
            format!("{} has mode {mode:04o}: other users can read the gateway's bearer token.", token.display()),
            format!("chmod 600 {} (or `talon security audit --fix`; the gateway also tightens it when it starts).", token.display()),
        );
    }
}

fn config_file(file: &Path, holds_secrets: bool, out: &mut Findings) {
    let Some((link, mode)) = inspect(file, "the config file's mode", out) else {
        return;
    };
    let shown = file.display();
    if link {
        out.push(
            "fs.config.symlink",
            AuditSeverity::Warn,
            "the config file is a symlink",
            format!("{shown} is a symlink: whoever can change the link or its target's directory changes Talon's policy. The mode checked is the target's."),
            "Point --config / TALON_CONFIG at the real file, or replace the link with the file.",
        );
    }
    if mode & 0o022 != 0 {
        out.push(
            "fs.config.perms_writable",
            AuditSeverity::Critical,
            "the config file is writable by group or others",
            format!("{shown} has mode {mode:04o}: another user can change the tool policy, the sandbox settings and the gateway's tokens."),
            format!("chmod 600 {shown} (or `talon security audit --fix`)."),
        );
    }
    if mode & 0o004 != 0 {
        let (severity, why) = if holds_secrets {
            (
                AuditSeverity::Critical,
                "and it holds plain-text secrets (see the talon.secrets / talon.mcp findings)",
            )
        } else {
            (
                AuditSeverity::Warn,
                "so every local user can read the whole policy and any secret added to it later",
            )
        };
        out.push(
            "fs.config.perms_world_readable",
            severity,
            "the config file is readable by every user",
            format!("{shown} has mode {mode:04o}, {why}."),
            format!("chmod 600 {shown} (or `talon security audit --fix`)."),
        );
    } else if mode & 0o040 != 0 {
        out.push(
            "fs.config.perms_group_readable",
            AuditSeverity::Warn,
            "the config file is readable by its group",
            format!("{shown} has mode {mode:04o}."),
            format!("chmod 600 {shown} (or `talon security audit --fix`)."),
        );
    }
}

fn state_dir(dir: &Path, out: &mut Findings) {
    let Some((link, mode)) = inspect(dir, "the state directory's mode", out) else {
        return;
    };
    let shown = dir.display();
    if link {
        out.push(
            "fs.state_dir.symlink",
            AuditSeverity::Warn,
            "the state directory is a symlink",
            format!("{shown} is a symlink: its target is another place whose permissions decide who can change Talon's state."),
            "Set TALON_STATE_DIR to the real directory.",
        );
    }
    let fix = format!("chmod 700 {shown} (or `talon security audit --fix`).");
    if mode & 0o002 != 0 {
        out.push(
            "fs.state_dir.perms_world_writable",
            AuditSeverity::Critical,
            "the state directory is writable by every user",
            format!("{shown} has mode {mode:04o}: any local user can replace the approvals, the cron store, the gateway token or the exec allowlist."),
            fix.clone(),
        );
    }
    if mode & 0o020 != 0 {
        out.push(
            "fs.state_dir.perms_group_writable",
            AuditSeverity::Critical,
            "the state directory is writable by its group",
            format!("{shown} has mode {mode:04o}: group members can replace the approvals, the cron store, the gateway token or the exec allowlist."),
            fix.clone(),
        );
    }
    if mode & 0o055 != 0 {
        out.push(
            "fs.state_dir.perms_readable",
            AuditSeverity::Warn,
            "the state directory is open to group or others",
            format!("{shown} has mode {mode:04o}: other users can list it and read whatever inside is not itself protected (transcripts, the call journal, cron jobs)."),
            fix,
        );
    }
}
