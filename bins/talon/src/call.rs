//! `talon tools call`: one call through the full gate on the host.

use std::fmt::Write as _;
use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::sync::Arc;

use anyhow::{Context as _, Result, anyhow, bail};
use serde_json::{Value, json};
use talon_hooks::Requester;
use talon_hooks::approval::{
    ApprovalBroker, ApprovalDecision, ApprovalEvent, ApprovalRequest, ApprovalResolution,
    ResolveOutcome, SqliteApprovalBroker, display_text,
};
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, RuntimeBuilder};
use talon_tool_catalog::{CancellationToken, ContentBlock, normalize_tool_name};
use tokio::sync::broadcast;

use crate::Status;
use crate::cli::ContextArgs;
use crate::commands::{config_dir, load_config, run_context};

/// How approval requests are answered in this process.
#[derive(Debug, Clone, Copy)]
enum Answer {
    /// `--approve DECISION`.
    Fixed(ApprovalDecision),
    /// Ask on the terminal.
    Prompt,
    /// Nobody can answer: unresolved approvals deny.
    Nobody,
}

/// The SQLite broker under the state dir (so `allow-always` grants given
/// here or by the gateway apply), answered by this process.
struct CliBroker {
    inner: Arc<SqliteApprovalBroker>,
    answer: Answer,
}

#[async_trait::async_trait]
impl ApprovalBroker for CliBroker {
    async fn request(
        &self,
        request: ApprovalRequest,
        abort: &CancellationToken,
    ) -> ApprovalResolution {
        let remembered = self.inner.is_remembered(&request);
        if !remembered {
            match self.answer {
                Answer::Nobody => {
                    let _ = writeln!(
                        std::io::stderr().lock(),
                        "talon: `{}` requires approval (\"{}\"); no terminal is attached, so it is denied as unresolved (answer it with --approve allow-once|allow-always|deny)",
                        request.tool_name,
                        request.title
                    );
                    return ApprovalResolution::decided(ApprovalDecision::Timeout);
                }
                Answer::Fixed(decision) => {
                    if !request.allowed_decisions.contains(&decision) {
                        let _ = writeln!(
                            std::io::stderr().lock(),
                            "talon: this approval does not offer {} (it offers {}); denying",
                            decision.as_str(),
                            request
                                .allowed_decisions
                                .iter()
                                .map(|d| d.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        );
                    }
                    spawn_answerer(
                        self.inner.subscribe(),
                        Arc::clone(&self.inner),
                        move |req| {
                            Some(if req.allowed_decisions.contains(&decision) {
                                decision
                            } else {
                                ApprovalDecision::Deny
                            })
                        },
                    );
                }
                Answer::Prompt => {
                    spawn_answerer(self.inner.subscribe(), Arc::clone(&self.inner), prompt);
                }
            }
        }
        self.inner.request(request, abort).await
    }

    fn resolve(
        &self,
        approval_id: &str,
        decision: ApprovalDecision,
        binding: Option<&talon_hooks::approval::ApprovalBinding>,
    ) -> ResolveOutcome {
        self.inner.resolve(approval_id, decision, binding)
    }

    fn pending(&self) -> Vec<ApprovalRequest> {
        self.inner.pending()
    }

    fn subscribe(&self) -> broadcast::Receiver<ApprovalEvent> {
        self.inner.subscribe()
    }
}

/// Answer the next request announced on `events` with what `decide` says.
fn spawn_answerer(
    mut events: broadcast::Receiver<ApprovalEvent>,
    broker: Arc<SqliteApprovalBroker>,
    decide: impl Fn(&ApprovalRequest) -> Option<ApprovalDecision> + Send + Sync + 'static,
) {
    let decide = Arc::new(decide);
    tokio::spawn(async move {
        while let Ok(event) = events.recv().await {
            if let ApprovalEvent::Requested(req) = event {
                let decide = Arc::clone(&decide);
                let asked = req.clone();
                let decision = tokio::task::spawn_blocking(move || decide(&asked))
                    .await
                    .ok()
                    .flatten()
                    .unwrap_or(ApprovalDecision::Deny);
                broker.resolve(&req.id, decision, Some(&req.binding()));
                return;
            }
        }
    });
}

/// Ask on the terminal (stderr for the question, stdin for the answer).
fn prompt(req: &ApprovalRequest) -> Option<ApprovalDecision> {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "\nApproval requested by `{}` for `{}` ({:?})\n  {}\n  {}",
        display_text(&req.plugin_id),
        req.tool_name,
        req.severity,
        display_text(&req.title),
        display_text(&req.description)
    );
    if let Some(command) = &req.command {
        let _ = writeln!(
            err,
            "  command (exactly what runs):\n    {}",
            talon_hooks::approval::display_command(command)
        );
    }
    if let Some(env) = &req.env {
        let _ = writeln!(err, "  environment the call sets (exactly what runs):");
        for (key, value) in env {
            let _ = writeln!(
                err,
                "    {}={}",
                talon_hooks::approval::display_command(key),
                talon_hooks::approval::display_command(value)
            );
        }
    }
    let _ = writeln!(err, "  params: {}", req.params_preview);
    let choices: Vec<&str> = req.allowed_decisions.iter().map(|d| d.as_str()).collect();
    let _ = write!(err, "Answer [{}] (default deny): ", choices.join(" / "));
    let _ = err.flush();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).ok()?;
    let answer = match line.trim() {
        "o" | "once" | "y" | "yes" => "allow-once",
        "a" | "always" => "allow-always",
        other => other,
    };
    ApprovalDecision::parse(answer).filter(|d| req.allowed_decisions.contains(d))
}

