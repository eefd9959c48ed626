use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::record::SessionStatus;
use crate::sqlite::{COMPONENT, SCHEMA_VERSION};
use talon_tasks::{open_database, set_schema_version};

/// One engine's storage for one test.
trait Engine {
    /// A store on this test's storage (a reopen, or another gateway).
    fn try_open(&self) -> Result<SessionStore>;
    /// Record a schema version newer than this build's.
    fn bump_schema(&self);
    fn open(&self) -> SessionStore {
        self.try_open().unwrap()
    }
}

struct Sqlite(tempfile::TempDir);

fn sqlite() -> Sqlite {
    Sqlite(tempfile::tempdir().unwrap())
}

impl Engine for Sqlite {
    fn try_open(&self) -> Result<SessionStore> {
        SessionStore::open(&self.0.path().join("talon.db"))
    }
    fn bump_schema(&self) {
        let conn = open_database(&self.0.path().join("talon.db")).unwrap();
        set_schema_version(&conn, COMPONENT, SCHEMA_VERSION + 1).unwrap();
    }
}

/// A fresh database on the test process's PostgreSQL server; each
/// [`Engine::try_open`] is a new pool, as another gateway would have.
struct Postgres(talon_test_support::postgres::TestDb);

fn postgres() -> Postgres {
    Postgres(talon_test_support::postgres::shared_database().unwrap())
}

impl Postgres {
    fn pool(&self) -> talon_state::PgPool {
        talon_state::PgPool::connect(self.0.config().with_pool_size(2)).unwrap()
    }
}

impl Engine for Postgres {
    fn try_open(&self) -> Result<SessionStore> {
        SessionStore::open_postgres(&self.pool())
    }
    fn bump_schema(&self) {
        self.pool()
            .run(|c| {
                c.execute(
                    "UPDATE talon_schema SET version = version + 1 WHERE store = 'sessions'",
                    &[],
                )?;
                Ok(())
            })
            .unwrap();
    }
}

/// One `#[test]` per engine for each test body `fn name(e: &dyn Engine)`.
macro_rules! on_every_engine {
    ($($name:ident),+ $(,)?) => {
        mod sqlite {
            $(
                #[test]
                fn $name() {
                    super::$name(&super::sqlite());
                }
            )+
        }
        mod postgres {
            $(
                #[test]
                fn $name() {
                    super::$name(&super::postgres());
                }
            )+
        }
    };
}

on_every_engine!(
    sessions_and_messages_survive_reopening_the_database,
    saving_again_keeps_the_creation_time_and_reopens,
    list_filters_by_agent_time_and_status_newest_first,
    the_spawn_tree_is_walked_both_ways,
    a_cyclic_parent_chain_ends_the_walk,
    messages_page_backwards_and_long_text_is_cut_at_a_char_boundary,
    bad_records_are_refused_and_change_nothing,
    a_newer_schema_is_refused_with_what_to_do,
    search_matches_every_word_literally_within_the_given_sessions,
    search_folds_ascii_case_only,
    a_nul_character_is_stored_as_a_replacement_character,
    a_session_saved_through_one_store_is_used_through_another,
    a_close_through_one_store_is_seen_through_another,
);

fn record(key: &str, parent: Option<&str>, at: u64) -> SessionRecord {
    SessionRecord {
        key: key.to_owned(),
        agent_id: "ops".to_owned(),
        parent_key: parent.map(str::to_owned),
        spawn_depth: u32::from(parent.is_some()),
        label: None,
        status: SessionStatus::Open,
        created_at_ms: at,
        updated_at_ms: at,
        params: json!({"agentId": "ops", "sessionKey": key}),
    }
}

fn sessions_and_messages_survive_reopening_the_database(e: &dyn Engine) {
    let store = e.open();
    store.save(&record("agent:ops:main", None, 10)).unwrap();
    store
        .append_message(
            "agent:ops:main",
            Role::User,
            Some("agent:dev:main"),
            "hello",
            20,
        )
        .unwrap();
    drop(store);
    let again = e.open();
    let got = again.get("agent:ops:main").unwrap().unwrap();
    assert_eq!(got.created_at_ms, 10);
    assert_eq!(got.updated_at_ms, 20, "a message updates the session");
    assert_eq!(got.params["sessionKey"], "agent:ops:main");
    let msgs = again.messages("agent:ops:main", 0, None).unwrap();
    assert_eq!(msgs.len(), 1);
    assert_eq!(msgs[0].text, "hello");
    assert_eq!(msgs[0].source.as_deref(), Some("agent:dev:main"));
}

