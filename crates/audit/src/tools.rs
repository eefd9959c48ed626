//! The effective tool table of each agent (the policy engine's answer
//! under the runtime's sandbox decision) and the exec checks read from it.

use talon_gateway_protocol::AuditSeverity;
use talon_hooks::exec_approvals::ExecSecurity;
use talon_runtime::resolve_run_sandbox;
use talon_sandbox_core::SandboxMode;
use talon_tool_catalog::{Section, core_tool, core_tool_specs};
use talon_tool_policy::{PolicyEngine, PolicyOutcome, RunContext, ToolUniverse};

use crate::findings::Findings;
use crate::input::AuditInput;

/// The file tools whose denial `exec` can work around.
const FS_TOOLS: &[&str] = &["read", "write", "edit", "apply_patch"];

/// One agent's table for its main session.
#[derive(Debug)]
pub(crate) struct AgentTable {
    pub(crate) agent: String,
    /// The resolved sandbox mode (`off`, `non-main`, `all`).
    pub(crate) mode: SandboxMode,
    /// Whether the main session is sandboxed.
    pub(crate) main_sandboxed: bool,
    /// The policy's outcome for the main session (the widest session:
    /// the sandbox layer only removes).
    pub(crate) outcome: PolicyOutcome,
}

impl AgentTable {
    /// Whether some session of the agent runs its tools on the host.
    pub(crate) fn host_sessions(&self) -> bool {
        self.mode != SandboxMode::All || !self.main_sandboxed
    }
}

/// The tools a run of `run` gets, as `talon policy explain` computes them:
/// the runtime's sandbox decision, then the policy engine over the core
/// catalog.
pub(crate) fn effective(
    input: &AuditInput<'_>,
    engine: &PolicyEngine,
    mut run: RunContext,
) -> (PolicyOutcome, talon_runtime::RunSandbox) {
    let sandbox = resolve_run_sandbox(input.config, &run, input.state_dir, input.home);
    run.sandboxed = sandbox.sandboxed;
    let universe = ToolUniverse::from_specs(&core_tool_specs());
    (engine.explain(&run, &universe), sandbox)
}

pub(crate) fn agent_tables(input: &AuditInput<'_>, engine: &PolicyEngine) -> Vec<AgentTable> {
    crate::audited_agents(input.config)
        .into_iter()
        .map(|agent| {
            let (outcome, sandbox) = effective(input, engine, RunContext::new(agent.clone()));
            AgentTable {
                agent,
                mode: sandbox.config.mode,
                main_sandboxed: sandbox.sandboxed,
                outcome,
            }
        })
        .collect()
}

/// What a core tool can do, from its catalog row: execute (the runtime
/// section: `exec`, `process`, `code_execution`), reach the network (the
/// web section and `browser`), or write (any other tool that is not
/// read-only).
fn capabilities(tool: &str) -> Vec<&'static str> {
    let Some(row) = core_tool(tool) else {
        return vec!["unknown"];
    };
    let mut caps = Vec::new();
    if row.section == Section::Runtime {
        caps.push("execute");
    }
    if row.section == Section::Web || row.id == "browser" {
        caps.push("network");
    }
    if !row.read_only && row.section != Section::Runtime {
        caps.push("write");
    }
    caps
}

pub(crate) fn check(input: &AuditInput<'_>, tables: &[AgentTable], out: &mut Findings) {
    for t in tables {
        let exec = t.outcome.allows("exec");
        let policy = input.config.exec_policy(&t.agent);
        if exec && policy.security == ExecSecurity::Full {
            let (severity, where_) = if t.host_sessions() {
                (
                    AuditSeverity::Critical,
                    "on the host (some of its sessions are not sandboxed)",
                )
            } else {
                (AuditSeverity::Warn, "inside its sandbox")
            };
            out.push(
                "tools.exec.security_full_configured",
                severity,
                format!("agent `{}` can run any command with `exec`", t.agent),
                format!(
                    "Agent `{}` has `exec` and its exec security is `full` (tools.exec.security, the default, or the agent's tools.exec.security): every command the model writes runs {where_} without an allowlist or approval.",
                    t.agent
                ),
                "Set tools.exec.security to \"allowlist\" (with ask \"on-miss\") or \"deny\", or deny `exec`; sandbox the agent's sessions.",
            );
        }
        if exec {
            let removed: Vec<String> = FS_TOOLS
                .iter()
                .filter_map(|tool| {
                    t.outcome
                        .removed_by(tool)
                        .map(|r| format!("{tool} (removed by {}: {})", r.layer, r.config_key))
                })
                .collect();
            if !removed.is_empty() {
                out.push(
                    "tools.exec.fs_tools_disabled_but_exec_enabled",
                    AuditSeverity::Warn,
                    format!("agent `{}` has `exec` but not every file tool", t.agent),
                    format!(
                        "Agent `{}` keeps `exec` while {} {} denied: a shell command reads and writes the same files, so the denial does not hold.",
                        t.agent,
                        removed.join(", "),
                        if removed.len() == 1 { "is" } else { "are" }
                    ),
                    "Deny `exec` as well (tools.deny or the agent's tools.deny), or sandbox the agent with workspaceAccess \"ro\"/\"none\" so exec cannot reach the files.",
                );
            }
        }
        table(input, t, out);
        surfaces(input, t, out);
    }
}

