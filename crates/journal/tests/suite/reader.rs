use talon_journal::{CallJournal, FinishAck, JournalReader, Outcome};

use super::{end, journal_path, start};

#[tokio::test]
async fn a_reader_sees_committed_calls_while_the_owner_keeps_writing() {
    let dir = tempfile::tempdir().unwrap();
    let path = journal_path(dir.path());
    let (journal, _) = CallJournal::open(&path).unwrap();
    journal.started(start("c1", "s1", "exec")).await.unwrap();
    for (id, session) in [("c2", "s1"), ("c3", "other")] {
        let ack = journal
            .record(start(id, session, "read"), end(Outcome::Ok, "fine"))
            .unwrap();
        assert_eq!(ack, FinishAck::Queued);
    }
    journal.flush().await.unwrap();
    // The owner still holds its lock; the reader needs none.
    let reader = JournalReader::open(&path).unwrap();
    let calls = reader.history("s1", 10).unwrap();
    let ids: Vec<&str> = calls.iter().map(|c| c.call_id.as_str()).collect();
    assert_eq!(ids, ["c2", "c1"], "newest first, only this session");
    assert!(calls[1].end.is_none(), "an in-flight call is seen as such");
    let ack = journal.finish("c1", end(Outcome::Error, "boom")).unwrap();
    assert_eq!(ack, FinishAck::Queued);
    journal.flush().await.unwrap();
    let again = reader.history("s1", 10).unwrap();
    assert_eq!(
        again[1].end.as_ref().map(|e| e.outcome),
        Some(Outcome::Error)
    );
    assert!(reader.history("s1", 0).unwrap().is_empty());
}

#[test]
fn a_missing_journal_is_an_error_and_nothing_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("none.sqlite");
    assert!(JournalReader::open(&path).is_err());
    assert!(!path.exists());
}
