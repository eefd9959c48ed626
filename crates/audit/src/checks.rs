//! The table of every check id the audit can emit.

/// One check the audit runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckInfo {
    /// The stable id (OpenClaw's where OpenClaw checks the same
    /// condition, `talon.*` otherwise).
    pub id: &'static str,
    /// Its severity, or the severities it can have (`warn/critical`).
    pub severity: &'static str,
    /// What it finds.
    pub what: &'static str,
}

const fn check(id: &'static str, severity: &'static str, what: &'static str) -> CheckInfo {
    CheckInfo { id, severity, what }
}

/// Every check id, in report-table order.
pub const CHECKS: &[CheckInfo] = &[
    check(
        "fs.config.perms_writable",
        "critical",
        "the config file is writable by group or others",
    ),
    check(
        "fs.config.perms_world_readable",
        "warn/critical",
        "the config file is readable by others (critical when it holds plain-text secrets)",
    ),
    check(
        "fs.config.perms_group_readable",
        "warn",
        "the config file is readable by its group",
    ),
    check("fs.config.symlink", "warn", "the config file is a symlink"),
    check(
        "fs.state_dir.perms_world_writable",
        "critical",
        "the state directory is writable by others",
    ),
    check(
        "fs.state_dir.perms_group_writable",
        "critical",
        "the state directory is writable by its group",
    ),
    check(
        "fs.state_dir.perms_readable",
        "warn",
        "the state directory is readable by group or others",
    ),
    check(
        "fs.state_dir.symlink",
        "warn",
        "the state directory is a symlink",
    ),
    check(
        "talon.fs.gateway_token.perms_readable",
        "warn",
        "the generated gateway token file is readable by group or others",
    ),
    check(
        "talon.config.unenforced_restrictions",
        "warn",
        "acceptUnenforced drops OpenClaw restrictions Talon does not enforce",
    ),
    check(
        "sandbox.dangerous_bind_mount",
        "critical",
        "a sandbox bind mounts a blocked path, a home, a directory holding credentials (or a parent of one) or Talon's own state",
    ),
    check(
        "sandbox.bind_mount_non_absolute",
        "warn",
        "a sandbox bind source is not an absolute host path",
    ),
    check(
        "talon.sandbox.bind_refused",
        "warn",
        "a sandbox bind the sandbox refuses (bad spec or option, propagation, system or reserved target, outside the allowed roots)",
    ),
    check(
        "talon.sandbox.dangerous_workspace",
        "critical",
        "a workspace Talon mounts into the sandbox is a home, holds credentials, covers a blocked path or reaches Talon's state",
    ),
    check(
        "sandbox.dangerous_network_mode",
        "critical",
        "a sandbox network is `host` or joins another container's namespace (`container:*`, even when a dangerously* switch allows it)",
    ),
    check(
        "sandbox.dangerous_seccomp_profile",
        "critical",
        "`seccompProfile: unconfined`",
    ),
    check(
        "sandbox.dangerous_apparmor_profile",
        "critical",
        "`apparmorProfile: unconfined`",
    ),
    check(
        "talon.sandbox.dangerous_capabilities",
        "critical",
        "`privileged`, `capAdd`, or a `capDrop` without `ALL`",
    ),
    check(
        "config.insecure_or_dangerous_flags",
        "warn",
        "a `dangerously*` switch is on",
    ),
    check(
        "sandbox.docker_config_mode_off",
        "warn",
        "sandbox Docker settings are configured for an agent whose sandbox mode is off",
    ),
    check(
        "talon.sandbox.mode_off",
        "warn",
        "an agent's sandbox mode is `off`: every session's tools act on the host",
    ),
    check(
        "tools.exec.security_full_configured",
        "warn/critical",
        "`exec` is reachable with `tools.exec.security: full` (critical when some session runs it on the host)",
    ),
    check(
        "tools.exec.fs_tools_disabled_but_exec_enabled",
        "warn",
        "file tools are denied but `exec`, which can do what they do, is not",
    ),
    check(
        "talon.tools.effective",
        "info",
        "an agent's effective tools that can write, execute or reach the network (one finding per agent)",
    ),
    check(
        "gateway.bind_no_auth",
        "warn",
        "the gateway is bound beyond loopback without a configured token (Talon's gateway refuses to start, so it is not an exposure)",
    ),
    check(
        "talon.gateway.bind_beyond_loopback",
        "warn",
        "the gateway listens beyond loopback (auth is always on, but the transport is plain HTTP/WebSocket)",
    ),
    check(
        "gateway.tools_invoke_http.dangerous_allow",
        "warn/critical",
        "`gateway.tools.allow` takes tools off `POST /tools/invoke`'s default deny list (critical beyond loopback)",
    ),
    check(
        "talon.secrets.gateway_token_in_config",
        "warn",
        "a gateway token is written in plain text in the config file",
    ),
    check(
        "talon.mcp.literal_secret",
        "warn",
        "an MCP server's env or headers hold a literal secret instead of a `${VAR}` reference",
    ),
    check(
        "talon.exec.env.policy",
        "info",
        "an agent's effective exec environment policy (inherit mode, patterns, names of set variables; never values)",
    ),
    check(
        "talon.exec.env.inherit_all",
        "warn",
        "`tools.exec.env.inherit: all` (global or an agent's): every host variable but the credential patterns reaches exec children",
    ),
    check(
        "talon.exec.env.include_credentials",
        "info",
        "`includeOnly` names credential-looking variables (no effect: the credential patterns apply first)",
    ),
    check(
        "talon.exec.env.literal_secret",
        "warn",
        "`tools.exec.env.set` holds a literal value under a credential-looking name",
    ),
    check(
        "talon.egress.private_network_opt_in",
        "warn",
        "a private-network opt-in: web fetch/search `ssrfAllowlist`, an MCP server's `allowPrivateNetwork`, `cron.webhookSsrfAllowlist`",
    ),
    check(
        "talon.sandbox.network_egress",
        "warn",
        "a Docker sandbox network other than `none`: direct egress no SSRF guard sees",
    ),
    check(
        "talon.hooks.cannot_run",
        "warn",
        "a configured command hook cannot run (missing program, not executable, bad cwd, bad config)",
    ),
    check(
        "talon.tools.surfaces",
        "info",
        "per agent: the risky tools each gateway surface serves (WebSocket, `/mcp`, `POST /tools/invoke` minus its deny list)",
    ),
    check(
        "talon.sessions.visibility",
        "info/warn",
        "what the session tools see (`tools.sessions.visibility`, the sandbox clamp, `tools.agentToAgent`); warn when unsandboxed sessions see other senders' sessions (`agent`, `all`)",
    ),
    check(
        "talon.gateway.owner_allow_wildcard",
        "critical",
        "`*` in `gateway.auth.ownerAllowFrom` or `commands.ownerAllowFrom`: every relayed sender is the owner",
    ),
    check(
        "talon.sessions.agent_to_agent_wildcard",
        "warn",
        "`tools.agentToAgent` is enabled with `*` in `allow`",
    ),
    check(
        "talon.gateway.probe",
        "info",
        "`--deep`: whether a gateway answers at the configured address, its status, whether auth is required",
    ),
    check(
        "talon.gateway.probe_no_auth",
        "critical",
        "`--deep`: the probed gateway answers an authenticated endpoint without a token",
    ),
    check(
        "talon.gateway.degraded",
        "warn",
        "`--deep`: the running gateway reports `degraded` (hooks that cannot run)",
    ),
    check(
        "talon.cron.cap_wider_than_policy",
        "warn",
        "a stored cron job's tool cap holds tools its agent's current policy no longer gives",
    ),
    check(
        "skills.code_safety",
        "info/warn/critical",
        "`--deep`: the skills scanner found suspicious or dangerous code in a skill",
    ),
    check(
        "skills.code_safety.scan_failed",
        "warn",
        "`--deep`: the skills scanner could not read every file of a skill",
    ),
    check(
        "talon.audit.incomplete",
        "warn",
        "a part of the setup could not be read, so it is unaudited",
    ),
];

#[cfg(test)]
#[path = "checks_tests.rs"]
mod tests;