fn saving_again_keeps_the_creation_time_and_reopens(e: &dyn Engine) {
    let store = e.open();
    store.save(&record("k", None, 10)).unwrap();
    assert!(store.close("k", 15).unwrap());
    assert_eq!(
        store.get("k").unwrap().unwrap().status,
        SessionStatus::Closed
    );
    let mut again = record("k", None, 30);
    again.label = Some("second".into());
    store.save(&again).unwrap();
    let got = store.get("k").unwrap().unwrap();
    assert_eq!(got.created_at_ms, 10);
    assert_eq!(got.updated_at_ms, 30);
    assert_eq!(got.status, SessionStatus::Open);
    assert_eq!(got.label.as_deref(), Some("second"));
    // Touching with an older time never moves it back.
    assert!(store.touch("k", 5).unwrap());
    assert_eq!(store.get("k").unwrap().unwrap().updated_at_ms, 30);
    assert!(!store.touch("missing", 5).unwrap());
    assert!(!store.close("missing", 5).unwrap());
}

fn list_filters_by_agent_time_and_status_newest_first(e: &dyn Engine) {
    let store = e.open();
    store.save(&record("a", None, 10)).unwrap();
    store.save(&record("b", None, 20)).unwrap();
    let mut dev = record("c", None, 30);
    dev.agent_id = "dev".into();
    store.save(&dev).unwrap();
    store.close("a", 11).unwrap();
    let keys = |q: ListQuery| -> Vec<String> {
        store.list(&q).unwrap().into_iter().map(|r| r.key).collect()
    };
    assert_eq!(keys(ListQuery::default()), ["c", "b"]);
    assert_eq!(
        keys(ListQuery {
            include_closed: true,
            ..ListQuery::default()
        }),
        ["c", "b", "a"]
    );
    assert_eq!(
        keys(ListQuery {
            agent_id: Some("ops".into()),
            include_closed: true,
            ..ListQuery::default()
        }),
        ["b", "a"]
    );
    assert_eq!(
        keys(ListQuery {
            updated_since_ms: Some(20),
            ..ListQuery::default()
        }),
        ["c", "b"]
    );
    assert_eq!(
        keys(ListQuery {
            limit: 1,
            ..ListQuery::default()
        }),
        ["c"]
    );
}

fn the_spawn_tree_is_walked_both_ways(e: &dyn Engine) {
    let store = e.open();
    store.save(&record("root", None, 1)).unwrap();
    store.save(&record("child", Some("root"), 2)).unwrap();
    store.save(&record("grandchild", Some("child"), 3)).unwrap();
    store.save(&record("other", None, 4)).unwrap();
    assert_eq!(store.descendants("root").unwrap(), ["child", "grandchild"]);
    assert_eq!(store.descendants("child").unwrap(), ["grandchild"]);
    assert!(store.descendants("other").unwrap().is_empty());
    assert!(store.is_descendant("root", "grandchild").unwrap());
    assert!(!store.is_descendant("child", "root").unwrap());
    assert!(!store.is_descendant("other", "child").unwrap());
    assert!(!store.is_descendant("root", "root").unwrap());
}

fn a_cyclic_parent_chain_ends_the_walk(e: &dyn Engine) {
    let store = e.open();
    store.save(&record("x", Some("y"), 1)).unwrap();
    store.save(&record("y", Some("x"), 1)).unwrap();
    assert!(!store.is_descendant("z", "x").unwrap());
    let d = store.descendants("x").unwrap();
    assert_eq!(d, ["y"], "the walk is bounded and does not repeat");
}

fn messages_page_backwards_and_long_text_is_cut_at_a_char_boundary(e: &dyn Engine) {
    let store = e.open();
    store.save(&record("k", None, 1)).unwrap();
    for i in 0..5 {
        store
            .append_message("k", Role::Assistant, None, &format!("m{i}"), 10 + i)
            .unwrap();
    }
    let last2 = store.messages("k", 2, None).unwrap();
    assert_eq!(
        last2.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(),
        ["m3", "m4"]
    );
    let before = store.messages("k", 2, Some(last2[0].seq)).unwrap();
    assert_eq!(
        before.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(),
        ["m1", "m2"]
    );
    let long = "é".repeat(MAX_MESSAGE_BYTES);
    let m = store
        .append_message("k", Role::User, None, &long, 99)
        .unwrap();
    assert!(m.truncated);
    assert!(m.text.len() <= MAX_MESSAGE_BYTES);
    assert!(m.text.chars().all(|c| c == 'é'));
}

