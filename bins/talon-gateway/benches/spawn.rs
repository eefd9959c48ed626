//! Sub-agents through the real daemon (release build, client and gateway
//! on the same machine), each figure beside a floor from the same run,
//! interleaved call for call:
//!
//! - spawn to first tool call: `sessions_spawn` over WebSocket until the
//!   child's first `tools.invoke` (a `read`, sent by a runner connection
//!   subscribed with `runner.subscribe` as soon as it hears `runner.run`)
//!   has its reply. Floor: `sessions.create` of a fresh session and the
//!   same first `read` in it (a client starting a session itself, with no
//!   ledger task, no sub-agent policy and no runner hop).
//! - `sessions_history` (limit 200, calls included) on a session holding
//!   10,000 messages. Floor: `session_status` in the same session (the
//!   call path with a trivial tool).
//!
//! Run with `cargo bench -p talon-gateway --bench spawn`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    missing_docs
)]
#![allow(
    clippy::disallowed_methods,
    reason = "test and tooling code starts its probes, engines and binaries directly; Talon's own children go through talon_proc_tree::ChildCommand"
)]

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

const BIN: &str = env!("CARGO_BIN_EXE_talon-gateway");
const HISTORY_KEY: &str = "agent:main:gw:history-bench";
const MESSAGES: u64 = 10_000;

