//! How to reach the database.

use std::str::FromStr as _;
use std::time::Duration;

use crate::StateError;

/// Default number of pooled connections per gateway.
pub const DEFAULT_POOL_SIZE: usize = 8;
/// Largest accepted pool size.
pub const MAX_POOL_SIZE: usize = 64;
/// Default connect timeout.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Default per-statement timeout (set on each connection).
pub const DEFAULT_STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);

/// Where the database is and how many connections to keep.
#[derive(Clone)]
pub struct PgConfig {
    /// A `postgres://user@host:port/db` URL (or key=value string). A
    /// password in it is accepted but better kept in [`PgConfig::password`],
    /// which comes from the environment or the secrets file.
    pub url: String,
    /// The password, when not in the URL.
    pub password: Option<String>,
    /// Pooled connections (worker threads), 1 to [`MAX_POOL_SIZE`].
    pub pool_size: usize,
    /// How long a connection attempt may take.
    pub connect_timeout: Duration,
    /// How long one statement may run before the server cancels it.
    pub statement_timeout: Duration,
}

impl std::fmt::Debug for PgConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may carry a password: print only where it points.
        let target = self.parse().ok().map(|c| describe(&c));
        f.debug_struct("PgConfig")
            .field("target", &target)
            .field("password", &self.password.as_ref().map(|_| "<set>"))
            .field("pool_size", &self.pool_size)
            .field("connect_timeout", &self.connect_timeout)
            .field("statement_timeout", &self.statement_timeout)
            .finish()
    }
}

impl PgConfig {
    /// A config for `url` with the defaults.
    pub fn new(url: impl Into<String>) -> Self {
        PgConfig {
            url: url.into(),
            password: None,
            pool_size: DEFAULT_POOL_SIZE,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            statement_timeout: DEFAULT_STATEMENT_TIMEOUT,
        }
    }

    /// The same with `password`.
    pub fn with_password(mut self, password: impl Into<String>) -> Self {
        self.password = Some(password.into());
        self
    }

    /// The same with `size` pooled connections.
    pub fn with_pool_size(mut self, size: usize) -> Self {
        self.pool_size = size;
        self
    }

    /// Where it points, without credentials (`user@host:port/db`).
    pub fn target(&self) -> String {
        match self.parse() {
            Ok(c) => describe(&c),
            Err(_) => "<unparsable url>".into(),
        }
    }

    /// Parse and check it into a driver config.
    pub(crate) fn parse(&self) -> Result<postgres::Config, StateError> {
        let mut config = postgres::Config::from_str(&self.url).map_err(|e| StateError::Config {
            message: format!(
                "state.url is not a PostgreSQL URL ({e}); write it as postgres://USER@HOST:PORT/DATABASE"
            ),
        })?;
        if config.get_hosts().is_empty() {
            return Err(StateError::Config {
                message: "state.url names no host; write it as postgres://USER@HOST:PORT/DATABASE"
                    .into(),
            });
        }
        if config.get_ssl_mode() == postgres::config::SslMode::Require {
            return Err(StateError::Config {
                message: "state.url asks for sslmode=require, but this version of Talon speaks to PostgreSQL without TLS: use a loopback or private-network address with sslmode=disable or prefer".into(),
            });
        }
        if !(1..=MAX_POOL_SIZE).contains(&self.pool_size) {
            return Err(StateError::Config {
                message: format!(
                    "state.pool.size is {}; it must be between 1 and {MAX_POOL_SIZE}",
                    self.pool_size
                ),
            });
        }
        if let Some(password) = &self.password {
            config.password(password);
        }
        config.connect_timeout(self.connect_timeout);
        config.application_name("talon");
        Ok(config)
    }
}

fn describe(config: &postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        Some(postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "?".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!(
        "{}@{host}:{port}/{}",
        config.get_user().unwrap_or("?"),
        config.get_dbname().unwrap_or("?")
    )
}
