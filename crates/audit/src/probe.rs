//! `--deep`'s live gateway probe: over loopback, with a bounded timeout,
//! `GET /healthz` (reachable? `ok`, `degraded` or `draining`), an
//! unauthenticated `GET /metrics` (is auth required?) and, with a token,
//! the `health` method over the WebSocket API (which hooks the running
//! gateway cannot run).
//!
//! It speaks just enough HTTP/1.1 and WebSocket (RFC 6455: one masked text
//! frame out, text frames in) over `std::net`, so the audit needs no async
//! runtime. An unreachable gateway is a fact (info), not an error.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use talon_gateway_protocol::{AuditSeverity, HealthResponse, ResponseFrame};

use crate::findings::Findings;

/// The largest answer read (a `health` response is a few KiB).
const MAX_ANSWER_BYTES: u64 = 1 << 20;

/// Where and how to probe a gateway.
#[derive(Clone)]
pub struct GatewayProbe {
    /// The address a client on this host reaches the gateway at
    /// (`GatewayConfig::client_addr`: every-interface binds through
    /// loopback).
    pub addr: SocketAddr,
    /// A token to call `health` with (never shown).
    pub token: Option<String>,
    /// Where the token came from (shown: a file path or a variable name).
    pub token_source: String,
    /// The bound on each connection step (connect, each read and write).
    pub timeout: Duration,
}

impl std::fmt::Debug for GatewayProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayProbe")
            .field("addr", &self.addr)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("token_source", &self.token_source)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl GatewayProbe {
    /// A probe of `addr` with no token and a 2-second bound per step.
    pub fn new(addr: SocketAddr) -> Self {
        GatewayProbe {
            addr,
            token: None,
            token_source: String::new(),
            timeout: Duration::from_secs(2),
        }
    }
}

/// An HTTP answer: status code and body.
struct Answer {
    status: u16,
    body: Vec<u8>,
}

fn connect(p: &GatewayProbe) -> std::io::Result<TcpStream> {
    let stream = TcpStream::connect_timeout(&p.addr, p.timeout)?;
    stream.set_read_timeout(Some(p.timeout))?;
    stream.set_write_timeout(Some(p.timeout))?;
    Ok(stream)
}

fn status_of(line: &str) -> Option<u16> {
    let mut parts = line.split_whitespace();
    let version = parts.next()?;
    if !version.starts_with("HTTP/1.") {
        return None;
    }
    parts.next()?.parse().ok()
}

fn invalid(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned())
}

/// One `GET path` with `Connection: close`, read to the end (bounded).
fn get(p: &GatewayProbe, path: &str) -> std::io::Result<Answer> {
    let mut stream = connect(p)?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {}\r\nAccept: application/json\r\nConnection: close\r\n\r\n",
        p.addr
    )?;
    let mut raw = Vec::new();
    (&mut stream).take(MAX_ANSWER_BYTES).read_to_end(&mut raw)?;
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| invalid("no end of the HTTP headers"))?;
    let head = String::from_utf8_lossy(&raw[..split]);
    let status = head
        .lines()
        .next()
        .and_then(status_of)
        .ok_or_else(|| invalid("not an HTTP answer"))?;
    Ok(Answer {
        status,
        body: raw[split + 4..].to_vec(),
    })
}

/// What `health` over the WebSocket API gave.
enum Health {
    /// The handshake was refused with this HTTP status (401: the token).
    Refused(u16),
    /// The method answered.
    Answer(Box<HealthResponse>),
    /// The method answered with an error.
    Error(String),
}

