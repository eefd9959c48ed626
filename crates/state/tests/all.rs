//! talon-state against a real PostgreSQL server.

use std::time::Duration;

use talon_state::{PgConfig, PgPool, StateError, lease, members};
use talon_test_support::postgres::{PgServer, shared_database};

static MIGRATIONS_V1: &[&str] = &["CREATE TABLE demo_items (id TEXT PRIMARY KEY)"];
static MIGRATIONS_V2: &[&str] = &[
    "CREATE TABLE demo_items (id TEXT PRIMARY KEY)",
    "ALTER TABLE demo_items ADD COLUMN note TEXT",
];

#[test]
fn migrations_run_once_and_a_newer_schema_is_refused() -> anyhow::Result<()> {
    let db = shared_database()?;
    let pool = db.pool()?;
    assert_eq!(pool.migrate("demo", MIGRATIONS_V2)?, 2);
    // Again: nothing to do, same version.
    assert_eq!(pool.migrate("demo", MIGRATIONS_V2)?, 2);
    let err = pool.migrate("demo", MIGRATIONS_V1).err();
    match err {
        Some(StateError::SchemaNewer {
            store,
            found,
            known,
        }) => {
            assert_eq!((store.as_str(), found, known), ("demo", 2, 1));
        }
        other => panic!("expected SchemaNewer, got {other:?}"),
    }
    // The refusal changed nothing: the v2 column is still there.
    pool.run(|c| {
        c.execute("INSERT INTO demo_items (id, note) VALUES ('a', 'b')", &[])?;
        Ok(())
    })?;
    Ok(())
}

#[test]
fn concurrent_migrations_from_several_pools_agree() -> anyhow::Result<()> {
    let db = shared_database()?;
    let pools: Vec<PgPool> = (0..4).map(|_| db.pool()).collect::<Result<_, _>>()?;
    let handles: Vec<_> = pools
        .into_iter()
        .map(|p| std::thread::spawn(move || p.migrate("demo", MIGRATIONS_V2)))
        .collect();
    for h in handles {
        let v = h.join().map_err(|_| anyhow::anyhow!("panicked"))??;
        assert_eq!(v, 2);
    }
    Ok(())
}

#[test]
fn a_lease_has_one_holder_and_a_stale_token_is_fenced() -> anyhow::Result<()> {
    let db = shared_database()?;
    let pool = db.pool()?;
    let ttl = Duration::from_millis(400);
    let a = lease::acquire(&pool, "cron", "member-a", ttl)?.ok_or_else(|| anyhow::anyhow!("a"))?;
    assert!(lease::acquire(&pool, "cron", "member-b", ttl)?.is_none());
    // Renewing keeps the token.
    let a2 = lease::renew(&pool, &a, ttl)?.ok_or_else(|| anyhow::anyhow!("renew"))?;
    assert_eq!(a2.token, a.token);
    assert_eq!(
        lease::current(&pool, "cron")?.map(|g| g.holder),
        Some("member-a".into())
    );
    std::thread::sleep(Duration::from_millis(600));
    // Lapsed: b takes it with a larger token; a can neither renew nor write.
    let b = lease::acquire(&pool, "cron", "member-b", ttl)?.ok_or_else(|| anyhow::anyhow!("b"))?;
    assert!(b.token > a.token);
    assert!(lease::renew(&pool, &a, ttl)?.is_none());
    let stale = a.token;
    let fenced = pool.run(move |c| {
        let mut tx = c.transaction()?;
        lease::fence(&mut tx, "cron", stale)?;
        tx.commit()?;
        Ok(())
    });
    assert!(matches!(fenced, Err(StateError::Fenced { token, .. }) if token == stale));
    let current = b.token;
    pool.run(move |c| {
        let mut tx = c.transaction()?;
        lease::fence(&mut tx, "cron", current)?;
        tx.commit()?;
        Ok(())
    })?;
    // Released: another can take it at once.
    lease::release(&pool, &b)?;
    let c = lease::acquire(&pool, "cron", "member-c", ttl)?.ok_or_else(|| anyhow::anyhow!("c"))?;
    assert!(c.token > b.token);
    Ok(())
}

