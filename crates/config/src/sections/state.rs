//! `state`: where the gateway keeps its stores (journal, cron, task
//! ledger, approvals, sessions). Talon's own section; OpenClaw has no
//! counterpart (its state is files of one process).
//!
//! ```json5
//! state: {
//!   backend: "postgres",                      // or "sqlite" (the default)
//!   url: "postgres://talon@db.internal:5432/talon",
//!   password: "${secret:PGPASSWORD}",         // or "${TALON_PG_PASSWORD}" from the environment
//!   pool: { size: 8, connectTimeoutSeconds: 5, statementTimeoutSeconds: 30 },
//! }
//! ```
//!
//! A password is never written in the file: not as `password`, not in the
//! URL. It comes from the secrets file or the environment.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::mcp::{SECRET_REF_PREFIX, valid_secret_name};

/// Largest pool size accepted.
pub const MAX_POOL_SIZE: u32 = 64;
/// Largest connect or statement timeout accepted, in seconds.
pub const MAX_TIMEOUT_SECONDS: u64 = 3600;

/// Which engine holds the state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StateBackend {
    /// Embedded SQLite files in the state directory (one gateway).
    #[default]
    Sqlite,
    /// A PostgreSQL database, which several gateways may share.
    Postgres,
}

/// The `state` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StateConfig {
    /// `sqlite` (default) or `postgres`.
    #[serde(default)]
    pub backend: StateBackend,
    /// The PostgreSQL URL, `postgres://USER@HOST:PORT/DATABASE`, without a
    /// password. Required with `backend: "postgres"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The password: `${secret:NAME}` (the secrets file) or `${VAR}` (the
    /// environment); never the password itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
    /// Connection pool settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<StatePool>,
}

/// `state.pool`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StatePool {
    /// Connections per gateway, 1 to 64 (default 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u32>,
    /// How long a connection attempt may take (default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_timeout_seconds: Option<u64>,
    /// How long one statement may run (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statement_timeout_seconds: Option<u64>,
}

/// Whether `url` carries a password (`scheme://user:password@host`).
fn url_has_password(url: &str) -> bool {
    let Some((_, rest)) = url.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    authority
        .rsplit_once('@')
        .is_some_and(|(userinfo, _)| userinfo.contains(':'))
        || url.contains("password=")
}

/// Whether `value` is one `${secret:NAME}` or `${VAR}` reference and
/// nothing else.
fn is_single_reference(value: &str) -> bool {
    let Some(inner) = value.strip_prefix("${").and_then(|v| v.strip_suffix('}')) else {
        return false;
    };
    match inner.strip_prefix(SECRET_REF_PREFIX) {
        Some(name) => valid_secret_name(name),
        None => {
            !inner.is_empty()
                && inner.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !inner.starts_with(|c: char| c.is_ascii_digit())
        }
    }
}

impl StateConfig {
    /// Checks serde cannot express, as `(key path below state, message)`.
    pub fn validate(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        match (&self.backend, &self.url) {
            (StateBackend::Postgres, None) => out.push((
                "url".to_owned(),
                "backend \"postgres\" needs state.url (postgres://USER@HOST:PORT/DATABASE)".to_owned(),
            )),
            (StateBackend::Sqlite, Some(_)) => out.push((
                "url".to_owned(),
                "state.url is only read with backend \"postgres\"; set backend: \"postgres\" or remove the url".to_owned(),
            )),
            _ => {}
        }
        if let Some(url) = &self.url {
            if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
                out.push((
                    "url".to_owned(),
                    "state.url must start with postgres:// (postgres://USER@HOST:PORT/DATABASE)"
                        .to_owned(),
                ));
            } else if url_has_password(url) {
                out.push((
                    "url".to_owned(),
                    "state.url carries a password; take it out and set state.password to ${secret:NAME} (the secrets file) or ${VAR} (the environment)".to_owned(),
                ));
            }
        }
        if let Some(password) = &self.password
            && !is_single_reference(password)
        {
            out.push((
                "password".to_owned(),
                "state.password must be a reference, ${secret:NAME} (the secrets file) or ${VAR} (the environment), never the password itself".to_owned(),
            ));
        }
        if let Some(pool) = &self.pool {
            if let Some(size) = pool.size
                && !(1..=MAX_POOL_SIZE).contains(&size)
            {
                out.push((
                    "pool.size".to_owned(),
                    format!("pool.size is {size}; it must be between 1 and {MAX_POOL_SIZE}"),
                ));
            }
            for (key, value) in [
                ("pool.connectTimeoutSeconds", pool.connect_timeout_seconds),
                (
                    "pool.statementTimeoutSeconds",
                    pool.statement_timeout_seconds,
                ),
            ] {
                if let Some(v) = value
                    && !(1..=MAX_TIMEOUT_SECONDS).contains(&v)
                {
                    out.push((
                        key.to_owned(),
                        format!("{key} is {v}; it must be between 1 and {MAX_TIMEOUT_SECONDS}"),
                    ));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(c: &StateConfig) -> Vec<String> {
        c.validate().into_iter().map(|(k, _)| k).collect()
    }

    #[test]
    fn postgres_needs_a_url_without_a_password() {
        let mut c = StateConfig {
            backend: StateBackend::Postgres,
            ..StateConfig::default()
        };
        assert_eq!(keys(&c), ["url"]);
        c.url = Some("postgres://talon@db:5432/talon".into());
        assert!(keys(&c).is_empty());
        c.url = Some("postgres://talon:hunter2@db:5432/talon".into());
        assert_eq!(keys(&c), ["url"]);
        c.url = Some("postgres://talon@db/talon?password=x".into());
        assert_eq!(keys(&c), ["url"]);
        c.url = Some("mysql://talon@db/talon".into());
        assert_eq!(keys(&c), ["url"]);
    }

    #[test]
    fn the_password_is_a_reference_only() {
        let mut c = StateConfig {
            backend: StateBackend::Postgres,
            url: Some("postgres://talon@db/talon".into()),
            ..StateConfig::default()
        };
        for ok in ["${secret:PG}", "${TALON_PG_PASSWORD}"] {
            c.password = Some(ok.into());
            assert!(keys(&c).is_empty(), "{ok}");
        }
        for bad in ["hunter2", "${secret:}", "x${PG}", "${1A}", "${secret:PG} "] {
            c.password = Some(bad.into());
            assert_eq!(keys(&c), ["password"], "{bad}");
        }
    }

    #[test]
    fn pool_bounds_and_a_url_without_postgres() {
        let c = StateConfig {
            backend: StateBackend::Sqlite,
            url: Some("postgres://a@b/c".into()),
            pool: Some(StatePool {
                size: Some(0),
                connect_timeout_seconds: Some(0),
                statement_timeout_seconds: Some(7200),
            }),
            ..StateConfig::default()
        };
        assert_eq!(
            keys(&c),
            [
                "url",
                "pool.size",
                "pool.connectTimeoutSeconds",
                "pool.statementTimeoutSeconds"
            ]
        );
    }
}
