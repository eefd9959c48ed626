//! `talon memory index|search|status`: the host workspace's memory index,
//! the same file host runs of the agent use.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context as _, Result, anyhow, bail};
use serde_json::json;
use talon_memory::{MemoryIndex, MemoryScope, MemoryService, Skipped, host_bridge};

use crate::Status;
use crate::cli::{ContextArgs, MemoryCommand};
use crate::commands::{config_dir, load_config};
use crate::table;

struct Opened {
    service: MemoryService,
    index: MemoryIndex,
    workspace: std::path::PathBuf,
}

fn open(ctx: &ContextArgs, flag: Option<&Path>) -> Result<Opened> {
    let loaded = load_config(ctx)?;
    let config = loaded.config;
    let state_dir = talon_config::state_dir();
    let agent = ctx
        .agent
        .clone()
        .unwrap_or_else(|| config.default_agent_id())
        .trim()
        .to_lowercase();
    let workspace = match flag {
        Some(dir) => crate::skills_cmd::resolve_path(&dir.to_string_lossy(), &config_dir(ctx)),
        None => config.agent_workspace_dir(&agent, &config_dir(ctx), &state_dir),
    };
    let settings = config.agent_memory_search(&agent);
    if !settings.is_enabled() {
        bail!(
            "memory search is off for agent `{agent}` (memorySearch.enabled: false in its entry or in agents.defaults); turn it on there to index or search"
        );
    }
    let service = MemoryService::new(Some(&settings), &state_dir).map_err(|e| anyhow!("{e}"))?;
    let index = service
        .index_unwatched(&agent, &MemoryScope::Host(workspace.clone()))
        .map_err(|e| anyhow!("{e}"))?;
    Ok(Opened {
        service,
        index,
        workspace,
    })
}

fn skipped_text(skipped: &[Skipped], out: &mut String) -> Result<()> {
    if skipped.is_empty() {
        return Ok(());
    }
    writeln!(out, "\nskipped:")?;
    for s in skipped {
        writeln!(out, "  {} [{}]: {}", s.path, s.code, s.message)?;
    }
    Ok(())
}

/// The first line of `text` that is not a heading (else the first line),
/// at most `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.clone().next().unwrap_or("");
    let line = lines.find(|l| !l.starts_with('#')).unwrap_or(first);
    match line.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_owned(),
    }
}

pub(crate) fn run(ctx: &ContextArgs, cmd: &MemoryCommand, out: &mut String) -> Result<Status> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    match cmd {
        MemoryCommand::Index {
            rebuild,
            workspace,
            json,
        } => {
            let o = open(ctx, workspace.as_deref())?;
            let bridge = host_bridge(&o.workspace).map_err(|e| anyhow!("{e}"))?;
            let report = rt
                .block_on(async {
                    if *rebuild {
                        o.index.rebuild(bridge.as_ref()).await
                    } else {
                        o.index.sync(bridge.as_ref()).await
                    }
                })
                .map_err(|e| anyhow!("{e}"))?;
            if *json {
                let mut v = serde_json::to_value(&report)?;
                v["index"] = json!(o.index.path());
                v["workspace"] = json!(o.workspace);
                out.push_str(&serde_json::to_string_pretty(&v)?);
                out.push('\n');
            } else {
                writeln!(out, "index      {}", o.index.path().display())?;
                writeln!(out, "workspace  {}", o.workspace.display())?;
                writeln!(
                    out,
                    "files      {} ({} indexed, {} unchanged, {} removed)",
                    report.files, report.indexed, report.unchanged, report.removed
                )?;
                writeln!(out, "chunks     {} written", report.chunks_written)?;
                if let Some(e) = &report.embedding_error {
                    writeln!(out, "embedding  failed: {e}")?;
                } else if report.embedded > 0 {
                    writeln!(out, "embedding  {} chunks", report.embedded)?;
                }
                skipped_text(&report.skipped, out)?;
            }
            Ok(if report.skipped.is_empty() {
                Status::Ok
            } else {
                Status::No
            })
        }
        MemoryCommand::Search {
            query,
            max_results,
            min_score,
            workspace,
            json,
        } => {
            let o = open(ctx, workspace.as_deref())?;
            let bridge = host_bridge(&o.workspace).map_err(|e| anyhow!("{e}"))?;
            let (default_max, default_min) = o.service.search_defaults();
            let resp = rt
                .block_on(o.index.search(
                    bridge.as_ref(),
                    query,
                    max_results.unwrap_or(default_max),
                    min_score.unwrap_or(default_min),
                ))
                .map_err(|e| anyhow!("{e}"))?;
            if *json {
                out.push_str(&serde_json::to_string_pretty(&resp)?);
                out.push('\n');
            } else if resp.results.is_empty() {
                writeln!(out, "no memory matches {query:?}")?;
            } else {
                let rows: Vec<Vec<String>> = resp
                    .results
                    .iter()
                    .map(|h| {
                        vec![
                            format!("{:.3}", h.score),
                            h.citation.clone(),
                            one_line(&h.snippet, 80),
                        ]
                    })
                    .collect();
                out.push_str(&table::render(&["SCORE", "WHERE", "TEXT"], &rows));
                if let Some(f) = &resp.fallback {
                    writeln!(out, "\n({f})")?;
                }
            }
            if !*json {
                skipped_text(&resp.skipped, out)?;
            }
            Ok(if resp.results.is_empty() {
                Status::No
            } else {
                Status::Ok
            })
        }
        MemoryCommand::Status { workspace, json } => {
            let o = open(ctx, workspace.as_deref())?;
            let status = rt.block_on(o.index.status()).map_err(|e| anyhow!("{e}"))?;
            if *json {
                let mut v = serde_json::to_value(&status)?;
                v["workspace"] = json!(o.workspace);
                out.push_str(&serde_json::to_string_pretty(&v)?);
                out.push('\n');
            } else {
                writeln!(out, "index      {}", status.path.display())?;
                writeln!(out, "workspace  {}", o.workspace.display())?;
                writeln!(out, "files      {} ({} bytes)", status.files, status.bytes)?;
                writeln!(out, "chunks     {}", status.chunks)?;
                writeln!(
                    out,
                    "provider   {}{}",
                    status.provider,
                    if status.provider == "none" {
                        String::new()
                    } else {
                        format!(" ({} chunks embedded)", status.embedded_chunks)
                    }
                )?;
                skipped_text(&status.skipped, out)?;
            }
            Ok(Status::Ok)
        }
    }
}
