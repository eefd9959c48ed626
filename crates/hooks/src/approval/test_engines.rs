//! The engines the store and broker tests run on: the same assertions for
//! memory, SQLite and (cargo feature `postgres`) PostgreSQL.

use std::any::Any;

use crate::approval::MemoryGrantStore;
#[cfg(feature = "sqlite")]
use crate::approval::SqliteGrantStore;

/// What must live as long as a store under test (its directory, its
/// database).
pub(crate) type Keep = Option<Box<dyn Any>>;

/// A memory store.
pub(crate) fn memory() -> (MemoryGrantStore, Keep) {
    (MemoryGrantStore::new(), None)
}

/// A SQLite store in a fresh temporary directory.
#[cfg(feature = "sqlite")]
pub(crate) fn sqlite() -> (SqliteGrantStore, Keep) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = SqliteGrantStore::open_in_state_dir(dir.path()).expect("a SQLite store");
    (store, Some(Box::new(dir)))
}

/// A PostgreSQL store on a fresh database of a real server
/// (`talon_test_support::postgres::shared_database`: the run's server under
/// `cargo xtask test`, else a private one; a missing PostgreSQL fails the
/// test naming `cargo xtask postgres-install`), as a fleet member of its
/// own.
#[cfg(feature = "postgres")]
pub(crate) fn postgres() -> (crate::approval::PostgresGrantStore, Keep) {
    let db = talon_test_support::postgres::shared_database()
        .expect("a PostgreSQL test database (run `cargo xtask postgres-install` if it is missing)");
    let pool = db.pool().expect("a pool on the test database");
    let member = talon_state::members::new_member_id().expect("a member id");
    let store = crate::approval::PostgresGrantStore::open(&pool, member).expect("the store");
    (store, Some(Box::new(db)))
}

/// Generate `mod <engine> { #[test] fn <name>() }` for each named generic
/// test body `fn <name><S: GrantStore>(store: S)` (a store test, `sync`) or
/// `async fn <name><S>(broker: Arc<Broker<S>>)` (a broker test, `async`,
/// on a paused clock), for every engine.
macro_rules! on_each_engine {
    (sync: $($name:ident),* $(,)?) => {
        $crate::approval::test_engines::on_each_engine!(@engines sync: $($name),*);
    };
    (async: $($name:ident),* $(,)?) => {
        $crate::approval::test_engines::on_each_engine!(@engines async: $($name),*);
    };
    (@engines $kind:ident: $($name:ident),*) => {
        $crate::approval::test_engines::on_each_engine!(@one memory $kind: $($name),*);
        #[cfg(feature = "sqlite")]
        $crate::approval::test_engines::on_each_engine!(@one sqlite $kind: $($name),*);
        #[cfg(feature = "postgres")]
        $crate::approval::test_engines::on_each_engine!(@one postgres $kind: $($name),*);
    };
    (@one $engine:ident sync: $($name:ident),*) => {
        mod $engine {
            $(
                #[test]
                fn $name() {
                    let (store, keep) = $crate::approval::test_engines::$engine();
                    super::$name(store);
                    drop(keep);
                }
            )*
        }
    };
    (@one $engine:ident async: $($name:ident),*) => {
        mod $engine {
            $(
                #[tokio::test(start_paused = true)]
                async fn $name() {
                    let (store, keep) = $crate::approval::test_engines::$engine();
                    let broker = ::std::sync::Arc::new($crate::approval::Broker::new(store));
                    super::$name(broker).await;
                    drop(keep);
                }
            )*
        }
    };
}
pub(crate) use on_each_engine;
