//! Shared e2e helpers: start the built daemon, talk to it over real
//! sockets (WebSocket via tokio-tungstenite, raw HTTP/1.1).

#![allow(dead_code, unreachable_pub)]

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

pub const BIN: &str = env!("CARGO_BIN_EXE_talon-gateway");

pub use talon_test_support::gateway::{http, http_response, http_with_headers};

/// A running daemon in its own temp state dir, bound to port 0 (its
/// address read back with `--print-address`).
pub type Gw = talon_test_support::gateway::GatewayProcess;

/// Starting this crate's daemon, and the clients the tests use on it.
pub trait GwExt {
    /// Start with `config` (JSON text) written to `<dir>/talon.json`.
    fn start(config: &str) -> Gw;
    /// The same in a temp dir the test prepared.
    fn start_in(dir: tempfile::TempDir, config: &str) -> Gw;
    /// A WebSocket client with the operator token.
    fn ws(&self) -> impl std::future::Future<Output = Ws>;
    /// `POST /tools/invoke` with `token` (default: the operator's).
    fn post_invoke(&self, token: Option<&str>, body: Value) -> (u16, Value);
}

impl GwExt for Gw {
    fn start(config: &str) -> Gw {
        Gw::launch(BIN, config).unwrap_or_else(|e| panic!("{e:#}"))
    }

    fn start_in(dir: tempfile::TempDir, config: &str) -> Gw {
        Gw::launch_in(BIN, dir, config).unwrap_or_else(|e| panic!("{e:#}"))
    }

    async fn ws(&self) -> Ws {
        Ws::connect(self.addr, Some(&self.token)).await.unwrap()
    }

    fn post_invoke(&self, token: Option<&str>, body: Value) -> (u16, Value) {
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

/// `kill(2)` through the `kill` program (no unsafe code in tests): 0 on
/// success.
pub fn unsafe_free_kill(pid: i32, sig: i32) -> i32 {
    let ok = u32::try_from(pid).is_ok_and(|pid| talon_test_support::proc::signal(pid, sig));
    if ok { 0 } else { 1 }
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
    talon_test_support::proc::kill_mentioning(needle);
}
