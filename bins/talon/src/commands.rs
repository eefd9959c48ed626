//! The subcommands.

use std::fmt::Write as _;

use anyhow::{Context as _, Result, anyhow, bail};
use serde::Serialize;
use serde_json::{Value, json};
use talon_config::{ConfigError, Loaded, TalonConfig, resolve_config_path};
use talon_runtime::RunSandbox;
use talon_schema_dialects::{Dialect, NormalizeOptions, dialect_for, normalize_schema};
use talon_tool_catalog::{CORE_TOOLS, Profile, ToolSpec, core_tool_specs, normalize_tool_name};
use talon_tool_policy::{PolicyEngine, RunContext, SubagentKind, ToolUniverse};

use crate::Status;
use crate::cli::{
    Cli, Command, ConfigCommand, ContextArgs, PolicyCommand, SandboxCommand, SkillsCommand,
    ToolsCommand,
};
use crate::table;

pub(crate) fn run(cli: &Cli, out: &mut String) -> Result<Status> {
    match &cli.command {
        Command::Tools(ToolsCommand::List { profile, json }) => {
            tools_list(profile.as_deref(), *json, out)
        }
        Command::Tools(ToolsCommand::Schema { name, json, strict }) => {
            tools_schema(&cli.ctx, name, *json, *strict, out)
        }
        Command::Tools(ToolsCommand::Call {
            name,
            params,
            approve,
            workspace,
            json,
        }) => crate::call::tools_call(
            &cli.ctx,
            &crate::call::CallRequest {
                name,
                params,
                approve: approve.as_deref(),
                workspace: workspace.as_deref(),
                json: *json,
                start_mcp: name.contains("__"),
            },
            out,
        ),
        Command::Mcp(c) => crate::mcp_cmd::run(&cli.ctx, c, out),
        Command::Security(crate::cli::SecurityCommand::Audit {
            deep,
            json,
            fix,
            target,
        }) => crate::security_cmd::audit(&cli.ctx, *deep, *json, *fix, target, out),
        Command::Policy(PolicyCommand::Explain { json }) => policy_explain(&cli.ctx, *json, out),
        Command::Policy(PolicyCommand::Check { tool, json }) => {
            policy_check(&cli.ctx, tool, *json, out)
        }
        Command::Config(ConfigCommand::Validate { json }) => config_validate(&cli.ctx, *json, out),
        Command::Skills(SkillsCommand::List { workspace, json }) => {
            crate::skills_cmd::skills_list(&cli.ctx, workspace.as_deref(), *json, out)
        }
        Command::Skills(SkillsCommand::Prompt { workspace, json }) => {
            crate::skills_cmd::skills_prompt(&cli.ctx, workspace.as_deref(), *json, out)
        }
        Command::Skills(SkillsCommand::Scan { path, json }) => {
            crate::skills_cmd::skills_scan(path, *json, out)
        }
        Command::Sandbox(SandboxCommand::Ls { json }) => {
            crate::sandbox_manage::sandbox_ls(&cli.ctx, *json, out)
        }
        Command::Sandbox(SandboxCommand::Rm { names, all, json }) => {
            crate::sandbox_manage::sandbox_rm(&cli.ctx, names, *all, *json, out)
        }
        Command::Sandbox(SandboxCommand::Recreate { all, json }) => {
            crate::sandbox_manage::sandbox_recreate(&cli.ctx, *all, *json, out)
        }
        Command::Sandbox(SandboxCommand::Prune { dry_run, all, json }) => {
            crate::sandbox_prune_cmd::sandbox_prune(&cli.ctx, *all, *dry_run, *json, out)
        }
        Command::Sandbox(SandboxCommand::Explain { json }) => {
            crate::sandbox_cmd::sandbox_explain(&cli.ctx, *json, out)
        }
        Command::Sandbox(SandboxCommand::Validate { json }) => {
            crate::sandbox_cmd::sandbox_validate(&cli.ctx, *json, out)
        }
        Command::Sandbox(SandboxCommand::Resolve { path, write, json }) => {
            crate::sandbox_cmd::sandbox_resolve(&cli.ctx, path, *write, *json, out)
        }
        Command::Cron(c) => match &c.target.gateway {
            Some(_) if !matches!(c.command, crate::cli::CronCommand::Next { .. }) => {
                crate::gateway_cmd::cron_remote(&c.target.with_config(&cli.ctx), &c.command, out)
            }
            _ if !matches!(c.command, crate::cli::CronCommand::Next { .. }) => {
                refuse_shared_state(&cli.ctx, "cron", "add --gateway URL (a fleet member)")?;
                crate::cron_cmd::run(&cli.ctx, &c.command, out)
            }
            _ => crate::cron_cmd::run(&cli.ctx, &c.command, out),
        },
        Command::Tasks(c) => match &c.target.gateway {
            Some(_) => {
                crate::gateway_cmd::tasks_remote(&c.target.with_config(&cli.ctx), &c.command, out)
            }
            None => {
                refuse_shared_state(&cli.ctx, "tasks", "add --gateway URL (a fleet member)")?;
                crate::tasks_cmd::run(&c.command, out)
            }
        },
        Command::Sessions(c) => {
            refuse_shared_state(
                &cli.ctx,
                "sessions",
                "ask a fleet member: talon gateway call sessions.list",
            )?;
            crate::sessions_cmd::run(c, out)
        }
        Command::Memory(c) => crate::memory_cmd::run(&cli.ctx, c, out),
        Command::Gateway(c) => crate::gateway_cmd::run(&cli.ctx, c, out),
        Command::Approvals(a) => match &a.command {
            crate::cli::ApprovalsCommand::Allowlist { command } => {
                crate::approvals_cmd::allowlist(command, &talon_config::state_dir(), out)
            }
            other => crate::gateway_cmd::approvals(&a.target.with_config(&cli.ctx), other, out),
        },
        Command::Config(ConfigCommand::Schema) => {
            let schema = talon_config::config_schema();
            out.push_str(&serde_json::to_string_pretty(&schema)?);
            out.push('\n');
            Ok(Status::Ok)
        }
    }
}

