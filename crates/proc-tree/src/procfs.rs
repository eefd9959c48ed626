//! What `/proc` says about a process: its parent, group, state and start
//! time (to tell a live owner from a reused pid), and its leaf label.

use std::path::Path;

/// The name of the environment label a leaf's processes carry (used to find
/// them when there is no cgroup).
pub(crate) const LABEL_VAR: &str = "TALON_PROC_LEAF";

/// The fields of `/proc/<pid>/stat` this crate uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    pub(crate) state: char,
    pub(crate) ppid: u32,
    pub(crate) pgrp: u32,
    pub(crate) starttime: u64,
}

/// Parses a `/proc/<pid>/stat` line (the command name may hold spaces and
/// parentheses, so fields are counted from the last `)`).
pub(crate) fn parse_stat(text: &str) -> Option<Stat> {
    let (_, rest) = text.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(Stat {
        state: fields.first()?.chars().next()?,
        ppid: fields.get(1)?.parse().ok()?,
        pgrp: fields.get(2)?.parse().ok()?,
        starttime: fields.get(19)?.parse().ok()?,
    })
}

/// The stat of a process, `None` when it is gone.
pub(crate) fn stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// Whether `pid` is a live process (not a zombie) that started at
/// `starttime` (clock ticks after boot), i.e. not a reused pid.
pub(crate) fn alive_since(pid: u32, starttime: u64) -> bool {
    stat(pid).is_some_and(|s| s.state != 'Z' && s.state != 'X' && s.starttime == starttime)
}

/// Whether `pid` is a live process (not a zombie).
pub(crate) fn alive(pid: u32) -> bool {
    stat(pid).is_some_and(|s| s.state != 'Z' && s.state != 'X')
}

/// Every pid in `/proc`.
pub(crate) fn all_pids() -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// The value of the leaf label in `/proc/<pid>/environ` (the environment
/// the process was started with), if it has one.
pub(crate) fn label_of(pid: u32) -> Option<String> {
    let bytes = std::fs::read(Path::new("/proc").join(pid.to_string()).join("environ")).ok()?;
    label_in_environ(&bytes)
}

pub(crate) fn label_in_environ(bytes: &[u8]) -> Option<String> {
    let prefix = format!("{LABEL_VAR}=");
    bytes
        .split(|b| *b == 0)
        .find_map(|entry| entry.strip_prefix(prefix.as_bytes()))
        .and_then(|value| std::str::from_utf8(value).ok())
        .map(str::to_owned)
}

/// Reads the pids listed in a `cgroup.procs` file (empty when unreadable).
pub(crate) fn read_procs(path: &Path) -> Vec<u32> {
    std::fs::read_to_string(path)
        .map(|t| t.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default()
}

#[cfg(test)]
#[path = "procfs_tests.rs"]
mod tests;
