//! F5: the disk refuses writes. The child process lowers its own file size
//! limit (`RLIMIT_FSIZE`, with `SIGXFSZ` ignored by the shell that starts
//! it) so every write to the journal fails with `EFBIG`, then raises it
//! again, as if space were freed.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
use talon_journal::{CallJournal, FinishAck, JournalError, Outcome, QUEUE_CAPACITY};

use super::{end, journal_path, start};

const CHILD_ENV: &str = "TALON_JOURNAL_DISK_FULL_CHILD";
const THIS_TEST: &str = "suite::disk_full::refused_writes_fail_closed_and_heal_when_space_returns";
const MARKER: &str = "disk-full-scenario-passed";

async fn child(path: &Path) {
    let (journal, _) = CallJournal::open(path).unwrap();
    for i in 0..20 {
        let _ = journal
            .record(
                start(&format!("before{i}"), "s", "read"),
                end(Outcome::Ok, ""),
            )
            .unwrap();
    }
    journal.flush().await.unwrap();

    let limit = getrlimit(Resource::Fsize);
    setrlimit(
        Resource::Fsize,
        Rlimit {
            current: Some(0),
            maximum: limit.maximum,
        },
    )
    .unwrap();

    // A started record cannot be written: the call must not run.
    let err = journal
        .started(start("exec-1", "s", "exec"))
        .await
        .unwrap_err();
    assert!(matches!(err, JournalError::WriteFailed { .. }), "{err}");
    assert!(err.to_string().contains("free disk space"), "{err}");
    // A terminal record is accepted and kept for retry.
    let ack = journal
        .record(start("kept", "s", "read"), end(Outcome::Ok, "kept"))
        .unwrap();
    assert_eq!(ack, FinishAck::Queued);
    let err = journal.flush().await.unwrap_err();
    assert!(matches!(err, JournalError::WriteFailed { .. }), "{err}");
    assert!(journal.stats().failed_commits >= 1);
    // While the writer is failing, started records and flushes fail fast.
    let err = journal
        .started(start("exec-2", "s", "exec"))
        .await
        .unwrap_err();
    assert!(matches!(err, JournalError::WriteFailed { .. }), "{err}");
    // Terminal records pile up to the queue's bound, then are refused
    // loudly rather than dropped.
    let mut flood_queued = 0usize;
    let mut overloaded = false;
    for i in 0..3 * QUEUE_CAPACITY {
        match journal.record(
            start(&format!("flood{i}"), "flood", "read"),
            end(Outcome::Ok, ""),
        ) {
            Ok(FinishAck::Queued) => flood_queued += 1,
            Err(JournalError::Overloaded { capacity }) => {
                assert_eq!(capacity, QUEUE_CAPACITY);
                overloaded = true;
                break;
            }
            other => panic!("unexpected answer while the disk is full: {other:?}"),
        }
    }
    assert!(overloaded, "the queue never filled ({flood_queued} queued)");
    assert!(flood_queued >= QUEUE_CAPACITY, "{flood_queued}");
    // Reads keep working and show nothing half-written.
    assert_eq!(journal.get("exec-1").unwrap(), None);
    assert_eq!(journal.history("s", 100).unwrap().len(), 20);

    setrlimit(Resource::Fsize, limit).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match journal.flush().await {
            Ok(()) => break,
            Err(e) if Instant::now() < deadline => {
                assert!(matches!(e, JournalError::WriteFailed { .. }), "{e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("the journal did not heal: {e}"),
        }
    }
    let kept = journal.get("kept").unwrap().unwrap();
    assert_eq!(kept.outcome(), Some(Outcome::Ok));
    // The refused call id was never consumed.
    journal.started(start("exec-1", "s", "exec")).await.unwrap();
    let _ = journal.finish("exec-1", end(Outcome::Ok, "")).unwrap();
    journal.flush().await.unwrap();
    assert_eq!(journal.history("s", 100).unwrap().len(), 22);
    let flood: i64 = super::raw(path)
        .query_row(
            "SELECT COUNT(*) FROM calls WHERE session_key = 'flood'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(flood as usize, flood_queued);
    let stats = journal.stats();
    assert_eq!(
        (stats.lost_records, stats.in_flight, stats.queued),
        (0, 0, 0),
        "{stats:?}"
    );
    let mut out = std::io::stdout();
    writeln!(out, "{MARKER}").unwrap();
    out.flush().unwrap();
}

#[tokio::test]
async fn refused_writes_fail_closed_and_heal_when_space_returns() {
    if let Some(path) = std::env::var_os(CHILD_ENV) {
        child(Path::new(&path)).await;
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = journal_path(dir.path());
    // `trap '' XFSZ` makes the signal ignored, which survives the exec, so
    // an over-limit write fails with EFBIG instead of killing the child.
    let mut proc = Command::new("sh")
        .args(["-c", "trap '' XFSZ; exec \"$0\" \"$@\""])
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", THIS_TEST, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = proc.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = proc.kill();
            panic!("the disk-full child did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut out = String::new();
    let mut err = String::new();
    proc.stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    proc.stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(
        status.success() && out.contains(MARKER),
        "status {status}\nstdout:\n{out}\nstderr:\n{err}"
    );
}