/// The directory relative paths in the config resolve against: the config
/// file's directory, else the current one.
pub(crate) fn config_dir(ctx: &ContextArgs) -> std::path::PathBuf {
    use std::path::{Path, PathBuf};
    resolve_config_path(ctx.config.as_deref())
        .path()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The config file the flags name (`--config`, `TALON_CONFIG`, the
/// default), when there is one: sandboxes keep every mount away from it.
pub(crate) fn config_file(ctx: &ContextArgs) -> Option<std::path::PathBuf> {
    let path = resolve_config_path(ctx.config.as_deref())
        .path()?
        .to_path_buf();
    Some(std::path::absolute(&path).unwrap_or(path))
}

pub(crate) fn load_config(ctx: &ContextArgs) -> Result<Loaded> {
    let location = resolve_config_path(ctx.config.as_deref());
    location.load().map_err(|e| anyhow!("{e}"))
}

/// The run the flags describe. `sandboxed` is only the `--sandboxed`
/// flag (a forced sandbox); whether the run is sandboxed is decided by
/// [`run_sandbox`] (or by the runtime at assembly), never here.
pub(crate) fn run_context(ctx: &ContextArgs, config: &TalonConfig) -> Result<RunContext> {
    let agent = ctx
        .agent
        .clone()
        .unwrap_or_else(|| config.default_agent_id())
        .trim()
        .to_lowercase();
    // An agent the config does not have would be evaluated with defaults
    // that apply to no real run: say so instead.
    let ids = config.agent_ids();
    let known = if ids.is_empty() {
        agent == talon_config::DEFAULT_AGENT_ID
    } else {
        ids.contains(&agent)
    };
    if !known {
        let have = if ids.is_empty() {
            talon_config::DEFAULT_AGENT_ID.to_owned()
        } else {
            ids.join(", ")
        };
        bail!(
            "--agent `{agent}` is not a configured agent (configured: {have}); name one of them or add it to agents.list"
        );
    }
    let mut run = RunContext::new(agent.clone());
    if let Some(session) = &ctx.session {
        run.session_key = session.trim().to_owned();
    }
    run.model_provider = ctx.provider.clone();
    run.model = ctx.model.clone();
    run.sender_id = ctx.sender.clone();
    run.sender_is_owner = ctx.non_owner.then_some(false);
    run.group_id = ctx.group.clone();
    run.message_provider = ctx.channel.clone();
    // A session key naming a group conversation supplies the channel and
    // group the gateway would hold the session to.
    if let Some((channel, group)) = talon_sessions::group_conversation(&run.session_key) {
        run.message_provider.get_or_insert(channel);
        run.group_id.get_or_insert(group);
    }
    run.channel_account = ctx.account.clone();
    run.sender_name = ctx.sender_name.clone();
    run.sender_username = ctx.sender_username.clone();
    run.sender_e164 = ctx.sender_e164.clone();
    run.sandboxed = ctx.sandboxed;
    if ctx.subagent {
        run.subagent = Some(if ctx.leaf {
            SubagentKind::Leaf
        } else {
            SubagentKind::Orchestrator
        });
        run.inherited = ctx.parent_tools.clone();
    }
    Ok(run)
}

/// The run's sandbox decision, by the runtime's one function
/// ([`talon_runtime::resolve_run_sandbox`]), with the state and home dirs a
/// run of this process would use.
pub(crate) fn run_sandbox(config: &TalonConfig, run: &RunContext) -> RunSandbox {
    let home = talon_config::home_dir();
    talon_runtime::resolve_run_sandbox(config, run, &talon_config::state_dir(), home.as_deref())
}

/// The run the flags describe with the effective sandbox decision applied,
/// as the runtime applies it before the policy's `sandbox` layer.
fn decided_run(ctx: &ContextArgs, config: &TalonConfig) -> Result<(RunContext, RunSandbox)> {
    let mut run = run_context(ctx, config)?;
    let sandbox = run_sandbox(config, &run);
    run.sandboxed = sandbox.sandboxed;
    Ok((run, sandbox))
}

fn context_json(run: &RunContext) -> Value {
    json!({
        "agent": run.agent_id,
        "session": run.session_key,
        "provider": run.model_provider,
        "model": run.model,
        "sender": run.sender_id,
        "senderIsOwner": run.sender_is_owner,
        "group": run.group_id,
        "channel": run.message_provider,
        "account": run.channel_account,
        "senderName": run.sender_name,
        "senderUsername": run.sender_username,
        "senderE164": run.sender_e164,
        "sandboxed": run.sandboxed,
        "subagent": run.subagent,
        "parentTools": run.inherited,
    })
}

fn engine_for(loaded: &Loaded) -> Result<PolicyEngine> {
    PolicyEngine::new(&loaded.config.policy_config())
        .with_context(|| format!("in {}", loaded.origin))
}

fn tools_list(profile: Option<&str>, json: bool, out: &mut String) -> Result<Status> {
    let profile: Option<Profile> = profile
        .map(str::parse)
        .transpose()
        .map_err(|e| anyhow!("{e}"))?;
    let selected: Vec<&talon_tool_catalog::CoreTool> = CORE_TOOLS
        .iter()
        .filter(|t| match profile {
            None | Some(Profile::Full) => true,
            Some(p) => t.profiles.contains(&p),
        })
        .collect();
    let specs: Vec<ToolSpec> = selected
        .iter()
        .filter_map(|t| ToolSpec::core(t.id))
        .collect();
    if json {
        let tools: Vec<Value> = selected
            .iter()
            .zip(&specs)
            .map(|(t, s)| {
                json!({
                    "name": t.id,
                    "provided": core_tool_provider(t.id).is_some(),
                    "providedBy": core_tool_provider(t.id),
                    "label": s.label,
                    "section": t.section.id(),
                    "profiles": t.profiles.iter().map(|p| p.id()).collect::<Vec<_>>(),
                    "ownerOnly": s.owner_only,
                    "executionMode": s.execution_mode,
                })
            })
            .collect();
        let doc = json!({ "profile": profile.map(|p| p.id()), "tools": tools });
        out.push_str(&serde_json::to_string_pretty(&doc)?);
        out.push('\n');
        return Ok(Status::Ok);
    }
    let rows: Vec<Vec<String>> = selected
        .iter()
        .zip(&specs)
        .map(|(t, s)| {
            let profiles: Vec<&str> = t.profiles.iter().map(|p| p.id()).collect();
            vec![
                t.id.to_owned(),
                t.section.id().to_owned(),
                if profiles.is_empty() {
                    "-".to_owned()
                } else {
                    profiles.join(",")
                },
                match core_tool_provider(t.id) {
                    Some(PROVIDED_BY_RUNTIME) => "yes".to_owned(),
                    Some(_) => "gateway only".to_owned(),
                    None => "no".to_owned(),
                },
                s.label.clone(),
            ]
        })
        .collect();
    out.push_str(&table::render(
        &["TOOL", "SECTION", "PROFILES", "IN BUILD", "LABEL"],
        &rows,
    ));
    let missing = selected
        .iter()
        .filter(|t| core_tool_provider(t.id).is_none())
        .count();
    let gateway_only = selected
        .iter()
        .filter(|t| core_tool_provider(t.id) == Some(PROVIDED_BY_GATEWAY))
        .count();
    if gateway_only > 0 {
        let _ = writeln!(
            out,
            "\n{gateway_only} of these {} catalog tools are provided by the gateway only \
             (IN BUILD: gateway only): its sessions get them (`talon gateway run`); \
             a run of this CLI or an embedder does not.",
            selected.len()
        );
    }
    if missing > 0 {
        let _ = writeln!(
            out,
            "\n{missing} of these {} catalog tools are not in this build (IN BUILD: no): \
             the policy knows their names, but no agent can call them yet.",
            selected.len()
        );
    }
    Ok(Status::Ok)
}

fn tools_schema(
    ctx: &ContextArgs,
    name: &str,
    json: bool,
    strict: bool,
    out: &mut String,
) -> Result<Status> {
    let Some(provider) = ctx.provider.as_deref() else {
        bail!("`tools schema` needs --provider (e.g. openai, anthropic, google, xai)");
    };
    let tool = normalize_tool_name(name);
    let Some(spec) = ToolSpec::core(&tool) else {
        let _ = writeln!(out, "{tool}: not a core tool (see `talon tools list`)");
        return Ok(Status::No);
    };
    let mut dialect = dialect_for(provider, ctx.model.as_deref());
    if strict {
        if dialect != Dialect::OpenAi {
            bail!(
                "--strict applies to OpenAI providers only (resolved dialect: {})",
                dialect.as_str()
            );
        }
        dialect = Dialect::OpenAiStrict;
    }
    let normalized = normalize_schema(&spec.parameters, dialect, &NormalizeOptions::default());
    if json {
        let doc = json!({
            "tool": tool,
            "provider": provider,
            "dialect": dialect.as_str(),
            "emptyObjectArgs": normalized.empty_object_args,
            "parameters": normalized.schema,
        });
        out.push_str(&serde_json::to_string_pretty(&doc)?);
    } else {
        let _ = writeln!(
            out,
            "# {tool} for {provider} (dialect {})",
            dialect.as_str()
        );
        out.push_str(&serde_json::to_string_pretty(&normalized.schema)?);
    }
    out.push('\n');
    Ok(Status::Ok)
}

fn policy_explain(ctx: &ContextArgs, json: bool, out: &mut String) -> Result<Status> {
    let loaded = load_config(ctx)?;
    let engine = engine_for(&loaded)?;
    let (run, sandbox) = decided_run(ctx, &loaded.config)?;
    let universe = ToolUniverse::from_specs(&core_tool_specs());
    let outcome = engine.explain(&run, &universe);
    if json {
        let mut doc = serde_json::to_value(&outcome)?;
        if let Value::Object(map) = &mut doc {
            map.insert("context".to_owned(), context_json(&run));
            map.insert("sandbox".to_owned(), sandbox.summary());
            map.insert("config".to_owned(), Value::String(loaded.origin.clone()));
            map.insert("notInBuild".to_owned(), json!(not_in_build(&outcome.tools)));
            map.insert(
                "droppedRestrictions".to_owned(),
                json!(loaded.config.dropped_restrictions),
            );
        }
        out.push_str(&serde_json::to_string_pretty(&doc)?);
        out.push('\n');
        return Ok(Status::Ok);
    }
    let _ = writeln!(
        out,
        "config: {}\nagent: {}  session: {}  provider: {}  sandboxed: {}{}",
        loaded.origin,
        run.agent_id,
        run.session_key,
        run.model_provider.as_deref().unwrap_or("-"),
        if run.sandboxed { "yes" } else { "no" },
        match run.subagent {
            Some(SubagentKind::Leaf) => "  subagent: leaf",
            Some(SubagentKind::Orchestrator) => "  subagent: yes",
            None => "",
        }
    );
    let _ = writeln!(out, "sandbox: {}", sandbox.reason);
    let who: Vec<String> = [
        ("channel", &run.message_provider),
        ("account", &run.channel_account),
        ("group", &run.group_id),
        ("sender", &run.sender_id),
        ("name", &run.sender_name),
        ("username", &run.sender_username),
        ("e164", &run.sender_e164),
    ]
    .iter()
    .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}: {v}")))
    .collect();
    if !who.is_empty() {
        let _ = writeln!(out, "{}", who.join("  "));
    }
    out.push('\n');
    for (i, layer) in outcome.layers.iter().enumerate() {
        let state = if !layer.active {
            "inactive".to_owned()
        } else if layer.removed.is_empty() {
            "removed nothing".to_owned()
        } else {
            format!("removed {}", layer.removed.len())
        };
        let _ = writeln!(
            out,
            "{:>2}. {:<17} {:<44} {state}",
            i + 1,
            layer.id,
            layer.label
        );
        if !layer.removed.is_empty() {
            let rows: Vec<Vec<String>> = layer
                .removed
                .iter()
                .map(|r| {
                    vec![
                        format!("      {}", r.tool),
                        r.rule.clone(),
                        format!("change: {}", r.config_key),
                    ]
                })
                .collect();
            let rendered = table::render(&["      TOOL", "RULE", "CONFIG KEY"], &rows);
            out.push_str(&rendered);
        }
    }
    let _ = writeln!(
        out,
        "\ntools ({}): {}",
        outcome.tools.len(),
        outcome.tools.join(", ")
    );
    if !loaded.config.dropped_restrictions.is_empty() {
        let _ = writeln!(
            out,
            "not enforced (dropped knowingly by acceptUnenforced): {}",
            loaded.config.dropped_restrictions.join(", ")
        );
    }
    let absent = not_in_build(&outcome.tools);
    if !absent.is_empty() {
        let _ = writeln!(
            out,
            "not in this build ({}; allowed, but no agent can call them): {}",
            absent.len(),
            absent.join(", ")
        );
    }
    for w in &outcome.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    Ok(Status::Ok)
}

/// `providedBy` of a core tool the runtime's families implement in this build.
const PROVIDED_BY_RUNTIME: &str = "runtime";
/// `providedBy` of a core tool only the gateway offers (its own family:
/// the session store, the task ledger and the runners are the gateway's).
const PROVIDED_BY_GATEWAY: &str = "gateway";

/// Who provides the core tool `id` in this build: the runtime (every
/// front end), the gateway only, or nobody (`None`: not in this build).
fn core_tool_provider(id: &str) -> Option<&'static str> {
    if talon_runtime::provides_core_tool(id) {
        Some(PROVIDED_BY_RUNTIME)
    } else if talon_runtime::gateway_provides_core_tool(id) {
        Some(PROVIDED_BY_GATEWAY)
    } else {
        None
    }
}

