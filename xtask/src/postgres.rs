//! The PostgreSQL server of the stores' PostgreSQL tests: Debian's
//! `postgresql`. `cargo xtask test` installs it when missing and starts
//! one private cluster for the whole run (under `target/talon-pg/`, on a
//! free loopback port, through `talon_test_support::postgres::PgServer`,
//! the same code the fault tests use for their own servers); each test
//! gets a fresh database on it through `TALON_TEST_PG_URL` and
//! `TALON_TEST_PG_PASSWORD`. The cluster is stopped and deleted when the
//! run ends. The system service the package enables is not used.

use talon_test_support::postgres::{PASSWORD_ENV, PgServer, URL_ENV, bin_dir};

/// Install `postgresql` when its server programs are missing.
pub(crate) fn install() -> Result<(), String> {
    if bin_dir().is_ok() {
        return Ok(());
    }
    println!("xtask: installing postgresql for the state stores' tests");
    crate::sshd::apt_install(&["postgresql"])?;
    bin_dir().map(drop).map_err(|e| format!("{e:#}"))
}

/// The environment that points tests at the shared server.
pub(crate) type TestEnv = [(&'static str, String); 2];

/// The run's shared server, and the environment that points tests at it.
pub(crate) fn shared() -> Result<(PgServer, TestEnv), String> {
    let server =
        PgServer::start().map_err(|e| format!("cannot start the test PostgreSQL: {e:#}"))?;
    let env = [
        (URL_ENV, server.url("postgres")),
        (PASSWORD_ENV, server.password().to_owned()),
    ];
    println!(
        "xtask: PostgreSQL for the tests on 127.0.0.1:{}",
        server.port()
    );
    Ok((server, env))
}