fn bad_records_are_refused_and_change_nothing(e: &dyn Engine) {
    let store = e.open();
    let cases = [
        (record("", None, 1), "sessionKey"),
        (record("a\nb", None, 1), "sessionKey"),
        (
            record(&"k".repeat(MAX_KEY_BYTES + 1), None, 1),
            "sessionKey",
        ),
        (record("self", Some("self"), 1), "parentSessionKey"),
    ];
    for (r, field) in cases {
        match store.save(&r) {
            Err(StoreError::Invalid { field: f, .. }) => assert_eq!(f, field),
            other => panic!("{field}: {other:?}"),
        }
    }
    let mut labelled = record("k", None, 1);
    labelled.label = Some("x".repeat(MAX_LABEL_CHARS + 1));
    assert_eq!(store.save(&labelled).unwrap_err().code(), "session.invalid");
    assert!(
        store
            .list(&ListQuery {
                include_closed: true,
                ..ListQuery::default()
            })
            .unwrap()
            .is_empty()
    );
    let err = store
        .append_message("nope", Role::User, None, "x", 1)
        .unwrap_err();
    assert!(err.to_string().contains("no session `nope`"), "{err}");
}

fn a_newer_schema_is_refused_with_what_to_do(e: &dyn Engine) {
    drop(e.open());
    e.bump_schema();
    let err = e.try_open().unwrap_err();
    assert_eq!(err.code(), "session.store_newer");
    assert!(err.to_string().contains("upgrade Talon"), "{err}");
}

#[test]
fn the_store_shares_the_database_with_the_task_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("talon.db");
    let ledger = talon_tasks::TaskLedger::open(&path).unwrap();
    let store = SessionStore::open(&path).unwrap();
    store.save(&record("k", None, 1)).unwrap();
    drop(ledger);
    assert!(store.get("k").unwrap().is_some());
}

fn search_matches_every_word_literally_within_the_given_sessions(e: &dyn Engine) {
    let store = e.open();
    store.save(&record("a", None, 1)).unwrap();
    store.save(&record("b", None, 1)).unwrap();
    let say = |k: &str, t: &str| {
        store.append_message(k, Role::User, None, t, 5).unwrap();
    };
    say("a", "Deploy the API to staging");
    say("a", "rollback done: 100% of traffic");
    say("a", "file_name with underscore");
    say("b", "deploy the API to production");
    let keys = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let texts = |hits: Vec<MessageRecord>| hits.into_iter().map(|m| m.text).collect::<Vec<_>>();
    assert_eq!(
        texts(
            store
                .search_messages(&keys(&["a", "b"]), "deploy api", 10)
                .unwrap()
        ),
        ["deploy the API to production", "Deploy the API to staging"],
        "every word, ASCII case-insensitive, newest first"
    );
    assert_eq!(
        texts(store.search_messages(&keys(&["a"]), "deploy", 10).unwrap()),
        ["Deploy the API to staging"],
        "only the sessions given"
    );
    // Pattern characters are plain text.
    assert_eq!(
        texts(store.search_messages(&keys(&["a"]), "100%", 10).unwrap()),
        ["rollback done: 100% of traffic"]
    );
    assert!(store.search_messages(&keys(&["a"]), "%", 10).unwrap().len() == 1);
    assert_eq!(
        texts(store.search_messages(&keys(&["a"]), "e_n", 10).unwrap()),
        ["file_name with underscore"]
    );
    assert!(
        store
            .search_messages(&keys(&["a"]), "f_le", 10)
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .search_messages(&keys(&["a"]), "   ", 10)
            .unwrap()
            .is_empty()
    );
    assert!(store.search_messages(&[], "deploy", 10).unwrap().is_empty());
    assert_eq!(
        store
            .search_messages(&keys(&["a", "b"]), "the", 1)
            .unwrap()
            .len(),
        1
    );
}

fn search_folds_ascii_case_only(e: &dyn Engine) {
    let store = e.open();
    store.save(&record("a", None, 1)).unwrap();
    store
        .append_message("a", Role::User, None, "Éclair RECIPE", 2)
        .unwrap();
    let keys = vec!["a".to_owned()];
    let hits = |q: &str| store.search_messages(&keys, q, 10).unwrap().len();
    assert_eq!(hits("recipe"), 1, "ASCII letters fold");
    assert_eq!(hits("Éclair"), 1);
    assert_eq!(hits("éclair"), 0, "other letters match exactly");
    assert_eq!(hits("ÉCLAIR"), 1, "the ASCII letters of a word fold");
    assert_eq!(hits("éCLAIR"), 0);
    assert_eq!(hits("Écl recipe"), 1);
    assert_eq!(hits("\\"), 0, "a backslash is a literal");
}

