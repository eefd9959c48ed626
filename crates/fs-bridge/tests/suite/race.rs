//! A directory flipped between a real directory and a symlink to an
//! outside directory (atomic `RENAME_EXCHANGE`, in a tight loop on another
//! thread) while the bridge reads and writes through it: the secret is
//! never read and nothing is ever written outside.

use super::common;

use std::os::unix::fs::symlink;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::{SECRET, snapshot};
use rustix::fs::{CWD, RenameFlags};
use talon_fs_bridge::{FsBridge, Mount, MountBridge, WriteOptions};

/// Per run: at most this many bridge iterations, at most this long.
const MAX_ITERATIONS: u32 = 4_000;
const MAX_TIME: Duration = Duration::from_millis(400);

async fn race(kernel: bool, relative_target: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let ws = root.join("ws");
    let outside = root.join("outside");
    std::fs::create_dir_all(ws.join("d")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(ws.join("d/file.txt"), b"inside").unwrap();
    std::fs::write(outside.join("file.txt"), SECRET).unwrap();
    std::fs::write(outside.join("secret.txt"), SECRET).unwrap();
    if relative_target {
        symlink("../outside", ws.join("alt")).unwrap();
    } else {
        symlink(&outside, ws.join("alt")).unwrap();
    }
    let before = snapshot(&outside);

    let bridge = MountBridge::new(vec![Mount::writable("/workspace", &ws)], "/workspace").unwrap();
    bridge.set_kernel_resolution(kernel);

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swapper = {
        let (stop, swaps) = (Arc::clone(&stop), Arc::clone(&swaps));
        let (d, alt) = (ws.join("d"), ws.join("alt"));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                rustix::fs::renameat_with(CWD, &d, CWD, &alt, RenameFlags::EXCHANGE).unwrap();
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };

    let started = Instant::now();
    let (mut reads_ok, mut refused, mut iterations) = (0u32, 0u32, 0u32);
    while iterations < MAX_ITERATIONS && started.elapsed() < MAX_TIME {
        iterations += 1;
        for path in ["d/file.txt", "d/secret.txt", "/workspace/d/../d/file.txt"] {
            match bridge.read(path, None).await {
                Ok(c) => {
                    assert_ne!(c.bytes, SECRET, "secret read through {path}");
                    assert_eq!(c.bytes, b"inside");
                    reads_ok += 1;
                }
                Err(_) => refused += 1,
            }
        }
        let w = WriteOptions::default();
        let _ = bridge.write("d/planted.txt", b"planted", w).await;
        let _ = bridge
            .write("d/new/deeper/planted.txt", b"planted", w)
            .await;
        let _ = bridge
            .edit("d/file.txt", &|old: &[u8]| {
                assert_ne!(old, SECRET, "secret read by edit");
                Ok(old.to_vec())
            })
            .await;
        let _ = bridge.mkdir("d/madedir", true).await;
        let _ = bridge.remove("d/secret.txt", false).await;
        let _ = bridge.rename("d/file.txt", "d/file.txt.bak", false).await;
        let _ = bridge.rename("d/file.txt.bak", "d/file.txt", false).await;
        assert_eq!(
            snapshot(&outside),
            before,
            "outside changed at iteration {iterations}"
        );
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    assert_eq!(snapshot(&outside), before);
    assert_eq!(std::fs::read(outside.join("secret.txt")).unwrap(), SECRET);
    assert!(swaps.load(Ordering::Relaxed) > 0, "the swapper never ran");
    assert!(
        reads_ok > 0,
        "no read ever went through ({refused} refused)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn symlink_swap_race_never_escapes() {
    for kernel in [true, false] {
        for relative in [false, true] {
            race(kernel, relative).await;
        }
    }
}