/// The allowed core tools that this build does not implement (the
/// gateway's own tools are in the build: the gateway provides them).
fn not_in_build(tools: &[String]) -> Vec<&str> {
    tools
        .iter()
        .map(String::as_str)
        .filter(|t| talon_tool_catalog::is_core_tool(t) && core_tool_provider(t).is_none())
        .collect()
}

fn policy_check(ctx: &ContextArgs, tool: &str, json: bool, out: &mut String) -> Result<Status> {
    if tool.trim().is_empty() {
        bail!("TOOL is empty: name a tool, e.g. `talon policy check exec`");
    }
    let loaded = load_config(ctx)?;
    let engine = engine_for(&loaded)?;
    let (run, _) = decided_run(ctx, &loaded.config)?;
    let universe = ToolUniverse::from_specs(&core_tool_specs());
    let check = engine.check(&run, &universe, tool);
    // A name that is no core tool and has no MCP `server__tool` shape is
    // evaluated as a plugin tool would be, but said to be unknown (a typo
    // must not read as "add it to alsoAllow").
    let known = talon_tool_catalog::is_core_tool(&check.tool) || check.tool.contains("__");
    let names: Vec<&str> = CORE_TOOLS.iter().map(|t| t.id).collect();
    let suggestion = (!known)
        .then(|| talon_config::did_you_mean(&check.tool, &names))
        .flatten();
    if json {
        let mut doc = serde_json::to_value(&check)?;
        if let Value::Object(map) = &mut doc {
            if known {
                map.insert(
                    "provided".to_owned(),
                    Value::Bool(
                        !talon_tool_catalog::is_core_tool(&check.tool)
                            || core_tool_provider(&check.tool).is_some(),
                    ),
                );
                if talon_tool_catalog::is_core_tool(&check.tool) {
                    map.insert(
                        "providedBy".to_owned(),
                        json!(core_tool_provider(&check.tool)),
                    );
                }
            } else {
                map.insert("known".to_owned(), Value::Bool(false));
                map.insert("suggestion".to_owned(), json!(suggestion));
            }
        }
        out.push_str(&serde_json::to_string_pretty(&doc)?);
        out.push('\n');
    } else if !known {
        let hint = suggestion.map_or_else(String::new, |s| format!(" (did you mean `{s}`?)"));
        let _ = writeln!(
            out,
            "{}: no core tool of this build has this name{hint}; a plugin tool of that name would be {}",
            check.tool,
            match &check.removed_by {
                None => "allowed".to_owned(),
                Some(r) => format!("removed by layer `{}` ({})", r.layer, r.rule),
            }
        );
    } else {
        match &check.removed_by {
            None => {
                let absent = match core_tool_provider(&check.tool) {
                    Some(PROVIDED_BY_RUNTIME) => "",
                    Some(_) => "; provided by the gateway only: a gateway session can call it",
                    None => "; not in this build: no agent can call it yet",
                };
                let _ = writeln!(
                    out,
                    "{}: allowed for agent {} ({}){absent}",
                    check.tool, run.agent_id, run.session_key
                );
            }
            Some(r) => {
                let _ = writeln!(
                    out,
                    "{}: denied by layer `{}`: {}\n  to change this, edit `{}` in {}",
                    check.tool, r.layer, r.rule, r.config_key, loaded.origin
                );
            }
        }
    }
    Ok(if check.allowed && known {
        Status::Ok
    } else {
        Status::No
    })
}