/// `health` over `/ws` with `token`: handshake, one request frame, read
/// frames until the answer with id 1.
fn ws_health(p: &GatewayProbe, token: &str) -> std::io::Result<Health> {
    let stream = connect(p)?;
    let mut writer = &stream;
    write!(
        writer,
        "GET /ws HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGFsb24tYXVkaXQtcHJvYmU=\r\nSec-WebSocket-Version: 13\r\nAuthorization: {}\r\n\r\n",
        p.addr,
        talon_gateway_protocol::authorization_header(token)
    )?;
    let mut reader = BufReader::new(&stream);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let status = status_of(&line).ok_or_else(|| invalid("not an HTTP answer"))?;
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Err(invalid("the connection closed in the handshake"));
        }
        if line == "\r\n" || line == "\n" {
            break;
        }
    }
    if status != 101 {
        return Ok(Health::Refused(status));
    }
    let request = talon_gateway_protocol::frame::request(
        serde_json::json!(1),
        "health",
        serde_json::json!({}),
    )
    .to_string();
    writer.write_all(&client_text_frame(request.as_bytes()))?;
    let deadline = Instant::now() + p.timeout * 2;
    let mut message: Vec<u8> = Vec::new();
    while Instant::now() < deadline {
        let (fin, opcode, payload) = read_frame(&mut reader)?;
        match opcode {
            // Close.
            0x8 => return Err(invalid("the gateway closed the connection")),
            // Text or continuation.
            0x1 | 0x0 => {
                message.extend_from_slice(&payload);
                if u64::try_from(message.len()).unwrap_or(u64::MAX) > MAX_ANSWER_BYTES {
                    return Err(invalid("the answer is too large"));
                }
                if !fin {
                    continue;
                }
                let text = std::mem::take(&mut message);
                let Ok(frame) = serde_json::from_slice::<ResponseFrame>(&text) else {
                    // A notification, not the answer.
                    continue;
                };
                if frame.id != serde_json::json!(1) {
                    continue;
                }
                return Ok(match frame.into_result() {
                    Ok(v) => match serde_json::from_value::<HealthResponse>(v) {
                        Ok(h) => Health::Answer(Box::new(h)),
                        Err(e) => Health::Error(format!("an answer that is not `health`'s: {e}")),
                    },
                    Err(e) => Health::Error(e.message),
                });
            }
            // Ping, pong, binary: not the answer.
            _ => {}
        }
    }
    Err(invalid("no answer in time"))
}

/// A masked, final text frame (a client must mask; the key only has to
/// be there, RFC 6455 §5.3).
fn client_text_frame(payload: &[u8]) -> Vec<u8> {
    const MASK: [u8; 4] = [0x5a, 0x17, 0xc3, 0x8e];
    let mut out = vec![0x81];
    let len = payload.len();
    if len < 126 {
        out.push(0x80 | u8::try_from(len).unwrap_or(125));
    } else if let Ok(short) = u16::try_from(len) {
        out.push(0x80 | 126);
        out.extend_from_slice(&short.to_be_bytes());
    } else {
        out.push(0x80 | 127);
        out.extend_from_slice(&(len as u64).to_be_bytes());
    }
    out.extend_from_slice(&MASK);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ MASK[i % 4]));
    out
}

/// One server frame: FIN, opcode, (unmasked) payload, bounded.
fn read_frame(r: &mut impl std::io::Read) -> std::io::Result<(bool, u8, Vec<u8>)> {
    let mut head = [0u8; 2];
    r.read_exact(&mut head)?;
    let fin = head[0] & 0x80 != 0;
    let opcode = head[0] & 0x0f;
    let masked = head[1] & 0x80 != 0;
    let len = match head[1] & 0x7f {
        126 => {
            let mut b = [0u8; 2];
            r.read_exact(&mut b)?;
            u64::from(u16::from_be_bytes(b))
        }
        127 => {
            let mut b = [0u8; 8];
            r.read_exact(&mut b)?;
            u64::from_be_bytes(b)
        }
        n => u64::from(n),
    };
    if len > MAX_ANSWER_BYTES {
        return Err(invalid("a frame is too large"));
    }
    let mut mask = [0u8; 4];
    if masked {
        r.read_exact(&mut mask)?;
    }
    let mut payload = vec![0u8; usize::try_from(len).map_err(|_| invalid("a frame is too large"))?];
    r.read_exact(&mut payload)?;
    if masked {
        for (i, b) in payload.iter_mut().enumerate() {
            *b ^= mask[i % 4];
        }
    }
    Ok((fin, opcode, payload))
}

