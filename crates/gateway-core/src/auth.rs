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

/// Who a presented token is: the identity the operator gave it (or one
/// derived from its hash, never its text) and its scope.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Identity {
    /// The token's id (`gateway.auth.tokens[].id`; `operator` for
    /// `gateway.auth.token`, `state-token` for the generated token file).
    pub id: String,
    /// What it may do.
    pub scope: Scope,
}

impl Identity {
    /// An identity.
    pub fn new(id: impl Into<String>, scope: Scope) -> Self {
        Identity {
            id: id.into(),
            scope,
        }
    }

    /// Whether this caller is the owner (`owner` or `operator` scope).
    pub fn is_owner(&self) -> bool {
        self.scope.is_owner()
    }
}

/// A presented token's SHA-256: what a connection keeps to be re-checked
/// after a reload (never the token itself).
pub type TokenHash = [u8; 32];

/// The SHA-256 of a token (trimmed).
pub fn token_hash(token: &str) -> TokenHash {
    use sha2::Digest as _;
    sha2::Sha256::digest(token.trim().as_bytes()).into()
}

/// The identity a token without an `id` gets: `token-` and the first 8 hex
/// digits of its SHA-256.
pub fn default_token_id(hash: &TokenHash) -> String {
    let mut id = String::from("token-");
    for b in hash.iter().take(4) {
        id.push_str(&format!("{b:02x}"));
    }
    id
}

/// One accepted token: only its hash is kept.
#[derive(Clone)]
struct Entry {
    hash: TokenHash,
    identity: Identity,
}

/// The tokens the gateway accepts, each as its SHA-256 with an identity
/// and a scope. Neither `Debug` nor anything else shows a token: the table
/// holds none.
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

    /// Add a plain-text token with its scope and the default identity
    /// (empty tokens are ignored).
    pub fn add(&mut self, token: &str, scope: Scope) {
        self.add_named(token, None, scope);
    }

    /// Add a plain-text token (hashed here; the text is not kept) with an
    /// identity (`None`: the default from its hash) and scope. Empty
    /// tokens are ignored.
    pub fn add_named(&mut self, token: &str, id: Option<&str>, scope: Scope) {
        if !token.trim().is_empty() {
            self.add_hash(token_hash(token), id, scope);
        }
    }

    /// Add a token by its SHA-256.
    pub fn add_hash(&mut self, hash: TokenHash, id: Option<&str>, scope: Scope) {
        let id = id.map_or_else(|| default_token_id(&hash), str::to_owned);
        self.entries.push(Entry {
            hash,
            identity: Identity { id, scope },
        });
    }

    /// How many tokens there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The identity of `presented` (see [`TokenSet::identify_hash`]).
    pub fn identify(&self, presented: &str) -> Option<Identity> {
        self.identify_hash(&token_hash(presented))
    }

    /// The identity of the token whose SHA-256 is `hash`, comparing
    /// against every entry in constant time (the loop does not stop at the
    /// first match, and each comparison is of 32 bytes). A token listed
    /// twice gets its widest scope.
    pub fn identify_hash(&self, hash: &TokenHash) -> Option<Identity> {
        let mut found: Option<&Identity> = None;
        for e in &self.entries {
            let equal: bool = e.hash.ct_eq(hash).into();
            if equal && found.is_none_or(|f| e.identity.scope > f.scope) {
                found = Some(&e.identity);
            }
        }
        found.cloned()
    }

    /// The scope of `presented`.
    pub fn scope_of(&self, presented: &str) -> Option<Scope> {
        self.identify(presented).map(|i| i.scope)
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
