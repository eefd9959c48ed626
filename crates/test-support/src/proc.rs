//! Processes seen through `/proc`, for tests that check what is still
//! running by pid.

use std::process::{Command, Stdio};

/// Every live process whose parent chain leads to `root`, `root` first.
pub fn descendants(root: u32) -> Vec<u32> {
    let mut parent_of: Vec<(u32, u32)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for e in entries.flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            // pid (comm) state ppid ...
            let Some(after) = stat.rfind(')').and_then(|i| stat.get(i + 2..)) else {
                continue;
            };
            let ppid = after
                .split_whitespace()
                .nth(1)
                .and_then(|p| p.parse::<u32>().ok())
                .unwrap_or(0);
            parent_of.push((pid, ppid));
        }
    }
    let mut out = vec![root];
    let mut i = 0;
    while let Some(&p) = out.get(i) {
        for (pid, ppid) in &parent_of {
            if *ppid == p && !out.contains(pid) {
                out.push(*pid);
            }
        }
        i += 1;
    }
    out
}

/// Send `signal` (a number) to `pid` through the `kill` program (no
/// `unsafe` in tests); whether `kill` succeeded.
pub fn signal(pid: u32, signal: i32) -> bool {
    Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// SIGKILL every process (other than this one) whose command line
/// contains `needle`, typically a unique temp path.
pub fn kill_mentioning(needle: &str) {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == me {
            continue;
        }
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline"))
            && String::from_utf8_lossy(&cmd).contains(needle)
        {
            let _ = signal(pid, 9);
        }
    }
}
