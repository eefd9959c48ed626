use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Map, json};

use super::*;
use crate::approval::GrantStore;
use crate::event::ApprovalSpec;

fn key(scope: ApprovalScope, value: &str, tool: &str) -> GrantKey {
    GrantKey {
        scope,
        scope_value: value.into(),
        plugin_id: "guard".into(),
        tool_name: tool.into(),
        fingerprint: "f".repeat(32),
    }
}

#[test]
fn grants_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let a = key(ApprovalScope::Session, "s1", "exec");
    let b = key(ApprovalScope::Global, "", "write");
    {
        let store = SqliteGrantStore::open_in_state_dir(dir.path()).unwrap();
        assert_eq!(store.path(), dir.path().join("approvals.sqlite"));
        store.grant(&a, "id-1").unwrap();
        store.grant(&b, "id-2").unwrap();
        store.grant(&a, "id-3").unwrap();
    }
    let store = SqliteGrantStore::open_in_state_dir(dir.path()).unwrap();
    assert!(store.is_granted(&a).unwrap());
    assert!(store.is_granted(&b).unwrap());
    assert!(
        !store
            .is_granted(&key(ApprovalScope::Session, "s2", "exec"))
            .unwrap()
    );
    assert!(
        !store
            .is_granted(&key(ApprovalScope::Agent, "s1", "exec"))
            .unwrap()
    );
    assert_eq!(store.list().unwrap(), vec![a.clone(), b.clone()]);
    assert!(store.revoke(&a).unwrap());
    assert!(!store.revoke(&a).unwrap());
    assert_eq!(store.list().unwrap(), vec![b]);
}

#[test]
fn sets_wal_mode_and_schema_version() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.sqlite");
    drop(SqliteGrantStore::open(&path).unwrap());
    let conn = Connection::open(&path).unwrap();
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    let mode: String = conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    assert_eq!(mode, "wal");
}

#[test]
fn records_decisions_without_params() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.sqlite");
    let store = SqliteGrantStore::open(&path).unwrap();
    let request = ApprovalRequest::new(
        &ApprovalSpec::default(),
        "call-7",
        "exec",
        &Map::new(),
        "agent",
        "session",
        Duration::from_secs(1),
    );
    store
        .record_decision(&request, ApprovalDecision::Deny)
        .unwrap();
    let conn = Connection::open(&path).unwrap();
    let row: (String, String, String, String) = conn
        .query_row(
            "SELECT approval_id, call_id, params_hash, decision FROM decisions",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(
        row,
        (
            request.id.clone(),
            "call-7".to_owned(),
            request.params_hash.clone(),
            "deny".to_owned()
        )
    );
}

#[cfg(unix)]
#[test]
fn creates_private_directory_and_file() {
    use std::os::unix::fs::PermissionsExt as _;

    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state").join("nested");
    let store = SqliteGrantStore::open_in_state_dir(&state).unwrap();
    store
        .grant(&key(ApprovalScope::Global, "", "exec"), "id")
        .unwrap();
    let file_mode = std::fs::metadata(store.path())
        .unwrap()
        .permissions()
        .mode();
    let dir_mode = std::fs::metadata(&state).unwrap().permissions().mode();
    assert_eq!(file_mode & 0o777, 0o600);
    assert_eq!(dir_mode & 0o777, 0o700);
}

#[cfg(unix)]
#[test]
fn tightens_an_existing_loose_file() {
    use std::os::unix::fs::PermissionsExt as _;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.sqlite");
    std::fs::write(&path, b"").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    drop(SqliteGrantStore::open(&path).unwrap());
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn corrupt_file_is_a_store_error_with_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.sqlite");
    std::fs::write(&path, vec![0x5a_u8; 8192]).unwrap();
    let err = SqliteGrantStore::open(&path).unwrap_err();
    match &err {
        Error::Store {
            path: err_path,
            message,
        } => {
            assert_eq!(err_path, &path);
            assert!(message.contains("not a database"), "{message}");
        }
        other => panic!("unexpected error {other:?}"),
    }
    let text = err.to_string();
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(text.contains("move it aside"), "{text}");
}

#[test]
fn newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.sqlite");
    drop(SqliteGrantStore::open(&path).unwrap());
    Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
    let err = SqliteGrantStore::open(&path).unwrap_err();
    assert!(
        matches!(&err, Error::Store { path: p, message } if p == &path && message.contains("newer")),
        "{err}"
    );
}