fn parse_answer(approve: Option<&str>) -> Result<Answer> {
    match approve {
        Some(text) => match ApprovalDecision::parse(text.trim()) {
            Some(d) if d.is_user_decision() => Ok(Answer::Fixed(d)),
            _ => bail!("--approve must be allow-once, allow-always or deny, not `{text}`"),
        },
        None if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() => {
            Ok(Answer::Prompt)
        }
        None => Ok(Answer::Nobody),
    }
}

/// A `talon tools call` / `talon mcp call` request.
pub(crate) struct CallRequest<'a> {
    /// The tool name.
    pub(crate) name: &'a str,
    /// The arguments (a JSON object, as text).
    pub(crate) params: &'a str,
    /// `--approve`.
    pub(crate) approve: Option<&'a str>,
    /// `--workspace`.
    pub(crate) workspace: Option<&'a std::path::Path>,
    /// `--json`.
    pub(crate) json: bool,
    /// Start the agent's MCP servers before assembling the table (and stop
    /// them after the call).
    pub(crate) start_mcp: bool,
}

pub(crate) fn tools_call(
    ctx: &ContextArgs,
    req: &CallRequest<'_>,
    out: &mut String,
) -> Result<Status> {
    let CallRequest {
        name,
        params,
        approve,
        workspace,
        json,
        start_mcp,
    } = *req;
    let arguments: Value = serde_json::from_str(params).context("--params is not valid JSON")?;
    if !arguments.is_object() {
        bail!("--params must be a JSON object, e.g. '{{\"path\": \"README.md\"}}'");
    }
    let answer = parse_answer(approve)?;
    if matches!(answer, Answer::Fixed(ApprovalDecision::AllowAlways)) && ctx.session.is_none() {
        bail!(
            "--approve allow-always stores a grant that later calls in the same session reuse; name the session explicitly with --session KEY (the default is the agent's main session, which a running gateway shares)"
        );
    }
    let loaded = load_config(ctx)?;
    let state_dir = talon_config::state_dir();
    let broker = SqliteApprovalBroker::open_in_state_dir(&state_dir).map_err(|e| anyhow!("{e}"))?;
    let broker = CliBroker {
        inner: Arc::new(broker),
        answer,
    };
    let mut builder = RuntimeBuilder::from_config(&loaded.config, &config_dir(ctx))
        .map_err(|e| anyhow!("{}: {e}", loaded.origin))?
        .broker(Arc::new(broker));
    if let Some(file) = crate::commands::config_file(ctx) {
        builder = builder.config_file(file);
    }
    if normalize_tool_name(name) == "cron" {
        // The local job store; this process runs no agent turns, so a job
        // started with `run` is recorded as failed with the reason.
        let db = state_dir.join(talon_tasks::DB_FILE_NAME);
        std::fs::create_dir_all(&state_dir)
            .with_context(|| format!("cannot create {}", state_dir.display()))?;
        let service = talon_cron::CronService::open(
            &db,
            Arc::new(NoAgentRunner),
            talon_cron::CronOptions::from_config(&loaded.config.cron_config()),
        )
        .map_err(|e| anyhow!("{e}"))?;
        builder = builder.cron_service(service);
    }
    let runtime = builder
        .build()
        .map_err(|e| anyhow!("{}: {e}", loaded.origin))?;
    let run = run_context(ctx, &loaded.config)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let mut spec = RunSpec::new(run);
    spec.requester = Some(requester(ctx));
    spec.workspace = match workspace {
        Some(dir) => Some(
            std::path::absolute(dir).with_context(|| format!("--workspace {}", dir.display()))?,
        ),
        None => None,
    };
    if start_mcp {
        let reports = rt.block_on(runtime.mcp_manager().ensure_agent(&spec.context.agent_id));
        crate::mcp_cmd::report_start_errors(&reports);
    }
    let table = runtime.assemble(spec);
    let tool = normalize_tool_name(name);
    let outcome = rt.block_on(async {
        let outcome = table
            .invoke(ModelToolCall::new("cli-call", name, arguments))
            .await;
        // Observers are fire-and-forget; give them a moment before exiting.
        table
            .wait_for_observers(std::time::Duration::from_secs(10))
            .await;
        runtime.mcp_manager().shutdown().await;
        outcome
    });
    render(&tool, &outcome, json, out)
}

