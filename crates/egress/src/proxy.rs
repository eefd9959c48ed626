//! [`EgressProxy`]: a guarded HTTP proxy on a Unix socket, the only way out
//! of a local sandbox's network namespace.

use std::net::{IpAddr, SocketAddr};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::guard::{EgressError, EgressGuard};
use crate::request::{ProxyRequest, parse_head};
use crate::resolver::HostResolver;
use crate::ssrf::{SsrfBlocked, SsrfPolicy};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixListener, UnixStream};
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

/// The bounds of one proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProxyLimits {
    /// The largest request head read (bytes); a longer one is refused.
    pub max_head_bytes: usize,
    /// How long a client may take to send its head.
    pub head_timeout: Duration,
    /// How long resolving the destination may take.
    pub resolve_timeout: Duration,
    /// How long connecting to one vetted address may take.
    pub connect_timeout: Duration,
    /// Connections served at once; more wait to be accepted.
    pub max_connections: usize,
}

impl Default for ProxyLimits {
    fn default() -> Self {
        ProxyLimits {
            max_head_bytes: 16 * 1024,
            head_timeout: Duration::from_secs(10),
            resolve_timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(10),
            max_connections: 256,
        }
    }
}

/// A running proxy: every `CONNECT host:port` and absolute-form `http://`
/// request on its socket passes [`SsrfPolicy::check_url`], then (for a
/// name) resolution and [`SsrfPolicy::vet_addresses`], before it connects,
/// to a vetted address only. A refused request gets `403` with
/// `X-Talon-Egress: ssrf_blocked` and the reason; nothing is connected.
///
/// Dropping it stops the accept loop (tunnels already open run to their
/// end) and removes the socket file.
#[derive(Debug)]
pub struct EgressProxy {
    path: PathBuf,
    task: JoinHandle<()>,
}

impl EgressProxy {
    /// Listen on `path` (a stale socket there is replaced; any other file
    /// is an error) with [`ProxyLimits::default`]. Must be called inside a
    /// tokio runtime.
    pub fn start(
        path: &Path,
        policy: Arc<SsrfPolicy>,
        resolver: Arc<dyn HostResolver>,
    ) -> std::io::Result<Self> {
        Self::with_limits(path, policy, resolver, ProxyLimits::default())
    }

    /// [`EgressProxy::start`] with explicit limits.
    pub fn with_limits(
        path: &Path,
        policy: Arc<SsrfPolicy>,
        resolver: Arc<dyn HostResolver>,
        limits: ProxyLimits,
    ) -> std::io::Result<Self> {
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_socket() => std::fs::remove_file(path)?,
            Ok(_) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    format!(
                        "{} exists and is not a socket; not replacing it",
                        path.display()
                    ),
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let listener = UnixListener::bind(path)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        let shared = Arc::new(Shared {
            guard: EgressGuard::new(policy, resolver),
            limits,
        });
        let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
        let task = tokio::spawn(accept_loop(listener, shared, slots));
        Ok(EgressProxy {
            path: path.to_path_buf(),
            task,
        })
    }

    /// The socket the proxy listens on.
    pub fn socket_path(&self) -> &Path {
        &self.path
    }
}

impl Drop for EgressProxy {
    fn drop(&mut self) {
        self.task.abort();
        // Best effort: a socket left behind is replaced by the next start.
        let _ = std::fs::remove_file(&self.path);
    }
}

#[derive(Debug)]
struct Shared {
    guard: EgressGuard,
    limits: ProxyLimits,
}

