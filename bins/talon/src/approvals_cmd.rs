//! `talon approvals allowlist list|add|remove`: edits
//! `<state dir>/exec-approvals.json` through the hooks crate's store.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use serde_json::json;
use talon_hooks::approval::display_text;
use talon_hooks::exec_approvals::{AllowlistEntry, ExecApprovalsStore, entry_text};

use crate::Status;
use crate::cli::AllowlistCommand;

pub(crate) fn allowlist(
    cmd: &AllowlistCommand,
    state_dir: &Path,
    out: &mut String,
) -> Result<Status> {
    let store = ExecApprovalsStore::in_state_dir(state_dir);
    match cmd {
        AllowlistCommand::List { agent, json } => {
            let view = store.agent_view(agent)?;
            let entries: Vec<&AllowlistEntry> = view.entries().collect();
            if *json {
                out.push_str(&serde_json::to_string_pretty(&json!({
                    "agent": agent,
                    "file": store.path(),
                    "entries": entries,
                }))?);
                out.push('\n');
            } else if entries.is_empty() {
                writeln!(
                    out,
                    "agent {agent}: the exec allowlist is empty ({})",
                    store.path().display()
                )?;
            } else {
                for e in entries {
                    writeln!(
                        out,
                        "{}  {}{}",
                        e.id.as_deref().unwrap_or("-"),
                        display_text(&entry_text(e)),
                        e.source
                            .as_deref()
                            .map(|s| format!("  ({})", display_text(s)))
                            .unwrap_or_default()
                    )?;
                }
            }
            Ok(Status::Ok)
        }
        AllowlistCommand::Add {
            pattern,
            agent,
            arg_pattern,
            json,
        } => {
            let mut entry = AllowlistEntry::new(pattern.clone());
            entry.arg_pattern = arg_pattern.clone();
            entry.source = Some("cli".to_owned());
            let added = store.add(agent, vec![entry])?;
            if *json {
                out.push_str(&serde_json::to_string_pretty(
                    &json!({"agent": agent, "added": added}),
                )?);
                out.push('\n');
            } else if added == 0 {
                writeln!(
                    out,
                    "agent {agent}: {} is already on the exec allowlist",
                    display_text(pattern)
                )?;
            } else {
                writeln!(
                    out,
                    "agent {agent}: added {} to the exec allowlist",
                    display_text(pattern)
                )?;
            }
            Ok(Status::Ok)
        }
        AllowlistCommand::Remove {
            pattern,
            agent,
            json,
        } => {
            let removed = store.remove(agent, pattern)?;
            if *json {
                out.push_str(&serde_json::to_string_pretty(
                    &json!({"agent": agent, "removed": removed}),
                )?);
                out.push('\n');
            } else if removed == 0 {
                writeln!(
                    out,
                    "agent {agent}: no exec allowlist entry {}",
                    display_text(pattern)
                )?;
            } else {
                writeln!(
                    out,
                    "agent {agent}: removed {removed} entr{} for {}",
                    if removed == 1 { "y" } else { "ies" },
                    display_text(pattern)
                )?;
            }
            Ok(if removed == 0 { Status::No } else { Status::Ok })
        }
    }
}
