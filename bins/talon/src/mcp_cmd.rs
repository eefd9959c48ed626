//! `talon mcp tools` and `talon mcp call`.

use std::fmt::Write as _;
use std::io::Write as _;

use anyhow::{Context as _, Result, anyhow};
use serde_json::json;
use talon_mcp::StartReport;
use talon_runtime::{RunSpec, RuntimeBuilder};
use talon_tool_catalog::{ExecutionMode, normalize_tool_name};

use crate::Status;
use crate::cli::{ContextArgs, McpCommand};
use crate::commands::{config_dir, load_config, run_context};
use crate::table;

pub(crate) fn run(ctx: &ContextArgs, command: &McpCommand, out: &mut String) -> Result<Status> {
    match command {
        McpCommand::Tools { json } => mcp_tools(ctx, *json, out),
        McpCommand::Call {
            name,
            params,
            approve,
            json,
        } => crate::call::tools_call(
            ctx,
            &crate::call::CallRequest {
                name,
                params,
                approve: approve.as_deref(),
                workspace: None,
                json: *json,
                start_mcp: true,
            },
            out,
        ),
    }
}

/// Say on stderr which servers did not start (the listing goes on
/// without them).
pub(crate) fn report_start_errors(reports: &[StartReport]) {
    let mut err = std::io::stderr().lock();
    for r in reports {
        if let Some(e) = &r.error {
            let _ = writeln!(err, "talon: mcp server `{}` did not start: {e}", r.server);
        }
    }
}

fn mode(m: ExecutionMode) -> &'static str {
    match m {
        ExecutionMode::Parallel => "parallel",
        ExecutionMode::Serial => "sequential",
    }
}

fn mcp_tools(ctx: &ContextArgs, json: bool, out: &mut String) -> Result<Status> {
    let loaded = load_config(ctx)?;
    let runtime = RuntimeBuilder::from_config(&loaded.config, &config_dir(ctx))
        .and_then(RuntimeBuilder::build)
        .map_err(|e| anyhow!("{}: {e}", loaded.origin))?;
    let run = run_context(ctx, &loaded.config)?;
    let agent = run.agent_id.clone();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let manager = runtime.mcp_manager();
    let reports = rt.block_on(manager.ensure_agent(&agent));
    let materialized = manager.materialize(&agent);
    let table_ = runtime.assemble(RunSpec::new(run));
    rt.block_on(manager.shutdown());
    report_start_errors(&reports);
    let failed = reports.iter().any(|r| r.error.is_some());
    let rows: Vec<_> = materialized
        .tools
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "server": t.server,
                "originalName": t.original_name,
                "executionMode": mode(t.execution_mode),
                "allowed": table_.contains(&normalize_tool_name(&t.name)),
            })
        })
        .collect();
    if json {
        out.push_str(&serde_json::to_string_pretty(&rows)?);
        out.push('\n');
    } else if rows.is_empty() {
        let _ = writeln!(
            out,
            "agent `{agent}` has no MCP tools (configure `mcp.servers` or `agents.list[].mcp.servers`)"
        );
    } else {
        let body: Vec<Vec<String>> = materialized
            .tools
            .iter()
            .zip(&rows)
            .map(|(t, row)| {
                vec![
                    t.name.clone(),
                    t.original_name.clone(),
                    t.server.clone(),
                    mode(t.execution_mode).to_owned(),
                    if row["allowed"] == true { "yes" } else { "no" }.to_owned(),
                ]
            })
            .collect();
        out.push_str(&table::render(
            &["NAME", "ORIGINAL", "SERVER", "MODE", "ALLOWED"],
            &body,
        ));
        for line in &materialized.renamed {
            let _ = writeln!(out, "note: {line}");
        }
    }
    Ok(if failed { Status::No } else { Status::Ok })
}
