//! What the gateway benches share: the release daemon started on port 0
//! in a fresh state dir, and a keep-alive HTTP/1.1 client for
//! `POST /tools/invoke` and `/mcp`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(
    clippy::disallowed_methods,
    reason = "bench code starts the daemon directly"
)]

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_talon-gateway");

/// What a bench call does.
#[derive(Clone, Copy)]
pub(crate) enum Call {
    /// `session_status`: allowed, answers at once.
    Status,
    /// `exec`, denied by policy.
    DeniedExec,
}

pub(crate) struct Daemon {
    pub(crate) child: Child,
    pub(crate) addr: SocketAddr,
    pub(crate) token: String,
    pub(crate) healthy_after: Duration,
    _dir: tempfile::TempDir,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The release daemon with `config` and extra environment, in a fresh
/// state dir, once healthy.
pub(crate) fn start_with(config: &str, env: &[(&str, &str)]) -> Daemon {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("talon.json");
    std::fs::write(&cfg, config).unwrap();
    let state = dir.path().join("state");
    let t0 = Instant::now();
    // Port 0: the daemon prints the address the kernel picked.
    let mut child = Command::new(BIN)
        .arg("--config")
        .arg(&cfg)
        .arg("--state-dir")
        .arg(&state)
        .args(["--bind", "127.0.0.1:0", "--print-address"])
        .env("HOME", dir.path())
        .env("TALON_LOG", "warn")
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let addr: SocketAddr = line.trim().parse().unwrap();
    loop {
        if let Ok(mut s) = std::net::TcpStream::connect(addr) {
            use std::io::{Read as _, Write as _};
            let _ = s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            let mut buf = String::new();
            let _ = s.read_to_string(&mut buf);
            if buf.starts_with("HTTP/1.1 200") {
                break;
            }
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "not healthy");
        std::thread::sleep(Duration::from_micros(500));
    }
    let healthy_after = t0.elapsed();
    let token = std::fs::read_to_string(state.join("gateway.token"))
        .unwrap()
        .trim()
        .to_owned();
    Daemon {
        child,
        addr,
        token,
        healthy_after,
        _dir: dir,
    }
}

pub(crate) struct HttpClient {
    stream: BufReader<TcpStream>,
    token: String,
}

/// One HTTP/1.1 response, its body read to the end (a `Content-Length`
/// body or a chunked one, as an SSE reply is): what a client that waits
/// for the whole reply sees.
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) head: String,
    pub(crate) body: Vec<u8>,
}

impl HttpClient {
    pub(crate) async fn connect(d: &Daemon) -> HttpClient {
        let s = TcpStream::connect(d.addr).await.unwrap();
        s.set_nodelay(true).unwrap();
        HttpClient {
            stream: BufReader::new(s),
            token: d.token.clone(),
        }
    }

    pub(crate) async fn post(&mut self, path: &str, extra: &str, body: &str) -> Response {
        let req = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\n\r\n{body}",
            self.token,
            body.len()
        );
        self.stream
            .get_mut()
            .write_all(req.as_bytes())
            .await
            .unwrap();
        let head = self.line_until_blank().await;
        let status: u16 = head.split_whitespace().nth(1).unwrap().parse().unwrap();
        let header = |name: &str| {
            head.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
            })
        };
        let mut body = Vec::new();
        if let Some(len) = header("content-length") {
            body.resize(len.parse().unwrap(), 0);
            self.stream.read_exact(&mut body).await.unwrap();
        } else if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
            loop {
                let size_line = self.line().await;
                let size = usize::from_str_radix(size_line.trim(), 16).unwrap();
                let mut chunk = vec![0u8; size + 2];
                self.stream.read_exact(&mut chunk).await.unwrap();
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        }
        Response { status, head, body }
    }

    async fn line(&mut self) -> String {
        let mut line = Vec::with_capacity(16);
        loop {
            let b = self.stream.read_u8().await.unwrap();
            line.push(b);
            if line.ends_with(b"\r\n") {
                return String::from_utf8(line).unwrap();
            }
        }
    }

    async fn line_until_blank(&mut self) -> String {
        let mut head = String::with_capacity(512);
        loop {
            let line = self.line().await;
            head.push_str(&line);
            if line == "\r\n" {
                return head;
            }
        }
    }

    pub(crate) async fn invoke(&mut self, call: Call) {
        let body = match call {
            Call::Status => json!({"tool": "session_status", "args": {}}),
            Call::DeniedExec => json!({"tool": "exec", "args": {"command": "id"}}),
        }
        .to_string();
        let r = self.post("/tools/invoke", "", &body).await;
        let want = match call {
            Call::Status => 200,
            Call::DeniedExec => 404,
        };
        assert_eq!(r.status, want, "{}", String::from_utf8_lossy(&r.body));
    }
}
