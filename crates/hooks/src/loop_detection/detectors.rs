//! The five detectors, run in OpenClaw's order against one run's history.

use super::config::ResolvedLoopDetection;
use super::history::CallRecord;
use super::verdict::LoopDetectorKind;

/// Severity of a detection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    /// Log and let the call through.
    Warning,
    /// Veto the call.
    Critical,
}

/// What a detector found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Detection {
    /// Warning or critical.
    pub(crate) level: Level,
    /// The detector that fired.
    pub(crate) detector: LoopDetectorKind,
    /// The repeat count it saw.
    pub(crate) count: usize,
    /// The message for the model or the log.
    pub(crate) message: String,
    /// The warning key (before run scoping).
    pub(crate) warning_key: String,
}

/// The call being checked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Query<'a> {
    /// The tool name.
    pub(crate) tool_name: &'a str,
    /// The call's args hash.
    pub(crate) args_hash: &'a str,
    /// Whether it is a known polling call.
    pub(crate) known_poll: bool,
}

/// Runs the detectors in order (unknown tool, global breaker, known poll,
/// ping-pong, generic repeat) and returns the first that fires. `history`
/// holds only the records of the query's run, oldest first.
pub(crate) fn detect(
    config: &ResolvedLoopDetection,
    history: &[&CallRecord],
    query: Query<'_>,
) -> Option<Detection> {
    let Query {
        tool_name,
        args_hash,
        known_poll,
    } = query;
    let unknown = unknown_tool_streak(history, tool_name);
    if unknown.count >= config.unknown_tool_threshold {
        let missing = unknown.name.unwrap_or(tool_name);
        return Some(Detection {
            level: Level::Critical,
            detector: LoopDetectorKind::UnknownToolRepeat,
            count: unknown.count,
            message: format!(
                "CRITICAL: attempted unavailable tool {missing} {} times. Stop retrying that missing tool and answer without it.",
                unknown.count
            ),
            warning_key: format!(
                "unknown-tool:{tool_name}:{}",
                unknown.name.unwrap_or("unknown")
            ),
        });
    }

    let no_progress = no_progress_streak(history, tool_name, args_hash);
    let streak = no_progress.count;
    let latest = no_progress.latest_hash.unwrap_or("none");
    if streak >= config.global_circuit_breaker_threshold {
        return Some(Detection {
            level: Level::Critical,
            detector: LoopDetectorKind::GlobalCircuitBreaker,
            count: streak,
            message: format!(
                "CRITICAL: {tool_name} has repeated identical no-progress outcomes {streak} times. Session execution blocked by global circuit breaker to prevent runaway loops."
            ),
            warning_key: format!("global:{tool_name}:{args_hash}:{latest}"),
        });
    }

    if known_poll && config.detectors.known_poll_no_progress {
        let warning_key = format!("poll:{tool_name}:{args_hash}:{latest}");
        if streak >= config.critical_threshold {
            return Some(Detection {
                level: Level::Critical,
                detector: LoopDetectorKind::KnownPollNoProgress,
                count: streak,
                message: format!(
                    "CRITICAL: Called {tool_name} with identical arguments and no progress {streak} times. This appears to be a stuck polling loop. Session execution blocked to prevent resource waste."
                ),
                warning_key,
            });
        }
        if streak >= config.warning_threshold {
            return Some(Detection {
                level: Level::Warning,
                detector: LoopDetectorKind::KnownPollNoProgress,
                count: streak,
                message: format!(
                    "WARNING: You have called {tool_name} {streak} times with identical arguments and no progress. Stop polling and either (1) increase wait time between checks, or (2) report the task as failed if the process is stuck."
                ),
                warning_key,
            });
        }
    }

    if config.detectors.ping_pong
        && let Some(detection) = detect_ping_pong(config, history, tool_name, args_hash)
    {
        return Some(detection);
    }

    if !known_poll && config.detectors.generic_repeat {
        if streak >= config.critical_threshold {
            return Some(Detection {
                level: Level::Critical,
                detector: LoopDetectorKind::GenericRepeat,
                count: streak,
                message: format!(
                    "CRITICAL: Called {tool_name} with identical arguments and identical outcomes {streak} times. Session execution blocked to prevent runaway loops."
                ),
                warning_key: format!("generic:{tool_name}:{args_hash}:{latest}"),
            });
        }
        let recent = history
            .iter()
            .filter(|r| r.tool_name == tool_name && r.args_hash == args_hash)
            .count();
        if recent >= config.warning_threshold {
            return Some(Detection {
                level: Level::Warning,
                detector: LoopDetectorKind::GenericRepeat,
                count: recent,
                message: format!(
                    "WARNING: You have called {tool_name} {recent} times with identical arguments. If this is not making progress, stop retrying and report the task as failed."
                ),
                warning_key: format!("generic:{tool_name}:{args_hash}"),
            });
        }
    }
    None
}

