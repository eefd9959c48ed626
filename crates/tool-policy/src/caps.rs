//! The cron creator cap: a job never gets more than the run that created
//! it. (A child run's cap is the pipeline's `inherited` layer.)

use std::collections::HashSet;

use talon_tool_catalog::normalize_tool_name;

use crate::list::CompiledList;
use crate::universe::ToolEntry;

/// A cron job's tools after the creator cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CappedTools {
    /// The tools the job may use: stored with the job and passed as the
    /// run's `inherited` set when it fires.
    pub tools: Vec<String>,
    /// Requested entries that matched nothing the creator has.
    pub dropped: Vec<String>,
}

/// Cap a cron job's requested allow list by its creator's effective tools.
///
/// With no request the job gets exactly the creator's tools. A request is
/// matched (globs, groups, plugin ids) against the creator's tools only;
/// entries that match none of them are reported in `dropped`, so the caller
/// can tell the model instead of widening silently.
pub fn cap_cron_job_tools(creator_tools: &[String], requested: Option<&[String]>) -> CappedTools {
    let creator: Vec<String> = creator_tools
        .iter()
        .map(|t| normalize_tool_name(t))
        .collect();
    let Some(requested) = requested else {
        return CappedTools {
            tools: creator,
            dropped: Vec::new(),
        };
    };
    let mut tools = Vec::new();
    let mut dropped = Vec::new();
    for raw in requested {
        let one = CompiledList::compile(std::slice::from_ref(raw));
        if one.is_empty() {
            continue;
        }
        let mut hit = false;
        for t in &creator {
            if one.matching_entry(&ToolEntry::core(t)).is_some() {
                hit = true;
                if !tools.contains(t) {
                    tools.push(t.clone());
                }
            }
        }
        if !hit {
            dropped.push(normalize_tool_name(raw));
        }
    }
    // Keep the creator's order.
    let chosen: HashSet<&String> = tools.iter().collect();
    let tools = creator
        .iter()
        .filter(|t| chosen.contains(t))
        .cloned()
        .collect();
    CappedTools { tools, dropped }
}