fn a_nul_character_is_stored_as_a_replacement_character(e: &dyn Engine) {
    let store = e.open();
    store.save(&record("a", None, 1)).unwrap();
    let m = store
        .append_message("a", Role::User, Some("x\0y"), "before\0after", 2)
        .unwrap();
    assert_eq!(m.text, "before\u{FFFD}after");
    let stored = store.messages("a", 0, None).unwrap();
    assert_eq!(stored, [m]);
    assert_eq!(stored[0].source.as_deref(), Some("x\u{FFFD}y"));
}

fn a_session_saved_through_one_store_is_used_through_another(e: &dyn Engine) {
    // Two stores on one database: two gateways (two pools on PostgreSQL).
    let a = e.open();
    let b = e.open();
    a.save(&record("agent:ops:main", None, 10)).unwrap();
    b.save(&record("agent:ops:subagent:1", Some("agent:ops:main"), 11))
        .unwrap();
    assert_eq!(
        b.get("agent:ops:main").unwrap().unwrap().params["sessionKey"],
        "agent:ops:main"
    );
    assert_eq!(
        a.descendants("agent:ops:main").unwrap(),
        ["agent:ops:subagent:1"]
    );
    // Both append at once; every message lands once, in one order for all.
    std::thread::scope(|s| {
        for (n, store) in [("A", &a), ("B", &b)] {
            s.spawn(move || {
                for i in 0..20u64 {
                    store
                        .append_message(
                            "agent:ops:main",
                            Role::User,
                            None,
                            &format!("from-{n} number {i}"),
                            100 + i,
                        )
                        .unwrap();
                }
            });
        }
    });
    let seen_a = a.messages("agent:ops:main", 0, None).unwrap();
    let seen_b = b.messages("agent:ops:main", 0, None).unwrap();
    assert_eq!(seen_a.len(), 40);
    assert_eq!(seen_a, seen_b);
    assert!(seen_a.windows(2).all(|w| w[0].seq < w[1].seq));
    let keys = vec!["agent:ops:main".to_owned()];
    assert_eq!(
        b.search_messages(&keys, "FROM-b number", 100)
            .unwrap()
            .len(),
        20
    );
    assert_eq!(a.get("agent:ops:main").unwrap().unwrap().updated_at_ms, 119);
    assert!(b.close("agent:ops:main", 200).unwrap());
    assert_eq!(
        a.get("agent:ops:main").unwrap().unwrap().status,
        SessionStatus::Closed
    );
}

#[test]
fn a_lost_postgres_database_fails_calls_as_unavailable() {
    use talon_test_support::postgres::PgServer;
    let mut server = PgServer::start().unwrap();
    let name = server.create_database().unwrap();
    let pool = talon_state::PgPool::connect(server.config(&name).with_pool_size(1)).unwrap();
    let store = SessionStore::open_postgres(&pool).unwrap();
    store.save(&record("k", None, 1)).unwrap();
    server.stop().unwrap();
    for err in [
        store.get("k").unwrap_err(),
        store.save(&record("k2", None, 2)).unwrap_err(),
        store
            .append_message("k", Role::User, None, "lost?", 3)
            .unwrap_err(),
        store.search_messages(&["k".into()], "lost", 5).unwrap_err(),
    ] {
        assert!(err.is_unavailable(), "{err}");
        assert_eq!(err.code(), "session.unavailable");
        assert!(matches!(
            err,
            StoreError::State(talon_state::StateError::Unavailable { .. })
        ));
    }
}

fn a_close_through_one_store_is_seen_through_another(e: &dyn Engine) {
    let a = e.open();
    let b = e.open();
    for key in ["agent:ops:one", "agent:ops:two", "agent:ops:three"] {
        a.save(&record(key, None, 10)).unwrap();
    }
    let keys: Vec<String> = ["agent:ops:one", "agent:ops:two", "agent:ops:nowhere"]
        .map(str::to_owned)
        .to_vec();
    assert!(b.closed_among(&keys).unwrap().is_empty());
    assert!(b.closed_among(&[]).unwrap().is_empty());
    assert!(a.close("agent:ops:two", 20).unwrap());
    assert!(a.close("agent:ops:three", 20).unwrap());
    // Only the asked keys, only the closed ones; an unknown key is left out.
    assert_eq!(
        b.closed_among(&keys).unwrap(),
        vec!["agent:ops:two".to_owned()]
    );
}
