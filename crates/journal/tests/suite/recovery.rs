use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use pretty_assertions::assert_eq;
use talon_journal::{CallJournal, Durability, JournalError, JournalOptions, Outcome};

use super::{end, journal_path, raw, start};

const CHILD_ENV: &str = "TALON_JOURNAL_CRASH_CHILD";
const THIS_TEST: &str = "suite::recovery::sigkill_mid_call_marks_in_flight_calls_interrupted";

/// The child's half: journal some calls, leave some in flight, say
/// `ready`, and wait to be killed.
async fn child(path: &Path) -> ! {
    // The lighter durability: its promise is exactly "survives SIGKILL".
    let options = JournalOptions::with_durability(Durability::ProcessCrash);
    let (journal, _) = CallJournal::open_with(path, options).unwrap();
    for i in 0..5 {
        journal
            .started(start(&format!("c{i}"), "s", "exec"))
            .await
            .unwrap();
    }
    let _ = journal.finish("c0", end(Outcome::Ok, "done")).unwrap();
    let _ = journal.finish("c1", end(Outcome::Error, "exit 1")).unwrap();
    for i in 0..3 {
        let _ = journal
            .record(start(&format!("r{i}"), "s", "read"), end(Outcome::Ok, ""))
            .unwrap();
    }
    journal.flush().await.unwrap();
    journal
        .started(start("c5", "other", "write"))
        .await
        .unwrap();
    // Queued, maybe committed, maybe not when the kill lands.
    let _ = journal
        .finish("c2", end(Outcome::Ok, "raced the kill"))
        .unwrap();
    let mut out = std::io::stdout();
    writeln!(out, "\nready").unwrap();
    out.flush().unwrap();
    std::thread::sleep(Duration::from_secs(60));
    panic!("the parent test never killed this child");
}

#[tokio::test]
async fn sigkill_mid_call_marks_in_flight_calls_interrupted() {
    if let Some(path) = std::env::var_os(CHILD_ENV) {
        child(Path::new(&path)).await;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = journal_path(dir.path());
    let mut proc = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", THIS_TEST, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = proc.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if line.trim() == "ready" {
                let _ = tx.send(());
            }
        }
    });
    let ready = rx.recv_timeout(Duration::from_secs(30));
    if ready.is_err() {
        let _ = proc.kill();
        panic!("the child never got ready");
    }
    // While the child lives, its lock keeps this process out.
    let err = CallJournal::open(&path).unwrap_err();
    assert!(matches!(err, JournalError::Locked { .. }), "{err}");

    proc.kill().unwrap(); // SIGKILL
    let status = proc.wait().unwrap();
    assert!(!status.success());

    let (journal, report) = CallJournal::open(&path).unwrap();
    let interrupted: BTreeSet<String> = report
        .interrupted
        .iter()
        .map(|c| c.call_id.clone())
        .collect();
    let must: BTreeSet<String> = ["c3", "c4", "c5"].map(String::from).into();
    let may: BTreeSet<String> = ["c2", "c3", "c4", "c5"].map(String::from).into();
    assert!(
        interrupted.is_superset(&must) && interrupted.is_subset(&may),
        "{interrupted:?}"
    );
    let c5 = report
        .interrupted
        .iter()
        .find(|c| c.call_id == "c5")
        .unwrap();
    assert_eq!(
        (c5.session_key.as_str(), c5.tool.as_str()),
        ("other", "write")
    );

    // Every call has exactly one terminal record; committed ones are intact.
    let open: i64 = raw(&path)
        .query_row(
            "SELECT COUNT(*) FROM calls WHERE outcome IS NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(open, 0);
    assert_eq!(super::count_rows(&path), 9);
    assert_eq!(
        journal.get("c0").unwrap().unwrap().outcome(),
        Some(Outcome::Ok)
    );
    assert_eq!(
        journal.get("c1").unwrap().unwrap().outcome(),
        Some(Outcome::Error)
    );
    let c2 = journal.get("c2").unwrap().unwrap().outcome();
    assert!(
        matches!(c2, Some(Outcome::Ok | Outcome::Interrupted)),
        "{c2:?}"
    );
    for id in &interrupted {
        let record = journal.get(id).unwrap().unwrap();
        let e = record.end.unwrap();
        assert_eq!(e.outcome, Outcome::Interrupted);
        assert!(e.summary.contains("not re-run"), "{}", e.summary);
    }
    // A late terminal record from a confused caller cannot overwrite it.
    assert_eq!(
        journal.finish("c3", end(Outcome::Ok, "too late")).unwrap(),
        talon_journal::FinishAck::AlreadyFinished(Outcome::Interrupted)
    );
    // Recovery runs once: the next open finds nothing more to do.
    drop(journal);
    let (_journal, again) = CallJournal::open(&path).unwrap();
    assert!(again.interrupted.is_empty());
}