#[test]
fn decision_rows_are_pruned() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.sqlite");
    let store = SqliteGrantStore::open(&path).unwrap();
    let request = ApprovalRequest::new(
        &ApprovalSpec::default(),
        "c",
        "t",
        &Map::new(),
        "a",
        "s",
        Duration::ZERO,
    );
    {
        // Seed the table just under the cap directly, then cross it.
        let conn = store.lock();
        conn.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
             INSERT INTO decisions (approval_id, call_id, params_hash, tool_name, plugin_id,
                 scope, agent_id, session_key, decision, requested_at_ms, decided_at_ms)
             SELECT 'old', '', '', '', '', '', '', '', 'deny', 0, 0 FROM n",
            params![MAX_DECISION_ROWS],
        )
        .unwrap();
    }
    store
        .record_decision(&request, ApprovalDecision::AllowOnce)
        .unwrap();
    let count: i64 = store
        .lock()
        .query_row("SELECT count(*) FROM decisions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(count, MAX_DECISION_ROWS);
}

/// The version-1 schema, as an older build wrote it.
const SCHEMA_V1: &str = "
CREATE TABLE grants (
    scope TEXT NOT NULL,
    scope_value TEXT NOT NULL,
    plugin_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    approval_id TEXT NOT NULL,
    granted_at_ms INTEGER NOT NULL,
    UNIQUE (scope, scope_value, plugin_id, tool_name)
);
CREATE TABLE decisions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    approval_id TEXT NOT NULL,
    call_id TEXT NOT NULL,
    params_hash TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    plugin_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    session_key TEXT NOT NULL,
    decision TEXT NOT NULL,
    requested_at_ms INTEGER NOT NULL,
    decided_at_ms INTEGER NOT NULL
);
INSERT INTO grants VALUES ('global', '', 'guard', 'exec', 'old-id', 1);
INSERT INTO grants VALUES ('session', 's1', 'guard', 'write', 'old-id-2', 2);
INSERT INTO decisions (approval_id, call_id, params_hash, tool_name, plugin_id, scope,
    agent_id, session_key, decision, requested_at_ms, decided_at_ms)
VALUES ('old-id', 'c', 'h', 'exec', 'guard', 'global', 'a', 's', 'allow-always', 1, 2);
PRAGMA user_version = 1;
";

#[test]
fn a_version_1_database_loses_its_grants_and_keeps_its_decisions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.sqlite");
    Connection::open(&path)
        .unwrap()
        .execute_batch(SCHEMA_V1)
        .unwrap();
    let store = SqliteGrantStore::open(&path).unwrap();
    // Old grants answered any question from the plugin and tool: gone.
    assert_eq!(store.list().unwrap(), vec![]);
    for fingerprint in [String::new(), "f".repeat(32)] {
        let old = GrantKey {
            fingerprint,
            ..key(ApprovalScope::Global, "", "exec")
        };
        assert!(!store.is_granted(&old).unwrap());
    }
    let (version, decisions, columns): (i64, i64, String) = {
        let conn = store.lock();
        (
            conn.pragma_query_value(None, "user_version", |r| r.get(0))
                .unwrap(),
            conn.query_row("SELECT count(*) FROM decisions", [], |r| r.get(0))
                .unwrap(),
            conn.query_row(
                "SELECT group_concat(name, ',') FROM pragma_table_info('grants')",
                [],
                |r| r.get(0),
            )
            .unwrap(),
        )
    };
    assert_eq!(version, 2);
    assert_eq!(decisions, 1);
    assert!(columns.contains("fingerprint"), "{columns}");
    // The migrated store works, and a reopen does not migrate again.
    let a = key(ApprovalScope::Global, "", "exec");
    store.grant(&a, "new-id").unwrap();
    drop(store);
    let store = SqliteGrantStore::open(&path).unwrap();
    assert_eq!(store.list().unwrap(), vec![a.clone()]);
    assert!(store.is_granted(&a).unwrap());
}

#[test]
fn the_fingerprint_is_part_of_the_unique_key() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteGrantStore::open_in_state_dir(dir.path()).unwrap();
    let info = key(ApprovalScope::Session, "s1", "exec");
    let other = GrantKey {
        fingerprint: "0".repeat(32),
        ..info.clone()
    };
    store.grant(&info, "id-1").unwrap();
    assert!(store.is_granted(&info).unwrap());
    assert!(!store.is_granted(&other).unwrap());
    store.grant(&other, "id-2").unwrap();
    store.grant(&info, "id-3").unwrap();
    assert_eq!(store.list().unwrap(), vec![info.clone(), other.clone()]);
    assert!(store.revoke(&other).unwrap());
    assert!(!store.is_granted(&other).unwrap());
    assert!(store.is_granted(&info).unwrap());
    assert_eq!(store.list().unwrap(), vec![info]);
}

