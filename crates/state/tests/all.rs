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