async fn accept_loop(listener: UnixListener, shared: Arc<Shared>, slots: Arc<Semaphore>) {
    loop {
        let Ok(permit) = Arc::clone(&slots).acquire_owned().await else {
            return;
        };
        let client = match listener.accept().await {
            Ok((client, _)) => client,
            Err(e) => {
                tracing::warn!(error = %e, "egress proxy: accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            serve(client, &shared).await;
            drop(permit);
        });
    }
}

/// How a request ended before a tunnel was opened.
enum Refusal {
    Bad(String),
    Blocked(SsrfBlocked),
    Upstream(String),
    Timeout(String),
}

impl Refusal {
    fn response(&self) -> Vec<u8> {
        let (status, code, text) = match self {
            Refusal::Bad(t) => ("400 Bad Request", "bad_request", t),
            Refusal::Blocked(b) => ("403 Forbidden", b.code(), &b.reason),
            Refusal::Upstream(t) => ("502 Bad Gateway", "upstream_unreachable", t),
            Refusal::Timeout(t) => ("504 Gateway Timeout", "upstream_timeout", t),
        };
        let body = format!("{code}: {text}\n");
        format!(
            "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nX-Talon-Egress: \
             {code}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    }
}

async fn serve(mut client: UnixStream, shared: &Shared) {
    match open(&mut client, shared).await {
        Ok((mut upstream, dest)) => {
            let copied = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            tracing::debug!(destination = %dest, ok = copied.is_ok(), "egress proxy: tunnel closed");
        }
        Err(refusal) => {
            if let Refusal::Blocked(b) = &refusal {
                tracing::info!(code = b.code(), reason = %b.reason, "egress proxy: refused by the SSRF rules");
            }
            let _ = client.write_all(&refusal.response()).await;
            let _ = client.shutdown().await;
        }
    }
}

/// Read the head, vet the destination, connect and answer the client's
/// side of the handshake. Returns the upstream stream and `host:port`.
async fn open(client: &mut UnixStream, shared: &Shared) -> Result<(TcpStream, String), Refusal> {
    let limits = &shared.limits;
    let (head, rest) = tokio::time::timeout(
        limits.head_timeout,
        read_head(client, limits.max_head_bytes),
    )
    .await
    .map_err(|_| Refusal::Timeout("the request head did not arrive in time".to_owned()))??;
    let request = parse_head(&head).map_err(|e| Refusal::Bad(e.to_string()))?;
    let url = request.url();
    shared.guard.check_url(url).map_err(Refusal::Blocked)?;
    let port = url
        .port_or_known_default()
        .ok_or_else(|| Refusal::Bad("the destination has no port".to_owned()))?;
    let (host, addrs) = destination(url, shared).await?;
    let dest = format!("{host}:{port}");
    let mut upstream = connect(&addrs, port, limits.connect_timeout, &dest).await?;
    match &request {
        ProxyRequest::Connect { .. } => {
            client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await
                .map_err(|e| Refusal::Upstream(format!("the client went away: {e}")))?;
            upstream
                .write_all(&rest)
                .await
                .map_err(|e| Refusal::Upstream(format!("{dest}: {e}")))?;
        }
        ProxyRequest::Forward { upstream_head, .. } => {
            let mut first = upstream_head.clone();
            first.extend_from_slice(&rest);
            upstream
                .write_all(&first)
                .await
                .map_err(|e| Refusal::Upstream(format!("{dest}: {e}")))?;
        }
    }
    tracing::debug!(destination = %dest, "egress proxy: connected");
    Ok((upstream, dest))
}

/// The host and the addresses the guard vetted for it.
async fn destination(url: &url::Url, shared: &Shared) -> Result<(String, Vec<IpAddr>), Refusal> {
    let host = url.host_str().unwrap_or_default().to_owned();
    let found = tokio::time::timeout(shared.limits.resolve_timeout, shared.guard.destination(url))
        .await
        .map_err(|_| Refusal::Timeout(format!("resolving {host} took too long")))?;
    match found {
        Ok(dest) => Ok((dest.host, dest.addrs)),
        Err(EgressError::Blocked(b)) => Err(Refusal::Blocked(b)),
        Err(e) => Err(Refusal::Upstream(e.to_string())),
    }
}

async fn connect(
    addrs: &[IpAddr],
    port: u16,
    timeout: Duration,
    dest: &str,
) -> Result<TcpStream, Refusal> {
    let mut last = Refusal::Upstream(format!("{dest}: no address to connect to"));
    for ip in addrs {
        match tokio::time::timeout(timeout, TcpStream::connect(SocketAddr::new(*ip, port))).await {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(e)) => last = Refusal::Upstream(format!("{dest} ({ip}): {e}")),
            Err(_) => last = Refusal::Timeout(format!("{dest} ({ip}): connect timed out")),
        }
    }
    Err(last)
}

/// Read up to the blank line ending the head; returns the head (without
/// the blank line) and whatever came after it.
async fn read_head(client: &mut UnixStream, max: usize) -> Result<(Vec<u8>, Vec<u8>), Refusal> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        if let Some(end) = find_blank_line(&buf) {
            let rest = buf.split_off(end + 4);
            buf.truncate(end);
            return Ok((buf, rest));
        }
        if buf.len() > max {
            return Err(Refusal::Bad(format!(
                "the request head is over {max} bytes"
            )));
        }
        let n = client
            .read(&mut chunk)
            .await
            .map_err(|e| Refusal::Bad(format!("reading the request head: {e}")))?;
        if n == 0 {
            return Err(Refusal::Bad(
                "the client closed before the end of its head".to_owned(),
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn find_blank_line(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n")
}