/// One `config validate` finding, as printed and as JSON.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Finding {
    key_path: String,
    /// Absent for a hook that cannot run (found after the file loaded).
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    column: Option<u32>,
    message: String,
    /// A hook that cannot run: its stable code (`hook.missing_program`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'static str>,
    /// A hook that cannot run: its id.
    #[serde(skip_serializing_if = "Option::is_none")]
    hook_id: Option<String>,
    /// A hook that cannot run: its hook point (`before_tool_call`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    event: Option<&'static str>,
}

impl Finding {
    /// A finding of the loader at a line and column (or a note at a line).
    fn at(key_path: String, line: u32, column: Option<u32>, message: String) -> Self {
        Finding {
            key_path,
            line: Some(line),
            column,
            message,
            code: None,
            hook_id: None,
            event: None,
        }
    }

    fn whole_file(message: String) -> Self {
        Finding::at(String::new(), 0, Some(0), message)
    }

    /// A configured hook that cannot run.
    fn hook(p: talon_hooks::HookProblem) -> Self {
        Finding {
            key_path: p.key_path,
            line: None,
            column: None,
            message: format!(
                "hook `{}` ({}) cannot run [{}]: {}",
                p.hook_id,
                p.event.as_str(),
                p.kind.code(),
                p.message
            ),
            code: Some(p.kind.code()),
            hook_id: Some(p.hook_id),
            event: Some(p.event.as_str()),
        }
    }

