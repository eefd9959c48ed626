//! Helpers: the escaping tree, reading its pids, checking `/proc`.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use talon_proc_tree::Leaf;

/// A tree that escapes a process-group kill three ways: a `setsid`
/// child, a double-forked grandchild, and the root itself. It prints the
/// three pids, one a line.
pub(crate) const ESCAPING_TREE: &str =
    "setsid sleep 300 & echo $!; (sleep 301 & echo $!); echo $$; exec sleep 302";

/// A process that was seen alive, identified by pid and start time (so a
/// reused pid is not mistaken for it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Seen {
    pub(crate) pid: u32,
    start: u64,
}

fn stat(pid: u32) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = text.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some((fields[0].chars().next()?, fields[19].parse().ok()?))
}

impl Seen {
    pub(crate) fn new(pid: u32) -> Seen {
        let (_, start) = stat(pid).unwrap_or_else(|| panic!("pid {pid} is not running"));
        Seen { pid, start }
    }

    /// Alive: in `/proc` with the same start time and not a zombie.
    pub(crate) fn alive(&self) -> bool {
        stat(self.pid)
            .is_some_and(|(state, start)| start == self.start && state != 'Z' && state != 'X')
    }
}

/// Polls until none of `seen` is alive; panics naming the survivors after
/// `limit`.
pub(crate) fn assert_all_gone(seen: &[Seen], limit: Duration) {
    let deadline = Instant::now() + limit;
    loop {
        let alive: Vec<u32> = seen.iter().filter(|s| s.alive()).map(|s| s.pid).collect();
        if alive.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "still alive after {limit:?}: {alive:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Polls until `cond` holds; panics with `what` after `limit`.
pub(crate) fn wait_until(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !cond() {
        assert!(
            Instant::now() < deadline,
            "timed out after {limit:?}: {what}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Starts [`ESCAPING_TREE`] in `leaf` and returns the child and the three
/// pids it printed.
pub(crate) fn start_escaping_tree(leaf: &Leaf) -> (Child, Vec<Seen>) {
    let mut child = leaf
        .command(
            "/bin/sh",
            ["-c", ESCAPING_TREE],
            [("PATH", "/usr/bin:/bin")],
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    leaf.set_root_pid(child.id());
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let mut seen = Vec::new();
    for _ in 0..3 {
        let line = lines.next().expect("the tree printed its pids").unwrap();
        seen.push(Seen::new(line.trim().parse().unwrap()));
    }
    // The root execs `sleep 302`; wait until it has.
    wait_until("the root execs sleep", Duration::from_secs(10), || {
        std::fs::read_to_string(format!("/proc/{}/comm", child.id()))
            .is_ok_and(|c| c.trim() == "sleep")
    });
    (child, seen)
}

/// Whether this machine should give cgroup containment: root with a
/// cgroup2 mount.
pub(crate) fn expect_cgroups() -> bool {
    let root =
        std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0);
    let mounted = std::fs::read_to_string("/proc/self/mountinfo")
        .is_ok_and(|t| t.lines().any(|l| l.contains(" - cgroup2 ")));
    root && mounted
}
