//! Shared e2e helpers: start the built daemon, talk to it over real
//! sockets (WebSocket via tokio-tungstenite, raw HTTP/1.1).

#![allow(dead_code, unreachable_pub)]

use std::collections::VecDeque;
use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

pub const BIN: &str = env!("CARGO_BIN_EXE_talon-gateway");

/// A free loopback port (bound and released).
pub fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// A running daemon in its own temp state dir.
pub struct Gw {
    pub child: Option<Child>,
    pub dir: tempfile::TempDir,
    pub addr: SocketAddr,
    pub token: String,
    pub config: PathBuf,
    pub log: PathBuf,
    pub healthy_after: Duration,
}

impl Gw {
    /// Start with `config` (JSON text) written to `<dir>/talon.json`.
    pub fn start(config: &str) -> Gw {
        let dir = tempfile::tempdir().unwrap();
        Gw::start_in(dir, config)
    }

    pub fn start_in(dir: tempfile::TempDir, config: &str) -> Gw {
        let config_path = dir.path().join("talon.json");
        std::fs::write(&config_path, config).unwrap();
        let port = free_port();
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let mut gw = Gw {
            child: None,
            addr,
            token: String::new(),
            config: config_path,
            log: dir.path().join("gateway.log"),
            dir,
            healthy_after: Duration::ZERO,
        };
        gw.spawn();
        gw
    }

    pub fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// (Re)start the process on the same state and address.
    pub fn spawn(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap();
        let started = Instant::now();
        let child = Command::new(BIN)
            .arg("--config")
            .arg(&self.config)
            .arg("--state-dir")
            .arg(self.state())
            .arg("--bind")
            .arg(self.addr.to_string())
            .env("HOME", self.dir.path())
            .env("TALON_LOG", "info")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok((200, _)) = http(self.addr, "GET", "/healthz", None, None) {
                break;
            }
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                panic!("gateway exited early ({status}): {}", self.log_text());
            }
            assert!(
                Instant::now() < deadline,
                "gateway not healthy: {}",
                self.log_text()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        self.healthy_after = started.elapsed();
        self.token = std::fs::read_to_string(self.state().join("gateway.token"))
            .unwrap()
            .trim()
            .to_owned();
    }

    pub fn pid(&self) -> i32 {
        self.child.as_ref().unwrap().id() as i32
    }

    pub fn signal(&self, sig: i32) {
        let rc = unsafe_free_kill(self.pid(), sig);
        assert_eq!(rc, 0, "kill failed");
    }

    /// Wait for the process to exit; its exit code.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<i32> {
        let deadline = Instant::now() + limit;
        let child = self.child.as_mut().unwrap();
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status.code();
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub async fn ws(&self) -> Ws {
        Ws::connect(self.addr, Some(&self.token)).await.unwrap()
    }

    pub fn post_invoke(&self, token: Option<&str>, body: Value) -> (u16, Value) {
        let (status, text) = http(
            self.addr,
            "POST",
            "/tools/invoke",
            token.or(Some(&self.token)),
            Some(&body.to_string()),
        )
        .unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }
}

impl Drop for Gw {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// `kill(2)` through the `kill` program (no unsafe code in tests).
pub fn unsafe_free_kill(pid: i32, sig: i32) -> i32 {
    let status = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    if status.success() { 0 } else { 1 }
}

/// A minimal HTTP/1.1 request (Connection: close). Returns status and body.
pub fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    let body = body.unwrap_or("");
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf)?;
    let text = String::from_utf8_lossy(&buf).into_owned();
    let status: u16 = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(rest)
    } else {
        rest.to_owned()
    };
    Ok((status, body))
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = &rest[n..];
        s = s.strip_prefix("\r\n").unwrap_or(s);
    }
    out
}

type WsStream =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A JSON-RPC WebSocket client.
pub struct Ws {
    pub stream: WsStream,
    next_id: u64,
    pub notifications: VecDeque<Value>,
}

impl Ws {
    pub async fn connect(
        addr: SocketAddr,
        token: Option<&str>,
    ) -> Result<Ws, tokio_tungstenite::tungstenite::Error> {
        let mut req = format!("ws://{addr}/ws").into_client_request()?;
        if let Some(t) = token {
            req.headers_mut()
                .insert("authorization", format!("Bearer {t}").parse().unwrap());
        }
        let (stream, _) = tokio_tungstenite::connect_async(req).await?;
        Ok(Ws {
            stream,
            next_id: 1,
            notifications: VecDeque::new(),
        })
    }

    pub async fn send_text(&mut self, text: &str) {
        self.stream.send(Message::Text(text.into())).await.unwrap();
    }

    /// The next frame (any), within 20 s.
    pub async fn next_frame(&mut self) -> Option<Value> {
        loop {
            let msg = tokio::time::timeout(Duration::from_secs(20), self.stream.next())
                .await
                .ok()??
                .ok()?;
            match msg {
                Message::Text(t) => return serde_json::from_str(t.as_str()).ok(),
                Message::Close(_) => return None,
                _ => continue,
            }
        }
    }

    /// Call and wait for the response with the same id (notifications in
    /// between are kept).
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_text(&frame.to_string()).await;
        loop {
            let v = self
                .next_frame()
                .await
                .expect("connection closed before the reply");
            if v.get("id") == Some(&json!(id)) {
                return v;
            }
            if v.get("method").is_some() && v.get("id").is_none() {
                self.notifications.push_back(v);
            }
        }
    }

    /// The result of a call, panicking with the error if there is one.
    pub async fn ok(&mut self, method: &str, params: Value) -> Value {
        let v = self.call(method, params).await;
        assert!(v.get("error").is_none(), "{method} failed: {v}");
        v["result"].clone()
    }

    /// Wait for a notification of `method`.
    pub async fn notification(&mut self, method: &str) -> Value {
        if let Some(i) = self
            .notifications
            .iter()
            .position(|n| n["method"] == method)
        {
            return self.notifications.remove(i).unwrap();
        }
        loop {
            let v = self
                .next_frame()
                .await
                .unwrap_or_else(|| panic!("closed while waiting for {method}"));
            if v["method"] == method {
                return v;
            }
            if v.get("method").is_some() {
                self.notifications.push_back(v);
            }
        }
    }
}

/// The Python interpreter with websockets and mcp installed.
pub fn python() -> PathBuf {
    match std::env::var_os("TALON_TEST_PYTHON") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => panic!(
            "TALON_TEST_PYTHON is not set: run `cargo xtask py-env` (or `cargo xtask test`, which sets it) to create the Python test environment"
        ),
    }
}

pub fn write_script(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// SIGKILL every process whose command line mentions `needle` (a unique
/// temp path), by pid.
pub fn kill_processes_mentioning(needle: &str) {
    let me = std::process::id().to_string();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.chars().all(|c| c.is_ascii_digit()) || name == me {
            continue;
        }
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline"))
            && String::from_utf8_lossy(&cmd).contains(needle)
        {
            let _ = unsafe_free_kill(name.parse().unwrap(), 9);
        }
    }
}
