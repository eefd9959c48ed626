//! The exec environment policy (`tools.exec.env` and each agent's): the
//! effective policy per agent, names only, and the settings that widen
//! what a child sees.
//!
//! The policy is `talon-exec-env`'s `EnvPolicy` as the config builds it
//! (`TalonConfig::exec_env_policy`); which names look like credentials is
//! that crate's `is_credential_like` (its built-in exclude patterns). The
//! built-in excludes and Talon's own variables always apply, whatever
//! `exclude` says, so an empty `exclude` widens nothing and is not a
//! finding.

use talon_config::TalonConfig;
use talon_exec_env::{InheritMode, is_credential_like};
use talon_gateway_protocol::AuditSeverity;

use crate::findings::Findings;
use crate::input::AuditInput;
use crate::secrets::literal_value;

/// One layer of an agent's env policy as written: its key and its parts.
struct Layer<'a> {
    key: String,
    inherit: Option<InheritMode>,
    include_only: Option<&'a [String]>,
    set: Vec<(&'a String, &'a String)>,
}

fn layers<'a>(
    config: &'a TalonConfig,
    global: &'a talon_exec_env::ExecEnvConfig,
    agent: &str,
    agent_env: Option<&'a talon_exec_env::AgentExecEnvConfig>,
) -> Vec<Layer<'a>> {
    let mut out = vec![Layer {
        key: "tools.exec.env".to_owned(),
        // The global default (`core`) is no setting of the operator's.
        inherit: (global.inherit != InheritMode::Core).then_some(global.inherit),
        include_only: global.include_only.as_deref(),
        set: global.set.iter().collect(),
    }];
    if let Some(env) = agent_env {
        let base = config
            .agent_key(agent)
            .unwrap_or_else(|| format!("agents.{agent}"));
        out.push(Layer {
            key: format!("{base}.tools.exec.env"),
            inherit: env.inherit,
            include_only: env.include_only.as_deref(),
            set: env.set.iter().collect(),
        });
    }
    out
}

/// A `set` entry with a credential-looking name and a literal value.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct LiteralSet {
    /// Its layer's key (`tools.exec.env`, `agents.list[1].tools.exec.env`).
    pub(crate) layer: String,
    /// `exec` for the global layer, `exec-<agent>` for an agent's.
    pub(crate) owner: String,
    pub(crate) name: String,
    pub(crate) value: String,
}

/// Every `set` entry `talon.exec.env.literal_secret` reports, once each.
pub(crate) fn literal_set_secrets(config: &TalonConfig) -> Vec<LiteralSet> {
    let exec = config.exec_config();
    let mut out: Vec<LiteralSet> = Vec::new();
    for agent in crate::audited_agents(config) {
        let agent_env = config
            .agent(&agent)
            .and_then(|a| a.tools)
            .and_then(|t| t.exec)
            .and_then(|e| e.env);
        for (i, layer) in layers(config, &exec.env, &agent, agent_env.as_ref())
            .into_iter()
            .enumerate()
        {
            for (name, value) in layer.set {
                let found = LiteralSet {
                    layer: layer.key.clone(),
                    owner: if i == 0 {
                        "exec".to_owned()
                    } else {
                        format!("exec-{agent}")
                    },
                    name: name.clone(),
                    value: value.clone(),
                };
                if is_credential_like(name) && literal_value(value) && !out.contains(&found) {
                    out.push(found);
                }
            }
        }
    }
    out
}