/// The risky tools of `tools`, as `name (caps)`.
fn risky<'a>(tools: impl Iterator<Item = &'a String>) -> Vec<String> {
    tools
        .filter_map(|tool| {
            let caps = capabilities(tool);
            (!caps.is_empty()).then(|| format!("{tool} ({})", caps.join(", ")))
        })
        .collect()
}

/// `talon.tools.surfaces`: what each gateway surface offers from the
/// agent's main-session table. The WebSocket API (`tools.invoke`) and
/// `/mcp` (`tools/list`, `tools/call`) serve the session's table as it
/// is; `POST /tools/invoke` also refuses the HTTP deny list, taken from
/// `GatewayConfig::http_tool_deny`, the function the gateway builds its
/// list with.
fn surfaces(input: &AuditInput<'_>, t: &AgentTable, out: &mut Findings) {
    let deny = input.config.gateway_config().http_tool_deny();
    let session = risky(t.outcome.tools.iter());
    let http = risky(
        t.outcome
            .tools
            .iter()
            .filter(|tool| !deny.contains(&tool.to_ascii_lowercase())),
    );
    let kept_off: Vec<&String> = t
        .outcome
        .tools
        .iter()
        .filter(|tool| deny.contains(&tool.to_ascii_lowercase()))
        .collect();
    let show = |v: &[String]| {
        if v.is_empty() {
            "none".to_owned()
        } else {
            v.join(", ")
        }
    };
    out.push(
        "talon.tools.surfaces",
        AuditSeverity::Info,
        format!(
            "agent `{}`: {} risky tool(s) over WebSocket and /mcp, {} over POST /tools/invoke",
            t.agent,
            session.len(),
            http.len()
        ),
        format!(
            "WebSocket tools.invoke and /mcp tools/call (agent-scope token; /mcp tools/list with a read-only one) serve the session's table: {}. POST /tools/invoke (agent-scope token) also refuses its deny list (the default list adjusted by gateway.tools.allow and gateway.tools.deny: {}), which keeps off {}; it serves: {}.",
            show(&session),
            deny.join(", "),
            if kept_off.is_empty() {
                "none of this agent's tools".to_owned()
            } else {
                kept_off
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            show(&http)
        ),
        format!(
            "Deny what no gateway client of agent `{}` needs (tools.deny or the agent's tools.deny); add a tool to gateway.tools.deny to keep it off the HTTP surface only.",
            t.agent
        ),
    );
}

/// `talon.tools.effective`: one info finding per agent.
fn table(input: &AuditInput<'_>, t: &AgentTable, out: &mut Findings) {
    let risky: Vec<String> = t
        .outcome
        .tools
        .iter()
        .filter_map(|tool| {
            let caps = capabilities(tool);
            (!caps.is_empty()).then(|| format!("{tool} ({})", caps.join(", ")))
        })
        .collect();
    let mcp: Vec<String> = mcp_servers(input, &t.agent);
    let sandbox = match (t.mode, t.main_sandboxed) {
        (SandboxMode::All, _) => "every session sandboxed",
        (SandboxMode::NonMain, _) => "non-main sessions sandboxed, the main session on the host",
        (SandboxMode::Off, _) => "no session sandboxed",
    };
    let mcp_note = if mcp.is_empty() {
        String::new()
    } else {
        format!(
            " MCP servers whose tools are added at run time (each assumed to write, execute and reach the network): {}.",
            mcp.join(", ")
        )
    };
    out.push(
        "talon.tools.effective",
        AuditSeverity::Info,
        format!(
            "agent `{}`: {} of {} tools can write, execute or reach the network ({sandbox})",
            t.agent,
            risky.len(),
            t.outcome.tools.len()
        ),
        format!(
            "Main session tools that can write, execute or reach the network: {}.{mcp_note}",
            if risky.is_empty() {
                "none".to_owned()
            } else {
                risky.join(", ")
            }
        ),
        format!(
            "Check that agent `{}` needs each of them (`talon policy explain --agent {}` shows which layer keeps or removes a tool); deny the others.",
            t.agent, t.agent
        ),
    );
}

/// The enabled MCP servers of an agent (global and its own), by name.
fn mcp_servers(input: &AuditInput<'_>, agent: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let own = input
        .config
        .agent_mcp_sections()
        .into_iter()
        .filter(|(a, _)| a == agent)
        .map(|(_, m)| m);
    for section in input.config.mcp.iter().chain(own) {
        for (name, server) in &section.servers.0 {
            if server.is_enabled() && !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    names
}