    fn render(&self, origin: &str) -> String {
        let line = self.line.map(|l| format!(":{l}")).unwrap_or_default();
        let column = self.column.map(|c| format!(":{c}")).unwrap_or_default();
        let key = if self.key_path.is_empty() {
            String::new()
        } else {
            format!("{}: ", self.key_path)
        };
        format!("{origin}{line}{column}: {key}{}", self.message)
    }
}

fn config_validate(ctx: &ContextArgs, json: bool, out: &mut String) -> Result<Status> {
    let location = resolve_config_path(ctx.config.as_deref());
    let mut origin = location
        .path()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "<built-in defaults>".to_owned());
    let mut errors: Vec<Finding> = Vec::new();
    let mut notices: Vec<Finding> = Vec::new();
    match location.load() {
        Ok(loaded) => {
            // Policy compilation is part of validity (e.g. profiles).
            if let Err(e) = PolicyEngine::new(&loaded.config.policy_config()) {
                errors.push(Finding::whole_file(e.to_string()));
            }
            // Every hook must be able to run: the check the runtime and the
            // gateway make when they load this file.
            match talon_runtime::check_hooks(&loaded.config, &config_dir(ctx)) {
                Ok(problems) => errors.extend(problems.into_iter().map(Finding::hook)),
                Err(e) => errors.push(Finding::whole_file(e.to_string())),
            }
            // Docker settings the backend would refuse at the first
            // sandboxed call (sizes, ulimits, image): refused here instead.
            for e in crate::sandbox_cmd::docker_setting_errors(ctx, &loaded.config) {
                errors.push(Finding::whole_file(format!(
                    "{} (sandbox of {})",
                    e.message,
                    e.scopes.join(", ")
                )));
            }
            notices = loaded
                .notices
                .into_iter()
                .map(|n| Finding::at(n.key_path, n.line, None, n.message))
                .collect();
            origin = loaded.origin;
        }
        Err(ConfigError::Io { path, source }) => {
            bail!("cannot read config file {}: {source}", path.display())
        }
        Err(err) => {
            errors = err
                .issues()
                .iter()
                .map(|i| {
                    Finding::at(
                        i.key_path.clone(),
                        i.line,
                        Some(i.column),
                        i.message.clone(),
                    )
                })
                .collect();
            if errors.is_empty() {
                errors.push(Finding::whole_file(err.to_string()));
            }
        }
    }
    let status = if errors.is_empty() {
        Status::Ok
    } else {
        Status::No
    };
    if json {
        let doc = json!({
            "config": origin,
            "valid": status == Status::Ok,
            "errors": errors,
            "notices": notices,
        });
        out.push_str(&serde_json::to_string_pretty(&doc)?);
        out.push('\n');
        return Ok(status);
    }
    for e in &errors {
        let _ = writeln!(out, "{}", e.render(&origin));
    }
    for n in &notices {
        let _ = writeln!(out, "note: {}", n.render(&origin));
    }
    if status == Status::Ok {
        let _ = writeln!(out, "{origin}: valid");
    } else {
        let n = errors.len();
        let _ = writeln!(
            out,
            "{origin}: invalid ({n} error{})",
            if n == 1 { "" } else { "s" }
        );
    }
    Ok(status)
}

/// The offline store readers (`talon cron|tasks|sessions` without a
/// gateway) read the state directory's SQLite files. When the config keeps
/// the state in PostgreSQL (`state.backend: "postgres"`) those files are
/// not the fleet's state: refuse rather than show a stale or empty view.
/// A config that does not load is left to the command (it reports it).
fn refuse_shared_state(ctx: &crate::cli::ContextArgs, command: &str, instead: &str) -> Result<()> {
    let Ok(loaded) = load_config(ctx) else {
        return Ok(());
    };
    if loaded
        .config
        .state
        .as_ref()
        .is_some_and(|s| s.backend == talon_config::sections::state::StateBackend::Postgres)
    {
        bail!(
            "state.backend is \"postgres\" in {}: the gateways keep their state in PostgreSQL, not in the state directory's files that `talon {command}` reads offline; {instead}",
            loaded.origin
        );
    }
    Ok(())
}
