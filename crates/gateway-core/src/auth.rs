//! Bearer tokens: the generated token file, constant-time matching, and
//! the auth-failure rate limit.

use std::collections::HashMap;
use std::io::Write as _;
use std::net::IpAddr;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use subtle::ConstantTimeEq as _;

use crate::error::GatewayError;
use crate::scope::Scope;

/// The token file's name inside the state directory.
pub const TOKEN_FILE_NAME: &str = "gateway.token";

/// One accepted token.
#[derive(Clone)]
struct Entry {
    token: Vec<u8>,
    scope: Scope,
}

/// The tokens the gateway accepts, each with its scope. `Debug` never
/// shows a token.
#[derive(Clone, Default)]
pub struct TokenSet {
    entries: Vec<Entry>,
}

impl std::fmt::Debug for TokenSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenSet")
            .field("tokens", &self.entries.len())
            .finish()
    }
}

impl TokenSet {
    /// No tokens.
    pub fn new() -> Self {
        TokenSet::default()
    }

    /// Add a token with its scope (empty tokens are ignored).
    pub fn add(&mut self, token: &str, scope: Scope) {
        let token = token.trim();
        if !token.is_empty() {
            self.entries.push(Entry {
                token: token.as_bytes().to_vec(),
                scope,
            });
        }
    }

    /// How many tokens there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The scope of `presented`, comparing against every token in constant
    /// time (the loop does not stop at the first match, and each
    /// comparison takes the same time for equal-length inputs).
    pub fn scope_of(&self, presented: &str) -> Option<Scope> {
        let presented = presented.as_bytes();
        let mut found: Option<Scope> = None;
        for e in &self.entries {
            let equal: bool = e.token.ct_eq(presented).into();
            if equal && found.is_none_or(|s| e.scope > s) {
                found = Some(e.scope);
            }
        }
        found
    }
}

/// The bearer token of an `Authorization` header value (the protocol's
/// one parser, re-exported).
pub use talon_gateway_protocol::bearer_token as bearer;

/// Load the token stored in `state_dir`, or generate one (32 random bytes,
/// hex) and store it with mode 0600. Returns the token and its path. A
/// file readable by others is tightened to 0600.
pub fn load_or_create_token(state_dir: &Path) -> Result<(String, PathBuf), GatewayError> {
    let path = state_dir.join(TOKEN_FILE_NAME);
    let io = |what: &str, e: std::io::Error| GatewayError::State {
        path: path.clone(),
        message: format!("{what}: {e}"),
    };
    std::fs::create_dir_all(state_dir).map_err(|e| GatewayError::State {
        path: state_dir.to_path_buf(),
        message: format!("cannot create the state directory: {e}"),
    })?;
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let meta = std::fs::metadata(&path).map_err(|e| io("cannot stat the token file", e))?;
            if meta.permissions().mode() & 0o077 != 0 {
                tracing::warn!(path = %path.display(), "the gateway token file was readable by others; setting its mode to 0600");
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
                    .map_err(|e| io("cannot set the token file's mode to 0600", e))?;
            }
            let token = text.trim().to_owned();
            if token.len() < 16 {
                return Err(GatewayError::State {
                    path,
                    message: "the token file holds fewer than 16 characters; delete it to have a new token generated".into(),
                });
            }
            Ok((token, path))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let token = random_hex(32)?;
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
                .map_err(|e| io("cannot create the token file", e))?;
            file.write_all(format!("{token}\n").as_bytes())
                .and_then(|()| file.sync_all())
                .map_err(|e| io("cannot write the token file", e))?;
            Ok((token, path))
        }
        Err(e) => Err(io("cannot read the token file", e)),
    }
}

/// `n` random bytes as lowercase hex.
pub(crate) fn random_hex(n: usize) -> Result<String, GatewayError> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes)
        .map_err(|e| GatewayError::Internal(format!("no randomness: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Auth failures per peer address: after `max_failures` within `window`,
/// further failures from that address are answered HTTP 429 with
/// `Retry-After` until the window ends. A valid token is never refused.
#[derive(Debug)]
pub(crate) struct AuthLimiter {
    max_failures: u32,
    window: Duration,
    peers: Mutex<HashMap<IpAddr, (u32, Instant)>>,
}

/// The most peers the limiter remembers (the oldest are forgotten first).
const MAX_TRACKED_PEERS: usize = 4096;

impl AuthLimiter {
    /// A limiter.
    pub(crate) fn new(max_failures: u32, window: Duration) -> Self {
        AuthLimiter {
            max_failures,
            window,
            peers: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, (u32, Instant)>> {
        match self.peers.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// How long `peer` stays limited, `None` when it is not.
    pub(crate) fn retry_after(&self, peer: IpAddr) -> Option<Duration> {
        let now = Instant::now();
        let peers = self.lock();
        peers.get(&peer).and_then(|(n, start)| {
            let left = self.window.checked_sub(now.duration_since(*start))?;
            (*n >= self.max_failures && !left.is_zero()).then_some(left)
        })
    }

    /// Whether `peer` is currently limited.
    #[cfg(test)]
    pub(crate) fn is_limited(&self, peer: IpAddr) -> bool {
        self.retry_after(peer).is_some()
    }

    /// Count a failure from `peer`.
    pub(crate) fn failed(&self, peer: IpAddr) {
        let now = Instant::now();
        let mut peers = self.lock();
        if peers.len() >= MAX_TRACKED_PEERS && !peers.contains_key(&peer) {
            peers.retain(|_, (_, start)| now.duration_since(*start) < self.window);
            if peers.len() >= MAX_TRACKED_PEERS
                && let Some(oldest) = peers.iter().min_by_key(|(_, (_, s))| *s).map(|(k, _)| *k)
            {
                peers.remove(&oldest);
            }
        }
        let entry = peers.entry(peer).or_insert((0, now));
        if now.duration_since(entry.1) >= self.window {
            *entry = (0, now);
        }
        entry.0 = entry.0.saturating_add(1);
    }
}

#[cfg(test)]
#[path = "auth_tests.rs"]
mod tests;