/// Who is asking, as far as the flags prove it: the CLI channel, and the
/// sender and owner flags when given (a missing field means "not proven").
fn requester(ctx: &ContextArgs) -> Requester {
    Requester {
        channel: Some(ctx.channel.clone().unwrap_or_else(|| "cli".to_owned())),
        sender_id: ctx.sender.clone(),
        sender_is_owner: ctx.non_owner.then_some(false),
        ..Requester::default()
    }
}

fn render(tool: &str, outcome: &InvokeOutcome, json: bool, out: &mut String) -> Result<Status> {
    let (status, doc) = match outcome {
        InvokeOutcome::Completed {
            result,
            params_rewritten,
            approval,
        } => (
            Status::Ok,
            json!({
                "tool": tool,
                "outcome": "result",
                "result": result,
                "paramsRewritten": params_rewritten,
                "approval": approval,
            }),
        ),
        InvokeOutcome::Blocked(b) => (
            Status::No,
            json!({"tool": tool, "outcome": "blocked", "blocked": b}),
        ),
        InvokeOutcome::Failed(e) => (
            Status::Error,
            json!({"tool": tool, "outcome": "error", "error": e, "message": e.to_string()}),
        ),
    };
    if json {
        out.push_str(&serde_json::to_string_pretty(&doc)?);
        out.push('\n');
        return Ok(status);
    }
    match outcome {
        InvokeOutcome::Completed { result, .. } => {
            for block in &result.content {
                match block {
                    ContentBlock::Text { text } => {
                        out.push_str(text);
                        out.push('\n');
                    }
                    ContentBlock::Image { mime_type, data } => {
                        let _ = writeln!(out, "[image {mime_type}, {} base64 chars]", data.len());
                    }
                }
            }
        }
        InvokeOutcome::Blocked(b) => {
            let by = b.source.as_deref().unwrap_or("the gate");
            let _ = writeln!(
                out,
                "{tool}: blocked by {by} ({}): {}",
                b.denied_reason.as_str(),
                b.reason
            );
            if let Some(detail) = &b.detail {
                let _ = writeln!(out, "  {}", display_text(detail));
            }
            if let Some(key) = &b.config_key {
                let _ = writeln!(out, "  to change this, edit `{key}`");
            }
        }
        InvokeOutcome::Failed(e) => {
            let _ = writeln!(out, "{tool}: error [{}]: {e}", e.code());
        }
    }
    Ok(status)
}

/// The CLI runs no agent turns: a cron run it is asked to start fails with
/// a reason that says where runs happen.
#[derive(Debug)]
struct NoAgentRunner;

#[async_trait::async_trait]
impl talon_cron::AgentRunner for NoAgentRunner {
    async fn run_isolated(
        &self,
        _run: talon_cron::IsolatedRun,
    ) -> Result<talon_cron::RunReport, talon_cron::RunFailure> {
        Err(talon_cron::RunFailure::permanent(
            "no agent runner in this process: `talon tools call` runs no agent turns; jobs run in an embedding agent or the gateway",
        ))
    }

    async fn system_event(
        &self,
        _event: talon_cron::SystemEventRequest,
    ) -> Result<(), talon_cron::RunFailure> {
        Err(talon_cron::RunFailure::permanent(
            "no agent runner in this process to deliver a system event",
        ))
    }
}
