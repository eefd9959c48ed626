//! The secrets file: `<state dir>/secrets.json`, a JSON object of secret
//! name to value, mode `0600` (a file group or others can read is
//! refused). A config value refers to an entry as `${secret:NAME}` where
//! `${VAR}` references are accepted (MCP servers' `env` and `headers`);
//! the value is looked up where the config value is used, never logged
//! and never shown (`Debug` prints the names only).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::sections::mcp::{SECRET_REF_PREFIX, valid_secret_name};

/// The secrets file's name in the state directory.
pub const SECRETS_FILE: &str = "secrets.json";

/// Why the secrets file cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SecretsError {
    /// It exists but cannot be read.
    #[error("cannot read the secrets file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Group or others may read it.
    #[error(
        "the secrets file {path} has mode {mode:04o}; group and others must have no access (chmod 600 it, or run `talon security audit --fix`)"
    )]
    Readable {
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// It is not a JSON object of names to string values.
    #[error(
        "the secrets file {path} is not a JSON object of secret names to string values: {message}"
    )]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong (never a value).
        message: String,
    },
}

impl SecretsError {
    /// A stable code.
    pub fn code(&self) -> &'static str {
        match self {
            SecretsError::Read { .. } => "secrets.read",
            SecretsError::Readable { .. } => "secrets.mode",
            SecretsError::Malformed { .. } => "secrets.malformed",
        }
    }
}

/// The loaded secrets file (empty when there is none).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SecretStore {
    values: BTreeMap<String, String>,
}

impl std::fmt::Debug for SecretStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretStore")
            .field("names", &self.values.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl SecretStore {
    /// The secrets file of `state_dir`; an absent file is an empty store.
    pub fn load(state_dir: &Path) -> Result<Self, SecretsError> {
        let path = state_dir.join(SECRETS_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => return Err(SecretsError::Read { path, source }),
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path)
                .map_err(|source| SecretsError::Read {
                    path: path.clone(),
                    source,
                })?
                .permissions()
                .mode()
                & 0o7777;
            if mode & 0o077 != 0 {
                return Err(SecretsError::Readable { path, mode });
            }
        }
        let malformed = |message: String| SecretsError::Malformed {
            path: path.clone(),
            message,
        };
        let raw: BTreeMap<String, serde_json::Value> = serde_json::from_str(&text)
            .map_err(|e| malformed(format!("line {} column {}", e.line(), e.column())))?;
        let mut values = BTreeMap::new();
        for (name, v) in raw {
            if !valid_secret_name(&name) {
                return Err(malformed(format!(
                    "`{name}` is not a secret name ([A-Za-z0-9_.-]+)"
                )));
            }
            let serde_json::Value::String(v) = v else {
                return Err(malformed(format!("the value of `{name}` is not a string")));
            };
            values.insert(name, v);
        }
        Ok(SecretStore { values })
    }

    /// A store holding `values` (tests, embedders).
    pub fn from_map(values: BTreeMap<String, String>) -> Self {
        SecretStore { values }
    }

    /// The value of secret `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// The names it holds.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.values.keys().map(String::as_str)
    }

    /// The lookup for [`crate::sections::mcp::expand_env_refs`]: a
    /// `secret:NAME` reference from this store, any other from `env`.
    pub fn lookup<'a>(
        &'a self,
        env: impl Fn(&str) -> Option<String> + 'a,
    ) -> impl Fn(&str) -> Option<String> + 'a {
        move |name: &str| match name.strip_prefix(SECRET_REF_PREFIX) {
            Some(secret) => self.get(secret).map(str::to_owned),
            None => env(name),
        }
    }
}

#[cfg(test)]
#[path = "secrets_tests.rs"]
mod tests;
