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
        (
            c5.session_key.as_str(),
            c5.tool.as_str(),
            c5.tool_call_id.as_deref()
        ),
        ("other", "write", Some("tc-c5"))
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
    let rows: i64 = raw(&path)
        .query_row("SELECT COUNT(*) FROM calls", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 9);
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
        // Recovery rewrote the summary, never the caller's id: a client
        // that never got its reply finds its call by that id.
        let tool_call_id = format!("tc-{id}");
        assert_eq!(record.tool_call_id.as_deref(), Some(tool_call_id.as_str()));
        let found = journal
            .find_tool_call(&record.session_key, &tool_call_id)
            .unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].call_id, *id);
        assert_eq!(found[0].outcome(), Some(Outcome::Interrupted));
    }
    // Completed calls are found by their id too; another session's id
    // finds nothing.
    let c0 = journal.find_tool_call("s", "tc-c0").unwrap();
    assert_eq!(c0[0].outcome(), Some(Outcome::Ok));
    assert!(journal.find_tool_call("other", "tc-c0").unwrap().is_empty());
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

/// The version-1 schema, as a journal written before `tool_call_id` had its
/// own column left it.
const SCHEMA_V1: &str = "
CREATE TABLE calls (
    seq            INTEGER PRIMARY KEY,
    call_id        TEXT    NOT NULL UNIQUE,
    session_key    TEXT    NOT NULL,
    agent_id       TEXT    NOT NULL,
    tool           TEXT    NOT NULL,
    params_digest  TEXT    NOT NULL,
    started_at_ms  INTEGER NOT NULL,
    write_ahead    INTEGER NOT NULL,
    outcome        TEXT CHECK (outcome IS NULL OR outcome IN
                       ('ok', 'error', 'blocked', 'timeout', 'cancelled', 'interrupted')),
    summary        TEXT,
    ended_at_ms    INTEGER,
    duration_us    INTEGER
);
CREATE INDEX calls_by_session ON calls (session_key, seq);
CREATE INDEX calls_in_flight ON calls (seq) WHERE outcome IS NULL;
CREATE TRIGGER calls_terminal_is_final
BEFORE UPDATE ON calls WHEN OLD.outcome IS NOT NULL
BEGIN
    SELECT RAISE(ABORT, 'a call''s terminal record is final');
END;
PRAGMA journal_mode = WAL;
PRAGMA user_version = 1;
";

/// A journal written by the previous schema opens: its rows are kept, a
/// call it left in flight is recovered, and new calls keep their id.
#[tokio::test]
async fn a_version_one_journal_is_migrated_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = journal_path(dir.path());
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    {
        let conn = raw(&path);
        conn.execute_batch(SCHEMA_V1).unwrap();
        let digest = "0".repeat(64);
        conn.execute(
            "INSERT INTO calls (call_id, session_key, agent_id, tool, params_digest,
                 started_at_ms, write_ahead, outcome, summary, ended_at_ms, duration_us)
             VALUES ('old-done', 's', 'main', 'read', ?1, ?2, 0, 'ok', 'toolCallId=t0', ?2, 1000)",
            rusqlite::params![digest, i64::try_from(super::recent_ms()).unwrap()],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO calls (call_id, session_key, agent_id, tool, params_digest,
                 started_at_ms, write_ahead)
             VALUES ('old-open', 's', 'main', 'exec', ?1, 1, 1)",
            [&digest],
        )
        .unwrap();
    }
    let (journal, report) = CallJournal::open(&path).unwrap();
    assert_eq!(report.interrupted.len(), 1);
    assert_eq!(report.interrupted[0].call_id, "old-open");
    assert_eq!(report.interrupted[0].tool_call_id, None);
    let version: i64 = raw(&path)
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, 2);
    let done = journal.get("old-done").unwrap().unwrap();
    assert_eq!(
        (done.outcome(), done.tool_call_id),
        (Some(Outcome::Ok), None)
    );
    journal.started(start("new", "s", "exec")).await.unwrap();
    assert_eq!(
        journal.find_tool_call("s", "tc-new").unwrap()[0].call_id,
        "new"
    );
    // Reopening does not migrate twice.
    drop(journal);
    let (journal, report) = CallJournal::open(&path).unwrap();
    assert_eq!(
        report.interrupted[0].tool_call_id.as_deref(),
        Some("tc-new")
    );
    assert_eq!(
        journal.get("old-done").unwrap().unwrap().call_id,
        "old-done"
    );
}
