//! `talon sessions list|show|history` on the local state: the session
//! store in `talon.db` and the gateway's call journal, both read without
//! disturbing a running gateway. The operator sees every session; the
//! visibility rule applies to the agents' session tools.

use std::fmt::Write as _;

use anyhow::{Context as _, Result};
use serde_json::json;
use talon_journal::JournalReader;
use talon_sessions::{ListQuery, SessionRecord, SessionStore};

use crate::Status;
use crate::cli::SessionsCommand;
use crate::table;
use crate::tasks_cmd::refused;

fn open() -> Result<SessionStore> {
    let path = crate::cron_cmd::db_path();
    SessionStore::open(&path)
        .with_context(|| format!("cannot open the session store at {}", path.display()))
}

fn ms_text(ms: u64) -> String {
    talon_cron::format_utc(i64::try_from(ms).unwrap_or(i64::MAX))
}

fn show_text(s: &SessionRecord, out: &mut String) -> Result<()> {
    let rows: Vec<(&str, String)> = vec![
        ("key", s.key.clone()),
        ("agent", s.agent_id.clone()),
        ("status", s.status.as_str().to_owned()),
        ("parent", s.parent_key.clone().unwrap_or_default()),
        ("depth", s.spawn_depth.to_string()),
        ("label", s.label.clone().unwrap_or_default()),
        ("created", ms_text(s.created_at_ms)),
        ("updated", ms_text(s.updated_at_ms)),
    ];
    for (k, v) in rows {
        writeln!(out, "{k:<8} {v}")?;
    }
    Ok(())
}

pub(crate) fn run(cmd: &SessionsCommand, out: &mut String) -> Result<Status> {
    match cmd {
        SessionsCommand::List {
            agent,
            all,
            limit,
            json,
        } => {
            let sessions = open()?.list(&ListQuery {
                agent_id: agent.as_deref().map(|a| a.trim().to_lowercase()),
                updated_since_ms: None,
                include_closed: *all,
                limit: *limit,
            })?;
            if *json {
                out.push_str(&serde_json::to_string_pretty(&sessions)?);
                out.push('\n');
                return Ok(Status::Ok);
            }
            if sessions.is_empty() {
                writeln!(out, "no sessions")?;
                return Ok(Status::Ok);
            }
            let rows: Vec<Vec<String>> = sessions
                .iter()
                .map(|s| {
                    vec![
                        s.key.clone(),
                        s.agent_id.clone(),
                        s.status.as_str().to_owned(),
                        s.parent_key.clone().unwrap_or_else(|| "-".into()),
                        ms_text(s.updated_at_ms),
                    ]
                })
                .collect();
            out.push_str(&table::render(
                &["KEY", "AGENT", "STATUS", "PARENT", "UPDATED (UTC)"],
                &rows,
            ));
            Ok(Status::Ok)
        }
        SessionsCommand::Show { key, json } => match open()?.get(key)? {
            Some(s) => {
                if *json {
                    out.push_str(&serde_json::to_string_pretty(&s)?);
                    out.push('\n');
                } else {
                    show_text(&s, out)?;
                }
                Ok(Status::Ok)
            }
            None => refused(
                format!("no session `{key}`; see `talon sessions list --all`"),
                *json,
                out,
            ),
        },
        SessionsCommand::History { key, limit, json } => {
            let store = open()?;
            let Some(session) = store.get(key)? else {
                return refused(
                    format!("no session `{key}`; see `talon sessions list --all`"),
                    *json,
                    out,
                );
            };
            let messages = store.messages(key, *limit, None)?;
            let journal = talon_config::state_dir().join(talon_journal::FILE_NAME);
            let calls = if journal.exists() {
                let limit = (*limit).min(talon_journal::MAX_HISTORY_LIMIT);
                JournalReader::open(&journal)
                    .and_then(|r| r.history(key, limit))
                    .with_context(|| {
                        format!("cannot read the call journal at {}", journal.display())
                    })?
            } else {
                Vec::new()
            };
            if *json {
                out.push_str(&serde_json::to_string_pretty(&json!({
                    "session": session,
                    "messages": messages,
                    "calls": calls,
                }))?);
                out.push('\n');
                return Ok(Status::Ok);
            }
            show_text(&session, out)?;
            writeln!(out)?;
            if messages.is_empty() {
                writeln!(out, "no messages")?;
            }
            for m in &messages {
                writeln!(
                    out,
                    "[{}] {}{}: {}",
                    ms_text(m.at_ms),
                    m.role.as_str(),
                    m.source
                        .as_deref()
                        .map(|s| format!(" ({s})"))
                        .unwrap_or_default(),
                    m.text
                )?;
            }
            writeln!(out)?;
            if calls.is_empty() {
                writeln!(out, "no tool calls")?;
                return Ok(Status::Ok);
            }
            let rows: Vec<Vec<String>> = calls
                .iter()
                .map(|c| {
                    vec![
                        ms_text(c.started_at_ms),
                        c.tool.clone(),
                        c.end.as_ref().map_or_else(
                            || "in flight".to_owned(),
                            |e| e.outcome.as_str().to_owned(),
                        ),
                        c.tool_call_id.clone().unwrap_or_default(),
                    ]
                })
                .collect();
            out.push_str(&table::render(
                &["STARTED (UTC)", "TOOL", "OUTCOME", "TOOL CALL ID"],
                &rows,
            ));
            Ok(Status::Ok)
        }
    }
}
