//! `talon cron next|list|add|remove|runs` on the local store.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context as _, Result};
use serde_json::{Value, json};
use talon_cron::{
    Creator, CronError, CronExpr, CronJob, CronStore, JobSpec, Payload, Schedule, build_job,
    format_utc, host_time_zone, parse_absolute_time_ms,
};

use crate::Status;
use crate::cli::{ContextArgs, CronCommand};
use crate::table;

const MAX_COUNT: usize = 1000;

/// The shared state database.
pub(crate) fn db_path() -> PathBuf {
    talon_config::state_dir().join(talon_tasks::DB_FILE_NAME)
}

fn now_ms() -> i64 {
    use talon_tasks::Clock as _;
    talon_tasks::SystemClock.now_ms()
}

fn open_store() -> Result<CronStore> {
    let path = db_path();
    CronStore::open(&path)
        .with_context(|| format!("cannot open the cron store at {}", path.display()))
}

/// An input error: printed (JSON or text) and exit 1.
fn invalid(err: &CronError, json: bool, out: &mut String) -> Result<Status> {
    if json {
        let mut v = json!({ "error": { "field": err.field(), "message": err.to_string() } });
        if let CronError::Quota {
            limit, config_key, ..
        } = err
        {
            v["error"]["code"] = json!(limit.code());
            v["error"]["configKey"] = json!(config_key);
        }
        if let CronError::Egress { blocked, .. } = err {
            v["error"]["code"] = json!(blocked.code());
        }
        out.push_str(&serde_json::to_string_pretty(&v)?);
        out.push('\n');
    } else {
        writeln!(out, "error: {err}")?;
    }
    Ok(Status::No)
}

fn print_json(v: &Value, out: &mut String) -> Result<Status> {
    out.push_str(&serde_json::to_string_pretty(v)?);
    out.push('\n');
    Ok(Status::Ok)
}

pub(crate) fn run(ctx: &ContextArgs, cmd: &CronCommand, out: &mut String) -> Result<Status> {
    match cmd {
        CronCommand::Next {
            expr,
            tz,
            from,
            count,
            json,
        } => next(expr, tz.as_deref(), from.as_deref(), *count, *json, out),
        CronCommand::List { all, json } => list(*all, *json, out),
        CronCommand::Add {
            name,
            at,
            every,
            cron,
            tz,
            message,
            system_event,
            tools,
            disabled,
            keep_after_run,
            idempotent,
            json,
        } => {
            let schedule = match (at, every, cron) {
                (Some(at), _, _) => Schedule::At { at: at.clone() },
                (_, Some(ms), _) => Schedule::Every {
                    every_ms: *ms,
                    anchor_ms: None,
                },
                (_, _, Some(expr)) => Schedule::Cron {
                    expr: expr.clone(),
                    tz: tz.clone(),
                    stagger_ms: None,
                },
                _ => {
                    return invalid(
                        &CronError::invalid("schedule", "give one of --at, --every or --cron"),
                        *json,
                        out,
                    );
                }
            };
            let payload = match (message, system_event) {
                (Some(m), _) => Payload::AgentTurn {
                    message: m.clone(),
                    model: None,
                    thinking: None,
                    timeout_seconds: None,
                },
                (_, Some(t)) => Payload::SystemEvent { text: t.clone() },
                _ => {
                    return invalid(
                        &CronError::invalid("payload", "give one of --message or --system-event"),
                        *json,
                        out,
                    );
                }
            };
            let spec = JobSpec {
                name: name.clone(),
                schedule: Some(schedule),
                payload: Some(payload),
                enabled: Some(!*disabled),
                delete_after_run: keep_after_run.then_some(false),
                idempotent: idempotent.then_some(true),
                tools_allow: tools.clone(),
                ..JobSpec::default()
            };
            add(ctx, spec, *json, out)
        }
        CronCommand::Remove { id, json } => {
            let removed = open_store()?.delete(id)?;
            if *json {
                print_json(&json!({ "id": id, "removed": removed }), out)?;
            } else if removed {
                writeln!(out, "removed {id}")?;
            } else {
                writeln!(
                    out,
                    "no cron job with id `{id}`; see `talon cron list --all`"
                )?;
            }
            Ok(if removed { Status::Ok } else { Status::No })
        }
        CronCommand::Runs { id, limit, json } => {
            let store = open_store()?;
            if store.get(id)?.is_none() && store.runs(id, 1)?.is_empty() {
                return invalid(&CronError::NotFound(id.clone()), *json, out);
            }
            let runs = store.runs(id, *limit)?;
            if *json {
                return print_json(&serde_json::to_value(&runs)?, out);
            }
            let rows: Vec<Vec<String>> = runs
                .iter()
                .map(|r| {
                    vec![
                        r.run_id.clone(),
                        r.status.as_str().to_owned(),
                        r.reason.clone(),
                        format_utc(r.started_at_ms),
                        r.ended_at_ms
                            .map(|e| format!("{} ms", e - r.started_at_ms))
                            .unwrap_or_else(|| "-".into()),
                        r.error.clone().unwrap_or_default(),
                    ]
                })
                .collect();
            out.push_str(&table::render(
                &["RUN", "STATUS", "REASON", "STARTED", "DURATION", "ERROR"],
                &rows,
            ));
            Ok(Status::Ok)
        }
    }
}