#[test]
fn grants_from_real_requests_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteGrantStore::open_in_state_dir(dir.path()).unwrap();
    let request = ApprovalRequest::new(
        &ApprovalSpec {
            title: "Run".into(),
            description: "ls".into(),
            ..ApprovalSpec::default()
        },
        "c",
        "exec",
        &Map::new(),
        "a",
        "s",
        Duration::ZERO,
    );
    store.grant(&request.grant_key(), &request.id).unwrap();
    assert_eq!(store.list().unwrap(), vec![request.grant_key()]);
    let mut reworded = request.clone();
    reworded.description = "rm -rf /".into();
    assert!(store.is_granted(&request.grant_key()).unwrap());
    assert!(!store.is_granted(&reworded.grant_key()).unwrap());
}

#[test]
fn params_and_their_preview_are_never_stored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.sqlite");
    let store = SqliteGrantStore::open(&path).unwrap();
    let marker = "sk-live-PARAMS-MARKER-5f3a9c";
    let mut params = Map::new();
    params.insert(
        "command".into(),
        json!(format!("curl -H 'Authorization: {marker}'")),
    );
    let request = ApprovalRequest::new(
        &ApprovalSpec {
            title: "Run".into(),
            description: "curl".into(),
            ..ApprovalSpec::default()
        },
        "call-1",
        "exec",
        &params,
        "agent",
        "session",
        Duration::from_secs(1),
    );
    assert!(request.params_preview.contains(marker));
    for decision in [ApprovalDecision::AllowAlways, ApprovalDecision::Deny] {
        store.record_decision(&request, decision).unwrap();
    }
    store.grant(&request.grant_key(), &request.id).unwrap();
    // No column holds them...
    let columns: String = store
        .lock()
        .query_row(
            "SELECT group_concat(name, ',') FROM pragma_table_info('decisions')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        columns,
        "id,approval_id,call_id,params_hash,tool_name,plugin_id,scope,agent_id,session_key,\
         decision,requested_at_ms,decided_at_ms"
    );
    // ...and no byte of the database (or its WAL) does.
    drop(store);
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let file = entry.unwrap().path();
        let bytes = std::fs::read(&file).unwrap();
        if bytes
            .windows(marker.len())
            .any(|window| window == marker.as_bytes())
        {
            found.push(file);
        }
    }
    assert_eq!(found, Vec::<std::path::PathBuf>::new());
}

fn request(call: &str) -> ApprovalRequest {
    ApprovalRequest::new(
        &ApprovalSpec::default(),
        call,
        "exec",
        &Map::new(),
        "agent",
        "session",
        Duration::from_secs(60),
    )
}

#[test]
fn a_pending_approval_left_by_a_crash_is_denied_at_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    let waiting = request("call-crash");
    let answered = request("call-answered");
    {
        // The process "crashes": the waiting request never gets a decision.
        let store = SqliteGrantStore::open_in_state_dir(dir.path()).unwrap();
        assert!(store.add_pending(&waiting).unwrap());
        assert!(store.add_pending(&answered).unwrap());
        store
            .record_decision(&answered, ApprovalDecision::AllowOnce)
            .unwrap();
    }
    let store = SqliteGrantStore::open_in_state_dir(dir.path()).unwrap();
    assert_eq!(store.recover_pending().unwrap(), vec![waiting.id.clone()]);
    assert_eq!(store.decisions_for(&waiting.id).unwrap(), vec!["deny"]);
    // An answered request is not touched by recovery.
    assert_eq!(
        store.decisions_for(&answered.id).unwrap(),
        vec!["allow-once"]
    );
    // Recovery happens once.
    assert_eq!(store.recover_pending().unwrap(), Vec::<String>::new());
    assert_eq!(store.decisions_for(&waiting.id).unwrap(), vec!["deny"]);
}

#[tokio::test]
async fn the_broker_records_a_request_as_pending_until_it_is_decided() {
    use crate::approval::{ApprovalBroker, SqliteApprovalBroker};
    let dir = tempfile::tempdir().unwrap();
    let broker = std::sync::Arc::new(SqliteApprovalBroker::open_in_state_dir(dir.path()).unwrap());
    let req = request("call-live");
    let id = req.id.clone();
    let waiter = {
        let broker = std::sync::Arc::clone(&broker);
        tokio::spawn(async move {
            broker
                .request(req, &talon_tool_catalog::CancellationToken::new())
                .await
        })
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while broker.pending().is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // While a human is asked, the database holds the request as pending.
    let conn = Connection::open(dir.path().join("approvals.sqlite")).unwrap();
    let pending: i64 = conn
        .query_row(
            "SELECT count(*) FROM pending WHERE approval_id = ?1",
            [&id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(pending, 1);
    broker.resolve(&id, ApprovalDecision::AllowOnce, None);
    let resolution = waiter.await.unwrap();
    assert_eq!(resolution.decision, ApprovalDecision::AllowOnce);
    let pending: i64 = conn
        .query_row("SELECT count(*) FROM pending", [], |r| r.get(0))
        .unwrap();
    assert_eq!(pending, 0);
}