pub(crate) fn check(p: &GatewayProbe, out: &mut Findings) {
    let addr = p.addr;
    let healthz = match get(p, "/healthz") {
        Ok(a) => a,
        Err(e) => {
            out.push(
                "talon.gateway.probe",
                AuditSeverity::Info,
                format!("no gateway answers at {addr}"),
                format!(
                    "GET http://{addr}/healthz failed within {} ms: {e}. Nothing was probed; the checks above read the configuration only.",
                    p.timeout.as_millis()
                ),
                "Start the gateway (`talon-gateway`) and run `talon security audit --deep` again to probe it.",
            );
            return;
        }
    };
    let status = serde_json::from_slice::<serde_json::Value>(&healthz.body)
        .ok()
        .and_then(|v| v.get("status").and_then(|s| s.as_str()).map(str::to_owned))
        .unwrap_or_else(|| format!("HTTP {} without a status", healthz.status));
    let mut facts = vec![format!(
        "GET /healthz answered {} with status `{status}`",
        healthz.status
    )];
    // An unauthenticated request to an authenticated endpoint: 401 (or
    // 429 while loopback is rate limited) means auth is required.
    match get(p, "/metrics") {
        Ok(a) if a.status == 401 || a.status == 429 => facts.push(format!(
            "an unauthenticated GET /metrics is refused ({}): auth is required",
            a.status
        )),
        Ok(a) if (200..300).contains(&a.status) => {
            out.push(
                "talon.gateway.probe_no_auth",
                AuditSeverity::Critical,
                format!("the gateway at {addr} answers without a token"),
                format!(
                    "An unauthenticated GET http://{addr}/metrics answered {}: whoever reaches the address can use the gateway without a token.",
                    a.status
                ),
                "Stop that process; Talon's gateway always requires a token, so whatever listens there is not it or is misbuilt.",
            );
            facts.push(format!(
                "an unauthenticated GET /metrics answered {}: NO auth",
                a.status
            ));
        }
        Ok(a) => facts.push(format!(
            "an unauthenticated GET /metrics answered {}",
            a.status
        )),
        Err(e) => facts.push(format!("GET /metrics failed: {e}")),
    }
    let mut degraded_hooks: Option<Vec<String>> = None;
    match p.token.as_deref() {
        None => facts.push("no token to call `health` with".to_owned()),
        Some(token) => match ws_health(p, token) {
            Ok(Health::Answer(h)) => {
                facts.push(format!(
                    "`health` with the token from {} answered: status `{}`, version {}, config {}, {} session(s), {} hook problem(s)",
                    p.token_source,
                    h.status,
                    h.version,
                    h.config_origin,
                    h.sessions,
                    h.hook_problems.len()
                ));
                if !h.hook_problems.is_empty() {
                    degraded_hooks = Some(
                        h.hook_problems
                            .iter()
                            .map(|hp| format!("`{}` ({}: {})", hp.hook_id, hp.key_path, hp.code))
                            .collect(),
                    );
                }
            }
            Ok(Health::Refused(code)) => facts.push(format!(
                "the token from {} was refused ({code}): it is not one this gateway accepts",
                p.token_source
            )),
            Ok(Health::Error(e)) => facts.push(format!("`health` failed: {e}")),
            Err(e) => facts.push(format!("`health` over /ws failed: {e}")),
        },
    }
    if status == "degraded" || degraded_hooks.is_some() {
        out.push(
            "talon.gateway.degraded",
            AuditSeverity::Warn,
            format!("the gateway at {addr} is degraded"),
            match &degraded_hooks {
                Some(hooks) => format!(
                    "The running gateway has command hooks that cannot run: {}. A before_tool_call one blocks every call it matches.",
                    hooks.join(", ")
                ),
                None => "The running gateway reports `degraded`: a configured command hook cannot run (call `health` with a token for which).".to_owned(),
            },
            "Fix the hooks (`talon config validate` names them) and reload the gateway (`talon gateway call gateway.reload` or SIGHUP).",
        );
    }
    out.push(
        "talon.gateway.probe",
        AuditSeverity::Info,
        format!("a gateway answers at {addr} (status `{status}`)"),
        format!("{}.", facts.join("; ")),
        "Nothing to do unless a fact above is unexpected.",
    );
}

#[cfg(test)]
#[path = "probe_tests.rs"]
mod tests;