fn next(
    expr: &str,
    tz: Option<&str>,
    from: Option<&str>,
    count: usize,
    json: bool,
    out: &mut String,
) -> Result<Status> {
    if count == 0 || count > MAX_COUNT {
        return invalid(
            &CronError::invalid("--count", format!("must be between 1 and {MAX_COUNT}")),
            json,
            out,
        );
    }
    let from_ms = match from {
        Some(f) => match parse_absolute_time_ms(f) {
            Ok(ms) => ms,
            Err(m) => return invalid(&CronError::invalid("--from", m.to_string()), json, out),
        },
        None => now_ms(),
    };
    let parsed = match CronExpr::parse(expr, tz, "cron") {
        Ok(p) => p,
        Err(e) => return invalid(&e, json, out),
    };
    let times = match parsed.upcoming(from_ms, count) {
        Ok(t) => t,
        Err(e) => return invalid(&e, json, out),
    };
    if json {
        let v: Vec<String> = times.iter().map(|t| format_utc(*t)).collect();
        return print_json(&json!(v), out);
    }
    let zone = tz.map_or_else(|| host_time_zone().name().to_owned(), str::to_owned);
    for t in &times {
        let local = chrono_local(*t, parsed.tz());
        writeln!(out, "{}  ({local} {zone})", format_utc(*t))?;
    }
    Ok(Status::Ok)
}

fn chrono_local(ms: i64, tz: chrono_tz::Tz) -> String {
    use chrono::TimeZone as _;
    match tz.timestamp_millis_opt(ms).single() {
        Some(t) => t.format("%Y-%m-%d %H:%M:%S").to_string(),
        None => String::new(),
    }
}

fn schedule_text(job: &CronJob) -> String {
    match &job.schedule {
        Schedule::At { at } => format!("at {at}"),
        Schedule::Every { every_ms, .. } => format!("every {every_ms} ms"),
        Schedule::Cron { expr, tz, .. } => match tz {
            Some(tz) => format!("cron {expr} ({tz})"),
            None => format!("cron {expr}"),
        },
    }
}

fn list(all: bool, json: bool, out: &mut String) -> Result<Status> {
    let jobs = open_store()?.list(all)?;
    if json {
        return print_json(&serde_json::to_value(&jobs)?, out);
    }
    if jobs.is_empty() {
        writeln!(
            out,
            "no cron jobs{}",
            if all {
                ""
            } else {
                " (enabled; --all shows disabled ones too)"
            }
        )?;
        return Ok(Status::Ok);
    }
    let rows: Vec<Vec<String>> = jobs
        .iter()
        .map(|j| {
            vec![
                j.id.clone(),
                j.name.clone(),
                j.agent_id.clone(),
                schedule_text(j),
                j.state
                    .next_run_at_ms
                    .map(format_utc)
                    .unwrap_or_else(|| "-".into()),
                j.state
                    .last_status
                    .map(|s| s.as_str().to_owned())
                    .unwrap_or_else(|| "-".into()),
                if j.enabled { "yes" } else { "no" }.to_owned(),
            ]
        })
        .collect();
    out.push_str(&table::render(
        &[
            "ID",
            "NAME",
            "AGENT",
            "SCHEDULE",
            "NEXT (UTC)",
            "LAST",
            "ENABLED",
        ],
        &rows,
    ));
    Ok(Status::Ok)
}

fn add(ctx: &ContextArgs, spec: JobSpec, json: bool, out: &mut String) -> Result<Status> {
    let creator = Creator {
        agent_id: ctx.agent.clone().unwrap_or_else(|| "main".into()),
        session_key: ctx.session.clone(),
        tools: None,
    };
    let (job, _) = match build_job(talon_tasks::new_id("job"), spec, &creator, now_ms()) {
        Ok(j) => j,
        Err(e) => return invalid(&e, json, out),
    };
    // The quotas and webhook rules of `cron` hold for the operator's jobs
    // too.
    let opts = talon_cron::CronOptions::from_config(
        &crate::commands::load_config(ctx)?.config.cron_config(),
    );
    let mut store = open_store()?;
    if let Err(e) = opts.admit(&store, &job, now_ms()) {
        return invalid(&e, json, out);
    }
    store.put(&job)?;
    if json {
        return print_json(&serde_json::to_value(&job)?, out);
    }
    writeln!(
        out,
        "added {} ({}), next run {}",
        job.id,
        schedule_text(&job),
        job.state
            .next_run_at_ms
            .map(format_utc)
            .unwrap_or_else(|| "-".into())
    )?;
    Ok(Status::Ok)
}