#[test]
fn members_register_heartbeat_and_leave() -> anyhow::Result<()> {
    let db = shared_database()?;
    let pool = db.pool()?;
    let id = members::new_member_id()?;
    assert_eq!(id.len(), 32);
    let me = members::Member {
        id: id.clone(),
        host: "h".into(),
        pid: 42,
        listen: "127.0.0.1:1".into(),
        version: "0.1.0".into(),
        started_at_ms: 0,
        heartbeat_at_ms: 0,
        live: true,
    };
    members::register(&pool, &me)?;
    assert!(members::heartbeat(&pool, &id)?);
    let listed = members::list(&pool)?;
    assert_eq!(listed.len(), 1);
    assert!(listed[0].live);
    assert_eq!(listed[0].pid, 42);
    let live: Vec<String> = pool.run(|c| {
        Ok(c.query(members::LIVE_MEMBER_IDS_SQL, &[])?
            .iter()
            .map(|r| r.get(0))
            .collect())
    })?;
    assert_eq!(live, vec![id.clone()]);
    members::leave(&pool, &id)?;
    assert!(!members::heartbeat(&pool, &id)?);
    assert!(members::list(&pool)?.is_empty());
    Ok(())
}

#[test]
fn a_database_down_at_start_is_unavailable_and_a_lost_one_comes_back() -> anyhow::Result<()> {
    let mut server = PgServer::start()?;
    let name = server.create_database()?;
    let pool = PgPool::connect(server.config(&name).with_pool_size(2))?;
    server.stop()?;
    // Lost mid-run: typed unavailable, quickly.
    let err = pool
        .run(|c| Ok(c.simple_query("SELECT 1").map(drop)?))
        .err();
    assert!(
        err.as_ref().is_some_and(StateError::is_unavailable),
        "{err:?}"
    );
    // Down at start: unavailable.
    let mut cfg = server.config(&name);
    cfg.connect_timeout = Duration::from_secs(2);
    let err = PgPool::connect(cfg).err();
    assert!(
        err.as_ref().is_some_and(StateError::is_unavailable),
        "{err:?}"
    );
    server.start_again()?;
    // Reconnects after the backoff.
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        match pool.run(|c| Ok(c.simple_query("SELECT 1").map(drop)?)) {
            Ok(()) => break,
            Err(e) if e.is_unavailable() && std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

#[test]
fn bad_urls_are_config_errors_and_the_password_is_never_shown() {
    for url in ["not a url ://", "postgres:///db?sslmode=require&host=h"] {
        let err = PgPool::connect(PgConfig::new(url)).err();
        assert!(
            matches!(err, Some(StateError::Config { .. })),
            "{url}: {err:?}"
        );
    }
    let cfg = PgConfig::new("postgres://u:hunter2@127.0.0.1:1/db").with_password("s3cret");
    let shown = format!("{cfg:?} {}", cfg.target());
    assert!(
        !shown.contains("hunter2") && !shown.contains("s3cret"),
        "{shown}"
    );
    assert!(shown.contains("u@127.0.0.1:1/db"), "{shown}");
    let err = PgPool::connect(cfg.with_pool_size(0)).err();
    assert!(matches!(err, Some(StateError::Config { .. })));
}

#[test]
fn the_live_member_sql_uses_the_live_window() {
    let ms = members::LIVE_WINDOW.as_millis().to_string();
    assert!(members::LIVE_MEMBER_IDS_SQL.ends_with(&format!("- {ms}")));
}

#[test]
fn after_a_server_restart_idle_connections_are_replaced_before_use() -> anyhow::Result<()> {
    let mut server = PgServer::start()?;
    let name = server.create_database()?;
    let pool = PgPool::connect(server.config(&name).with_pool_size(2))?;
    // Both workers hold a connection.
    let (a, b) = (pool.clone(), pool.clone());
    let ta = std::thread::spawn(move || {
        a.run(|c| Ok(c.simple_query("SELECT pg_sleep(0.2)").map(drop)?))
    });
    let tb = std::thread::spawn(move || {
        b.run(|c| Ok(c.simple_query("SELECT pg_sleep(0.2)").map(drop)?))
    });
    ta.join().map_err(|_| anyhow::anyhow!("panicked"))??;
    tb.join().map_err(|_| anyhow::anyhow!("panicked"))??;
    server.stop()?;
    server.start_again()?;
    std::thread::sleep(Duration::from_millis(1200));
    // Every call after the idle spell lands on a live connection, and a
    // statement cached on the old connections is prepared again on the new.
    for _ in 0..4 {
        pool.run(|c| Ok(c.simple_query("SELECT 1").map(drop)?))?;
        let row = pool.run(|c| Ok(c.query_one("SELECT $1::INT + 1", &[&41_i32])?))?;
        assert_eq!(row.get::<_, i32>(0), 42);
    }
    Ok(())
}

#[test]
fn a_connection_prepares_each_statement_once() -> anyhow::Result<()> {
    let db = shared_database()?;
    let pool = PgPool::connect(db.config().with_pool_size(1))?;
    const SQL: &str = "SELECT $1::TEXT || 'x'";
    let prepared = |pool: &PgPool| -> anyhow::Result<i64> {
        Ok(pool.run(|c| {
            Ok(c.query_one(
                "SELECT COUNT(*) FROM pg_prepared_statements WHERE statement = $1",
                &[&SQL],
            )?
            .get::<_, i64>(0))
        })?)
    };
    assert_eq!(prepared(&pool)?, 0);
    for n in 0..3 {
        let rows = pool.run(move |c| Ok(c.query(SQL, &[&format!("{n}")])?))?;
        assert_eq!(rows[0].get::<_, String>(0), format!("{n}x"));
        let changed = pool.run(|c| Ok(c.execute("SELECT $1::TEXT || 'x'", &[&"y"])?))?;
        assert_eq!(changed, 1);
        let none = pool.run(|c| Ok(c.query_opt("SELECT 1 WHERE $1::TEXT = 'z'", &[&"y"])?))?;
        assert!(none.is_none());
    }
    // Kept on the connection after the first call, not prepared again.
    assert_eq!(prepared(&pool)?, 1);
    // A statement handed out is usable inside a transaction.
    let value = pool.run(|c| {
        let statement = c.prepared(SQL)?;
        let mut tx = c.transaction()?;
        let row = tx.query_one(&statement, &[&"t"])?;
        tx.commit()?;
        Ok(row.get::<_, String>(0))
    })?;
    assert_eq!(value, "tx");
    assert_eq!(prepared(&pool)?, 1);
    Ok(())
}

#[test]
fn a_cached_statement_a_migration_broke_is_prepared_again() -> anyhow::Result<()> {
    let db = shared_database()?;
    let pool = PgPool::connect(db.config().with_pool_size(1))?;
    pool.run(|c| Ok(c.batch_execute("CREATE TABLE t (a INT); INSERT INTO t VALUES (1)")?))?;
    const SQL: &str = "SELECT * FROM t";
    let width = |pool: &PgPool| pool.run(|c| Ok(c.query_one(SQL, &[])?.len()));
    assert_eq!(width(&pool)?, 1);
    // Another member's migration changes what the statement returns.
    pool.run(|c| Ok(c.batch_execute("ALTER TABLE t ADD COLUMN b INT")?))?;
    // The server refuses the old plan once; the next call prepares anew.
    let first = width(&pool);
    assert!(
        matches!(first, Ok(2) | Err(StateError::Query { .. })),
        "{first:?}"
    );
    assert_eq!(width(&pool)?, 2);
    Ok(())
}

#[test]
fn a_query_error_carries_the_database_message() -> anyhow::Result<()> {
    let db = shared_database()?;
    let pool = db.pool()?;
    let err = pool
        .run(|c| Ok(c.simple_query("SELECT * FROM no_such_table").map(drop)?))
        .err();
    match err {
        Some(StateError::Query { message }) => {
            assert!(message.contains("no_such_table"), "{message}")
        }
        other => panic!("expected a query error, got {other:?}"),
    }
    Ok(())
}

#[test]
fn a_value_that_does_not_convert_is_a_query_error_not_an_outage() -> anyhow::Result<()> {
    let db = shared_database()?;
    let pool = db.pool()?;
    // An i32 where the server wants text: the driver refuses it locally.
    let err = pool
        .run(|c| Ok(c.query("SELECT $1::TEXT", &[&1_i32]).map(drop)?))
        .err();
    assert!(matches!(err, Some(StateError::Query { .. })), "{err:?}");
    Ok(())
}
