//! Cross-session visibility: what the session tools of each agent may see,
//! as `TalonConfig::session_visibility` gives the policy they apply
//! (`tools.sessions.visibility`, the sandbox clamp, `tools.agentToAgent`),
//! judged with the runtime's sandbox decision per agent.

use talon_gateway_protocol::AuditSeverity;
use talon_sessions::Visibility;

use crate::findings::Findings;
use crate::input::AuditInput;
use crate::tools::AgentTable;

pub(crate) fn check(input: &AuditInput<'_>, tables: &[AgentTable], out: &mut Findings) {
    let policy = input.config.session_visibility();
    let a2a = &policy.agent_to_agent;
    let wildcard = a2a.allow.iter().any(|a| a.trim() == "*");
    if a2a.enabled && wildcard {
        out.push(
            "talon.sessions.agent_to_agent_wildcard",
            AuditSeverity::Warn,
            "tools.agentToAgent.allow lists every agent (`*`)",
            "tools.agentToAgent is enabled with `*` in allow: a session of any agent may reach the sessions of every other agent its visibility covers, including agents added later.",
            "List the agents that must talk to each other by id in tools.agentToAgent.allow, or disable tools.agentToAgent.",
        );
    }
    let configured = policy.visibility;
    // Sessions on the host see as configured; sandboxed ones are clamped
    // to their own tree.
    let (host_vis, _) = policy.effective(false);
    let (sandboxed_vis, clamped) = policy.effective(true);
    let host_agents: Vec<&str> = tables
        .iter()
        .filter(|t| t.host_sessions())
        .map(|t| t.agent.as_str())
        .collect();
    let cross_agent = if a2a.enabled {
        if a2a.allow.is_empty() {
            "enabled but no agent is listed, so no session reaches another agent's".to_owned()
        } else {
            format!("enabled for {}", a2a.allow.join(", "))
        }
    } else {
        "off: no session reaches another agent's".to_owned()
    };
    let widened = host_vis >= Visibility::Agent && !host_agents.is_empty();
    let (severity, title) = if widened {
        (
            AuditSeverity::Warn,
            format!(
                "session tools of unsandboxed sessions see `{}` sessions",
                host_vis.as_str()
            ),
        )
    } else {
        (
            AuditSeverity::Info,
            format!(
                "session tools see `{}` sessions ({} configured)",
                if host_agents.is_empty() {
                    sandboxed_vis.as_str()
                } else {
                    host_vis.as_str()
                },
                configured.as_str()
            ),
        )
    };
    out.push(
        "talon.sessions.visibility",
        severity,
        title,
        format!(
            "tools.sessions.visibility is `{}`{}: sessions on the host (agents {}) see `{}`; sandboxed sessions see `{}`{}. Cross-agent (tools.agentToAgent): {cross_agent}.{}",
            configured.as_str(),
            if input
                .config
                .tools
                .as_ref()
                .and_then(|t| t.sessions.as_ref())
                .and_then(|s| s.visibility)
                .is_none()
            {
                " (the default)"
            } else {
                ""
            },
            if host_agents.is_empty() {
                "none".to_owned()
            } else {
                host_agents.join(", ")
            },
            host_vis.as_str(),
            sandboxed_vis.as_str(),
            if clamped {
                " (clamped to their own tree)"
            } else {
                ""
            },
            if widened {
                " A session of one sender can list and read the sessions (messages and tool results) of other senders."
            } else {
                ""
            }
        ),
        if widened {
            "Set tools.sessions.visibility to \"tree\" (the default) or \"self\", or sandbox those agents' sessions (a sandboxed session is clamped to its tree)."
        } else {
            "Nothing to do; keep tools.sessions.visibility at \"tree\" or \"self\" for agents that take messages from several senders."
        },
    );
}
