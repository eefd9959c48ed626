//! Contained process trees through the real daemon: a SIGKILLed gateway
//! leaves none of its exec children alive (its watchdog ends them), and a
//! restart sweeps what a dead gateway whose watchdog died too left behind,
//! before it answers its first health check. Processes are checked by pid
//! in `/proc`.

use super::support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::{Gw, GwExt as _, Ws};

/// Whether `pid` is a live process (a zombie is dead: it only holds its
/// pid until whoever adopted it reaps it).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next());
        !matches!(state, Some('Z' | 'X'))
    })
}

fn assert_gone_within(pids: &[u32], limit: Duration, what: &str) {
    let deadline = Instant::now() + limit;
    loop {
        let left: Vec<u32> = pids.iter().copied().filter(|p| alive(*p)).collect();
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: {left:?} still alive");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts `setsid sleep 300` (plus the shell waiting for it) through an
/// in-flight `exec` call and returns their pids once both are running.
async fn exec_setsid_sleep(gw: &Gw) -> Vec<u32> {
    let pidfile = gw.dir.path().join("tree.pids");
    let cmd = format!(
        "setsid sleep 300 & echo $! > {f}; echo $$ >> {f}; wait",
        f = pidfile.display()
    );
    let (addr, token) = (gw.addr, gw.token.clone());
    tokio::spawn(async move {
        let mut ws = Ws::connect(addr, Some(&token)).await.unwrap();
        ws.call(
            "tools.invoke",
            json!({"sessionKey": "main", "toolName": "exec", "params": {"command": cmd}}),
        )
        .await
    });
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let pids: Vec<u32> = std::fs::read_to_string(&pidfile)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if pids.len() == 2 && pids.iter().all(|p| alive(*p)) {
            return pids;
        }
        assert!(
            Instant::now() < deadline,
            "the exec never started: {pids:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The gateway's watchdog: its child running the watchdog script.
fn watchdog_of(gateway: u32) -> u32 {
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(gateway)
            && String::from_utf8_lossy(&cmdline).contains("talon-proc-tree-watchdog")
        {
            return pid;
        }
    }
    panic!("no watchdog child of the gateway {gateway}");
}

async fn containment_mode(gw: &Gw) -> String {
    let mut ws = gw.ws().await;
    let h = ws.ok("health", json!({})).await;
    h["containment"]["mode"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn cgroups_expected() -> bool {
    let root =
        std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0);
    root && std::fs::read_to_string("/proc/self/mountinfo")
        .is_ok_and(|t| t.lines().any(|l| l.contains(" - cgroup2 ")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigkilled_gateway_leaves_no_exec_child_alive() {
    let mut gw = Gw::start("{}");
    let mode = containment_mode(&gw).await;
    if cgroups_expected() {
        assert_eq!(mode, "cgroup", "{}", gw.log_text());
    } else {
        assert_eq!(mode, "process-group", "{}", gw.log_text());
    }
    assert!(gw.log_text().contains("containment"), "{}", gw.log_text());
    let pids = exec_setsid_sleep(&gw).await;
    gw.signal(9);
    assert_eq!(
        gw.wait_exit(Duration::from_secs(5)),
        None,
        "killed by SIGKILL"
    );
    assert_gone_within(
        &pids,
        Duration::from_secs(15),
        "after the gateway's SIGKILL",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_sweeps_what_a_dead_gateway_left_before_serving() {
    let mut gw = Gw::start("{}");
    let pids = exec_setsid_sleep(&gw).await;
    // Kill the watchdog first, then the gateway: nothing cleans up now.
    let watchdog = watchdog_of(u32::try_from(gw.pid()).unwrap());
    assert_eq!(
        support::unsafe_free_kill(i32::try_from(watchdog).unwrap(), 9),
        0
    );
    assert_gone_within(&[watchdog], Duration::from_secs(5), "the watchdog");
    gw.signal(9);
    assert_eq!(
        gw.wait_exit(Duration::from_secs(5)),
        None,
        "killed by SIGKILL"
    );
    std::thread::sleep(Duration::from_millis(200));
    for pid in &pids {
        assert!(
            alive(*pid),
            "{pid} should be a leftover of the dead gateway"
        );
    }
    // `spawn` returns once /healthz answers: the sweep has already run.
    gw.spawn();
    let left: Vec<u32> = pids.iter().copied().filter(|p| alive(*p)).collect();
    assert!(left.is_empty(), "not swept before serving: {left:?}");
    assert!(
        gw.log_text().contains("left behind by a dead owner"),
        "{}",
        gw.log_text()
    );
}