struct Daemon {
    child: Child,
    addr: SocketAddr,
    token: String,
    _dir: tempfile::TempDir,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A session with 10,000 messages, written to the state database before
/// the daemon starts (it reopens the session from there).
fn seed_history(state: &std::path::Path) {
    std::fs::create_dir_all(state).unwrap();
    let store = talon_sessions::SessionStore::open(&state.join("talon.db")).unwrap();
    store
        .save(&talon_sessions::SessionRecord {
            key: HISTORY_KEY.into(),
            agent_id: "main".into(),
            parent_key: None,
            spawn_depth: 0,
            label: None,
            status: talon_sessions::SessionStatus::Open,
            created_at_ms: 1,
            updated_at_ms: 1,
            params: json!({"sessionKey": HISTORY_KEY, "agentId": "main"}),
        })
        .unwrap();
    for i in 0..MESSAGES {
        let role = if i % 2 == 0 {
            talon_sessions::Role::User
        } else {
            talon_sessions::Role::Assistant
        };
        let text = format!("message {i}: module {} built in {} ms", i % 97, i % 1000);
        store
            .append_message(HISTORY_KEY, role, None, &text, i + 2)
            .unwrap();
    }
}

fn start() -> Daemon {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("talon.json");
    std::fs::write(
        &cfg,
        r#"{"agents": {"defaults": {"subagents": {"maxChildrenPerAgent": 20, "maxConcurrent": 64}}}}"#,
    )
    .unwrap();
    let state = dir.path().join("state");
    seed_history(&state);
    let mut child = Command::new(BIN)
        .arg("--config")
        .arg(&cfg)
        .arg("--state-dir")
        .arg(&state)
        .args(["--bind", "127.0.0.1:0", "--print-address"])
        .env("HOME", dir.path())
        .env("TALON_LOG", "warn")
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
    let t0 = Instant::now();
    let token = loop {
        if let Ok(t) = std::fs::read_to_string(state.join("gateway.token"))
            && std::net::TcpStream::connect(addr).is_ok()
        {
            break t.trim().to_owned();
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "not ready");
        std::thread::sleep(Duration::from_millis(5));
    };
    Daemon {
        child,
        addr,
        token,
        _dir: dir,
    }
}

struct Ws {
    ws: tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>,
    id: u64,
    notes: Vec<Value>,
}

impl Ws {
    async fn connect(d: &Daemon) -> Ws {
        let mut req = format!("ws://{}/ws", d.addr).into_client_request().unwrap();
        req.headers_mut().insert(
            "authorization",
            format!("Bearer {}", d.token).parse().unwrap(),
        );
        let (ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
        Ws {
            ws,
            id: 0,
            notes: Vec::new(),
        }
    }

    async fn frame(&mut self) -> Value {
        loop {
            match self.ws.next().await.unwrap().unwrap() {
                Message::Text(t) => return serde_json::from_str(t.as_str()).unwrap(),
                _ => continue,
            }
        }
    }

    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.ws
            .send(Message::Text(frame.to_string().into()))
            .await
            .unwrap();
        loop {
            let v = self.frame().await;
            if v["id"] == json!(id) {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
            if v.get("method").is_some() {
                self.notes.push(v);
            }
        }
    }

    async fn notification(&mut self, method: &str) -> Value {
        if let Some(i) = self.notes.iter().position(|n| n["method"] == method) {
            return self.notes.remove(i);
        }
        loop {
            let v = self.frame().await;
            if v["method"] == method {
                return v;
            }
            if v.get("method").is_some() {
                self.notes.push(v);
            }
        }
    }
}

fn invoke(session: &str, tool: &str, params: Value) -> Value {
    json!({"sessionKey": session, "toolName": tool, "params": params})
}

/// One spawn until the child's first tool call has its reply; the run is
/// then completed and its announce awaited (not measured).
async fn spawn_once(client: &mut Ws, runner: &mut Ws) -> Duration {
    let t0 = Instant::now();
    let r = client
        .call(
            "tools.invoke",
            invoke("main", "sessions_spawn", json!({"task": "bench"})),
        )
        .await;
    assert_eq!(r["status"], json!("ok"), "{r}");
    let run = runner.notification("runner.run").await;
    let child = run["params"]["sessionKey"].as_str().unwrap().to_owned();
    let first = runner
        .call(
            "tools.invoke",
            invoke(&child, "read", json!({"path": "bench.txt"})),
        )
        .await;
    let took = t0.elapsed();
    assert!(first.get("status").is_some(), "{first}");
    runner
        .call(
            "runner.complete",
            json!({"runId": run["params"]["runId"], "status": "ok", "summary": "done"}),
        )
        .await;
    runner.notification("runner.systemEvent").await;
    took
}

/// The floor: a fresh session opened by the client, and the same first
/// call in it.
async fn create_once(client: &mut Ws, n: usize) -> Duration {
    let key = format!("agent:main:gw:floor-{n}");
    let t0 = Instant::now();
    client
        .call("sessions.create", json!({"sessionKey": key}))
        .await;
    let first = client
        .call(
            "tools.invoke",
            invoke(&key, "read", json!({"path": "bench.txt"})),
        )
        .await;
    let took = t0.elapsed();
    assert!(first.get("status").is_some(), "{first}");
    client
        .call("sessions.close", json!({"sessionKey": key}))
        .await;
    took
}

async fn timed(client: &mut Ws, tool: &str, params: Value) -> Duration {
    let t0 = Instant::now();
    let r = client
        .call("tools.invoke", invoke(HISTORY_KEY, tool, params))
        .await;
    let took = t0.elapsed();
    assert_eq!(r["status"], json!("ok"), "{r}");
    took
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort_unstable();
    v[v.len() / 2].as_secs_f64() * 1e6
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let d = start();
    let rounds: usize = std::env::var("TALON_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let (spawn, floor, history, status, listed) = rt.block_on(async {
        let mut client = Ws::connect(&d).await;
        let mut runner = Ws::connect(&d).await;
        runner.call("runner.subscribe", json!({})).await;
        // Warm-up, not measured.
        for i in 0..20 {
            spawn_once(&mut client, &mut runner).await;
            create_once(&mut client, 1_000_000 + i).await;
        }
        let (mut spawn, mut floor) = (Vec::new(), Vec::new());
        for i in 0..rounds {
            spawn.push(spawn_once(&mut client, &mut runner).await);
            floor.push(create_once(&mut client, i).await);
        }
        let hist = json!({"sessionKey": HISTORY_KEY, "limit": 200});
        let listed = client
            .call(
                "tools.invoke",
                invoke(HISTORY_KEY, "sessions_history", hist.clone()),
            )
            .await["details"]["messages"]
            .as_array()
            .map_or(0, Vec::len);
        let (mut history, mut status) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            history.push(timed(&mut client, "sessions_history", hist.clone()).await);
            status.push(timed(&mut client, "session_status", json!({})).await);
        }
        (spawn, floor, history, status, listed)
    });
    let (spawn, floor) = (median(spawn), median(floor));
    let (history, status) = (median(history), median(status));
    println!("\nsub-agents through the gateway ({rounds} rounds each, interleaved; medians)");
    println!(
        "spawn_to_first_tool_call            {spawn:>9.0} µs  ({:.2}x the floor)",
        spawn / floor
    );
    println!("floor: sessions.create + first call {floor:>9.0} µs");
    println!(
        "sessions_history 200 of {MESSAGES} msgs  {history:>9.0} µs  ({:.2}x the floor; {listed} messages returned)",
        history / status
    );
    println!("floor: session_status, same session {status:>9.0} µs");
}