pub(crate) fn check(input: &AuditInput<'_>, out: &mut Findings) {
    let config = input.config;
    let exec = config.exec_config();
    // Global findings are reported once, not once per agent.
    let mut reported: Vec<String> = Vec::new();
    for agent in crate::audited_agents(config) {
        let policy = match config.exec_env_policy(&agent) {
            Ok(p) => p,
            Err(e) => {
                out.incomplete(
                    &format!("agent `{agent}`'s exec environment policy"),
                    format!("tools.exec.env: {e}"),
                );
                continue;
            }
        };
        // Names only: the process environment is not read, so no value
        // (and no inherited name) can reach the report.
        let explain = policy.explain(Vec::new());
        let list = |v: &[String]| {
            if v.is_empty() {
                "none".to_owned()
            } else {
                v.join(", ")
            }
        };
        let include_only = if explain.include_only.is_empty() {
            "not set".to_owned()
        } else {
            explain
                .include_only
                .iter()
                .map(|layer| format!("[{}]", layer.join(", ")))
                .collect::<Vec<_>>()
                .join(" and ")
        };
        out.push(
            "talon.exec.env.policy",
            AuditSeverity::Info,
            format!(
                "agent `{agent}`: exec environment inherits `{}`, {} configured variable(s)",
                explain.inherit.as_str(),
                explain.set_names.len()
            ),
            format!(
                "Host children (exec, stdio MCP servers, command hooks) of agent `{agent}` start from inherit `{}` minus the built-in credential patterns ({}) and Talon's own variables ({}); configured exclude: {}; includeOnly: {include_only}; set (names only): {}. Sandboxed runs inherit no host variable and get only the set variables.",
                explain.inherit.as_str(),
                explain.default_exclude.join(", "),
                explain.talon_read.join(", "),
                list(&explain.exclude),
                list(&explain.set_names),
            ),
            format!(
                "`talon sandbox explain --agent {agent}` shows the names a child would inherit now; keep inherit at \"core\" or \"none\"."
            ),
        );
        let agent_env = config
            .agent(&agent)
            .and_then(|a| a.tools)
            .and_then(|t| t.exec)
            .and_then(|e| e.env);
        for layer in layers(config, &exec.env, &agent, agent_env.as_ref()) {
            if reported.contains(&layer.key) {
                continue;
            }
            reported.push(layer.key.clone());
            layer_findings(&layer, out);
        }
    }
}

fn layer_findings(layer: &Layer<'_>, out: &mut Findings) {
    let key = &layer.key;
    if layer.inherit == Some(InheritMode::All) {
        out.push(
            "talon.exec.env.inherit_all",
            AuditSeverity::Warn,
            format!("{key}.inherit is \"all\""),
            format!(
                "{key}.inherit = \"all\": every variable of the process that runs Talon reaches host exec children, stdio MCP servers and command hooks, except the built-in credential patterns and Talon's own variables. A secret under a name no pattern matches (a connection string, a webhook URL with a key in it) reaches every command the model runs."
            ),
            format!(
                "Set {key}.inherit to \"core\" (the default) or \"none\", and give a child what it needs by name in {key}.set."
            ),
        );
    }
    let creds: Vec<String> = layer
        .include_only
        .unwrap_or_default()
        .iter()
        .enumerate()
        .filter(|(_, p)| is_credential_like(p))
        .map(|(i, p)| format!("{key}.includeOnly[{i}] = `{p}`"))
        .collect();
    if !creds.is_empty() {
        out.push(
            "talon.exec.env.include_credentials",
            AuditSeverity::Info,
            format!("{key}.includeOnly names credential-looking variables"),
            format!(
                "{}: the built-in credential patterns are applied before includeOnly, so such a variable is still never inherited; the entry has no effect and suggests a child is expected to get a credential from the host environment.",
                creds.join(", ")
            ),
            "Remove the entries; a credential a child really needs is given by name in the `set` of the one agent that needs it (an MCP server takes it as `${VAR}` in its env).",
        );
    }
    let literal: Vec<String> = layer
        .set
        .iter()
        .filter(|(name, value)| is_credential_like(name) && literal_value(value))
        .map(|(name, _)| format!("{key}.set.{name}"))
        .collect();
    if !literal.is_empty() {
        out.push(
            "talon.exec.env.literal_secret",
            AuditSeverity::Warn,
            format!("{key}.set holds a credential in plain text"),
            format!(
                "{} {} a literal value under a credential-looking name: it is in the config file, and every exec child, stdio MCP server and command hook of the agents it applies to (sandboxed ones included) gets it, so any command the model runs can read it.",
                literal.join(", "),
                if literal.len() == 1 { "holds" } else { "hold" }
            ),
            "Move it to the secrets file (`talon security audit --fix` writes `${secret:NAME}` in its place), or better remove it from set and give the credential only to the tool that needs it (an MCP server's env), or to a sandboxed agent that needs it, never to every exec child.",
        );
    }
}
