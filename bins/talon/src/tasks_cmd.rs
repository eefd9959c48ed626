//! `talon tasks list|show|cancel` on the local ledger.

use std::fmt::Write as _;

use anyhow::{Context as _, Result};
use serde_json::json;
use talon_tasks::{TaskError, TaskFilter, TaskLedger, TaskRecord, TaskRuntime, TaskStatus};

use crate::Status;
use crate::cli::TasksCommand;
use crate::table;

fn open() -> Result<TaskLedger> {
    let path = crate::cron_cmd::db_path();
    TaskLedger::open(&path)
        .with_context(|| format!("cannot open the task ledger at {}", path.display()))
}

/// A refusal (exit 1): `{"error": …}` with `--json`, else `error: …`.
pub(crate) fn refused(message: String, json: bool, out: &mut String) -> Result<Status> {
    if json {
        out.push_str(&serde_json::to_string_pretty(&json!({ "error": message }))?);
        out.push('\n');
    } else {
        writeln!(out, "error: {message}")?;
    }
    Ok(Status::No)
}

fn ms_text(ms: Option<i64>) -> String {
    ms.map(talon_cron::format_utc).unwrap_or_else(|| "-".into())
}

fn show_text(t: &TaskRecord, out: &mut String) -> Result<()> {
    let rows: Vec<(&str, String)> = vec![
        ("id", t.task_id.clone()),
        ("runtime", t.runtime.to_string()),
        ("status", t.status.to_string()),
        ("task", t.task.clone()),
        ("label", t.label.clone().unwrap_or_default()),
        ("run id", t.run_id.clone().unwrap_or_default()),
        ("owner", t.owner_key.clone()),
        ("requester", t.requester_session_key.clone()),
        ("created", ms_text(Some(t.created_at))),
        ("started", ms_text(t.started_at)),
        ("ended", ms_text(t.ended_at)),
        ("progress", t.progress_summary.clone().unwrap_or_default()),
        ("error", t.error.clone().unwrap_or_default()),
    ];
    for (k, v) in rows {
        writeln!(out, "{k:<10} {v}")?;
    }
    Ok(())
}

pub(crate) fn run(cmd: &TasksCommand, out: &mut String) -> Result<Status> {
    match cmd {
        TasksCommand::List {
            status,
            runtime,
            limit,
            json,
        } => {
            let status = match status.as_deref().map(str::parse::<TaskStatus>).transpose() {
                Ok(s) => s,
                Err(e) => return refused(format!("--status: {e}"), *json, out),
            };
            let runtime = match runtime
                .as_deref()
                .map(str::parse::<TaskRuntime>)
                .transpose()
            {
                Ok(r) => r,
                Err(e) => return refused(format!("--runtime: {e}"), *json, out),
            };
            let tasks = open()?.list(&TaskFilter {
                status,
                runtime,
                owner_key: None,
                limit: *limit,
            })?;
            if *json {
                out.push_str(&serde_json::to_string_pretty(&tasks)?);
                out.push('\n');
                return Ok(Status::Ok);
            }
            if tasks.is_empty() {
                writeln!(out, "no tasks")?;
                return Ok(Status::Ok);
            }
            let rows: Vec<Vec<String>> = tasks
                .iter()
                .map(|t| {
                    vec![
                        t.task_id.clone(),
                        t.runtime.to_string(),
                        t.status.to_string(),
                        t.label.clone().unwrap_or_else(|| t.task.clone()),
                        ms_text(Some(t.created_at)),
                    ]
                })
                .collect();
            out.push_str(&table::render(
                &["ID", "RUNTIME", "STATUS", "LABEL", "CREATED (UTC)"],
                &rows,
            ));
            Ok(Status::Ok)
        }
        TasksCommand::Show { id, json } => match open()?.get(id)? {
            Some(t) => {
                if *json {
                    out.push_str(&serde_json::to_string_pretty(&t)?);
                    out.push('\n');
                } else {
                    show_text(&t, out)?;
                }
                Ok(Status::Ok)
            }
            None => refused(
                format!("no task with id `{id}`; see `talon tasks list`"),
                *json,
                out,
            ),
        },
        TasksCommand::Cancel { id, reason, json } => match open()?.cancel(id, reason.as_deref()) {
            Ok(t) => {
                if *json {
                    out.push_str(&serde_json::to_string_pretty(&t)?);
                    out.push('\n');
                } else {
                    writeln!(out, "cancelled {}", t.task_id)?;
                }
                Ok(Status::Ok)
            }
            Err(e @ (TaskError::NotFound { .. } | TaskError::IllegalTransition { .. })) => {
                refused(e.to_string(), *json, out)
            }
            Err(e) => Err(e.into()),
        },
    }
}