fn detect_ping_pong(
    config: &ResolvedLoopDetection,
    history: &[&CallRecord],
    tool_name: &str,
    args_hash: &str,
) -> Option<Detection> {
    let pp = ping_pong_streak(history, args_hash);
    let warning_key = match pp.paired_signature {
        Some(paired) => {
            let (a, b) = if args_hash <= paired {
                (args_hash, paired)
            } else {
                (paired, args_hash)
            };
            format!("pingpong:{a}|{b}")
        }
        None => format!("pingpong:{tool_name}:{args_hash}"),
    };
    let count = pp.count;
    if count >= config.critical_threshold && pp.no_progress_evidence {
        return Some(Detection {
            level: Level::Critical,
            detector: LoopDetectorKind::PingPong,
            count,
            message: format!(
                "CRITICAL: You are alternating between repeated tool-call patterns ({count} consecutive calls) with no progress. This appears to be a stuck ping-pong loop. Session execution blocked to prevent resource waste."
            ),
            warning_key,
        });
    }
    if count >= config.warning_threshold {
        return Some(Detection {
            level: Level::Warning,
            detector: LoopDetectorKind::PingPong,
            count,
            message: format!(
                "WARNING: You are alternating between repeated tool-call patterns ({count} consecutive calls). This looks like a ping-pong loop; stop retrying and report the task as failed."
            ),
            warning_key,
        });
    }
    None
}

/// A run of trailing calls to one missing tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UnknownStreak<'a> {
    /// Length of the run.
    pub(crate) count: usize,
    /// The missing tool's name.
    pub(crate) name: Option<&'a str>,
}

/// Trailing records of `tool_name` that all failed naming the same
/// missing tool.
pub(crate) fn unknown_tool_streak<'a>(
    history: &[&'a CallRecord],
    tool_name: &str,
) -> UnknownStreak<'a> {
    let mut count = 0;
    let mut name: Option<&'a str> = None;
    for record in history.iter().rev() {
        let Some(missing) = record.unknown_tool_name.as_deref() else {
            break;
        };
        if record.tool_name != tool_name || name.is_some_and(|n| n != missing) {
            break;
        }
        name = Some(missing);
        count += 1;
    }
    UnknownStreak { count, name }
}

/// A streak of identical outcomes for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NoProgressStreak<'a> {
    /// Number of finished calls with the same args and the latest outcome.
    pub(crate) count: usize,
    /// The latest outcome of the call.
    pub(crate) latest_hash: Option<&'a str>,
}

/// Scanning back over the finished calls with the same tool and args
/// (others are skipped), how many in a row share the latest outcome.
pub(crate) fn no_progress_streak<'a>(
    history: &[&'a CallRecord],
    tool_name: &str,
    args_hash: &str,
) -> NoProgressStreak<'a> {
    let mut count = 0;
    let mut latest: Option<&'a str> = None;
    let finished = history.iter().rev().filter_map(|record| {
        let same = record.tool_name == tool_name && record.args_hash == args_hash;
        let hash = record.result_hash.as_deref().filter(|h| !h.is_empty());
        if same { hash } else { None }
    });
    for hash in finished {
        match latest {
            None => latest = Some(hash),
            Some(l) if l != hash => break,
            Some(_) => {}
        }
        count += 1;
    }
    NoProgressStreak {
        count,
        latest_hash: latest,
    }
}

/// An alternation between two call signatures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PingPong<'a> {
    /// Length of the alternating tail plus the call being checked (0 when
    /// there is no alternation the call continues).
    pub(crate) count: usize,
    /// The signature of the newest record (the other side of the pair).
    pub(crate) paired_signature: Option<&'a str>,
    /// Whether both sides of the tail finished with one stable outcome each.
    pub(crate) no_progress_evidence: bool,
}

/// Whether the history ends in an A-B-A-B… alternation that the call with
/// `current` signature continues.
pub(crate) fn ping_pong_streak<'a>(history: &[&'a CallRecord], current: &str) -> PingPong<'a> {
    let none = PingPong {
        count: 0,
        paired_signature: None,
        no_progress_evidence: false,
    };
    let Some((last, earlier)) = history.split_last() else {
        return none;
    };
    let last_sig = last.args_hash.as_str();
    let Some(other_sig) = earlier
        .iter()
        .rev()
        .map(|r| r.args_hash.as_str())
        .find(|sig| *sig != last_sig)
    else {
        return none;
    };
    let tail = history
        .iter()
        .rev()
        .enumerate()
        .take_while(|(i, r)| r.args_hash == if i % 2 == 0 { last_sig } else { other_sig })
        .count();
    if tail < 2 || current != other_sig {
        return none;
    }
    PingPong {
        count: tail + 1,
        paired_signature: Some(last_sig),
        no_progress_evidence: stable_outcomes(&history[history.len() - tail..], last_sig),
    }
}

/// Whether every record of the tail finished, and each side of the pair
/// always with the same outcome.
fn stable_outcomes(tail: &[&CallRecord], last_sig: &str) -> bool {
    let mut hash_a: Option<&str> = None;
    let mut hash_b: Option<&str> = None;
    for record in tail {
        let Some(hash) = record.result_hash.as_deref().filter(|h| !h.is_empty()) else {
            return false;
        };
        let side = if record.args_hash == last_sig {
            &mut hash_a
        } else {
            &mut hash_b
        };
        match side {
            None => *side = Some(hash),
            Some(seen) if *seen != hash => return false,
            Some(_) => {}
        }
    }
    hash_a.is_some() && hash_b.is_some()
}

#[cfg(test)]
#[path = "detectors_tests.rs"]
mod tests;
