//! The gateway end to end: the release daemon and this client on the same
//! machine; sequential and 8-way `tools.invoke` of `session_status` and of
//! a policy-denied `exec`, over WebSocket and `POST /tools/invoke`, and
//! `session_status` over `/mcp` (`tools/call` on a keep-alive connection,
//! each reply read to its end) against `POST /tools/invoke` in the same run.
//! Reports req/s, p50/p90/p99, gateway CPU per request (from
//! `/proc/<pid>/stat`), idle RSS, RSS after 100k calls and time to healthy.
//! Run with `cargo bench -p talon-gateway --bench gateway`; the figures are
//! also written to `target/gateway-bench.json`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]
#![allow(
    clippy::disallowed_methods,
    reason = "test and tooling code starts its probes, engines and binaries directly; Talon's own children go through talon_proc_tree::ChildCommand"
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

mod common;

use common::{Call, Daemon, HttpClient};

fn start() -> Daemon {
    common::start_with(r#"{"tools": {"deny": ["exec"]}}"#, &[])
}
const TICKS_PER_SEC: f64 = 100.0;

fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = stat.rsplit_once(')').unwrap().1;
    let f: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 (utime, stime) are at 11 and 12 after the `)`.
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    kib / 1024.0
}

#[derive(Clone, Copy)]
enum Transport {
    Ws,
    Http,
    Mcp,
}

struct WsClient {
    ws: tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>,
    id: u64,
}

impl WsClient {
    async fn connect(d: &Daemon) -> WsClient {
        let mut req = format!("ws://{}/ws", d.addr).into_client_request().unwrap();
        req.headers_mut().insert(
            "authorization",
            format!("Bearer {}", d.token).parse().unwrap(),
        );
        let (ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
        WsClient { ws, id: 0 }
    }

    async fn invoke(&mut self, call: Call) {
        self.id += 1;
        let (tool, params) = match call {
            Call::Status => ("session_status", json!({})),
            Call::DeniedExec => ("exec", json!({"command": "id"})),
        };
        let frame = json!({"jsonrpc": "2.0", "id": self.id, "method": "tools.invoke",
            "params": {"sessionKey": "main", "toolName": tool, "params": params}});
        self.ws
            .send(Message::Text(frame.to_string().into()))
            .await
            .unwrap();
        loop {
            match self.ws.next().await.unwrap().unwrap() {
                Message::Text(t) => {
                    let v: Value = serde_json::from_str(t.as_str()).unwrap();
                    if v["id"] == json!(self.id) {
                        let want = match call {
                            Call::Status => "ok",
                            Call::DeniedExec => "blocked",
                        };
                        assert_eq!(v["result"]["status"], json!(want), "{v}");
                        return;
                    }
                }
                _ => continue,
            }
        }
    }
}

/// `/mcp` on one keep-alive connection, as a plain HTTP client that reads
/// every reply to its end: `initialize`, then `tools/call` per call.
struct McpClient {
    http: HttpClient,
    session: String,
    id: u64,
}

const MCP_ACCEPT: &str = "Accept: application/json, text/event-stream\r\n";

impl McpClient {
    async fn connect(d: &Daemon) -> McpClient {
        let mut http = HttpClient::connect(d).await;
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "talon-bench", "version": "0"}}});
        let r = http.post("/mcp", MCP_ACCEPT, &init.to_string()).await;
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        let session = r
            .head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("mcp-session-id")
                    .then(|| v.trim().to_owned())
            })
            .unwrap();
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let extra = format!("{MCP_ACCEPT}Mcp-Session-Id: {session}\r\n");
        let r = http.post("/mcp", &extra, &note.to_string()).await;
        assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
        McpClient {
            http,
            session,
            id: 0,
        }
    }

    async fn invoke(&mut self, call: Call) {
        self.id += 1;
        let (tool, args) = match call {
            Call::Status => ("session_status", json!({})),
            Call::DeniedExec => ("exec", json!({"command": "id"})),
        };
        let req = json!({"jsonrpc": "2.0", "id": self.id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}});
        let extra = format!("{MCP_ACCEPT}Mcp-Session-Id: {}\r\n", self.session);
        let r = self.http.post("/mcp", &extra, &req.to_string()).await;
        let text = String::from_utf8_lossy(&r.body);
        assert_eq!(r.status, 200, "{text}");
        assert!(text.contains(&format!("\"id\":{}", self.id)), "{text}");
    }
}

struct Figures {
    name: String,
    calls: usize,
    rps: f64,
    p50_us: f64,
    p90_us: f64,
    p99_us: f64,
    cpu_us_per_call: f64,
}

async fn scenario(d: &Daemon, t: Transport, c: Call, ways: usize, per_way: usize) -> Figures {
    let pid = d.child.id();
    let mut handles = Vec::new();
    let barrier = Arc::new(tokio::sync::Barrier::new(ways + 1));
    for _ in 0..ways {
        let barrier = Arc::clone(&barrier);
        let mut ws = match t {
            Transport::Ws => Some(WsClient::connect(d).await),
            _ => None,
        };
        let mut http = match t {
            Transport::Http => Some(HttpClient::connect(d).await),
            _ => None,
        };
        let mut mcp = match t {
            Transport::Mcp => Some(McpClient::connect(d).await),
            _ => None,
        };
        handles.push(tokio::spawn(async move {
            // Warm-up, not measured.
            for _ in 0..200 {
                if let Some(w) = ws.as_mut() {
                    w.invoke(c).await
                } else if let Some(h) = http.as_mut() {
                    h.invoke(c).await
                } else if let Some(m) = mcp.as_mut() {
                    m.invoke(c).await
                }
            }
            barrier.wait().await;
            let mut lat = Vec::with_capacity(per_way);
            for _ in 0..per_way {
                let s = Instant::now();
                if let Some(w) = ws.as_mut() {
                    w.invoke(c).await
                } else if let Some(h) = http.as_mut() {
                    h.invoke(c).await
                } else if let Some(m) = mcp.as_mut() {
                    m.invoke(c).await
                }
                lat.push(s.elapsed());
            }
            lat
        }));
    }
    barrier.wait().await;
    let cpu0 = cpu_ticks(pid);
    let t0 = Instant::now();
    let mut lat = Vec::new();
    for h in handles {
        lat.extend(h.await.unwrap());
    }
    let wall = t0.elapsed();
    let cpu = cpu_ticks(pid) - cpu0;
    lat.sort_unstable();
    let pct =
        |p: f64| lat[((lat.len() as f64 * p) as usize).min(lat.len() - 1)].as_secs_f64() * 1e6;
    let calls = lat.len();
    let name = format!(
        "{} {} {}",
        match t {
            Transport::Ws => "ws",
            Transport::Http => "http",
            Transport::Mcp => "mcp",
        },
        if ways == 1 {
            "sequential".to_owned()
        } else {
            format!("{ways}-way")
        },
        match c {
            Call::Status => "session_status",
            Call::DeniedExec => "denied exec",
        },
    );
    Figures {
        name,
        calls,
        rps: calls as f64 / wall.as_secs_f64(),
        p50_us: pct(0.50),
        p90_us: pct(0.90),
        p99_us: pct(0.99),
        cpu_us_per_call: cpu as f64 / TICKS_PER_SEC * 1e6 / calls as f64,
    }
}

fn main() {
    // `cargo bench` passes harness flags (`--bench`, criterion's options);
    // this runner takes none.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // Time to healthy: the median of five fresh starts (new state dir:
    // token generated, databases created).
    let mut starts: Vec<Duration> = (0..5).map(|_| start().healthy_after).collect();
    starts.sort_unstable();
    let healthy = starts[2];
    let d = start();
    std::thread::sleep(Duration::from_millis(300));
    let idle = rss_mib(d.child.id());
    let plan: &[(Transport, Call, usize, usize)] = &[
        (Transport::Ws, Call::Status, 1, 10_000),
        (Transport::Ws, Call::DeniedExec, 1, 10_000),
        (Transport::Ws, Call::Status, 8, 2_500),
        (Transport::Ws, Call::DeniedExec, 8, 2_500),
        (Transport::Http, Call::Status, 1, 10_000),
        (Transport::Http, Call::DeniedExec, 1, 10_000),
        (Transport::Http, Call::Status, 8, 2_500),
        (Transport::Http, Call::DeniedExec, 8, 2_500),
        (Transport::Mcp, Call::Status, 1, 10_000),
        (Transport::Mcp, Call::Status, 8, 2_500),
    ];
    let mut results = Vec::new();
    let mut total = 0usize;
    let mut rss_trace = vec![(0usize, idle)];
    // Warm-up: the first few thousand calls grow the allocator's pools
    // and the journal's file; not measured.
    let w = rt.block_on(scenario(&d, Transport::Ws, Call::Status, 2, 2_500));
    total += w.calls + 400;
    rss_trace.push((total, rss_mib(d.child.id())));
    for &(t, c, ways, per) in plan {
        let f = rt.block_on(scenario(&d, t, c, ways, per));
        total += f.calls + 200 * ways;
        rss_trace.push((total, rss_mib(d.child.id())));
        results.push(f);
    }
    // Keep going (the 8-way mixes again, on fresh connections) to well
    // past 100,000 calls: RSS must stay flat once the allocator and the
    // SQLite caches have reached their working size.
    let target: usize = std::env::var("TALON_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000);
    while total < target {
        for (t, c) in [
            (Transport::Ws, Call::DeniedExec),
            (Transport::Http, Call::Status),
        ] {
            let f = rt.block_on(scenario(&d, t, c, 8, 2_500));
            total += f.calls + 1_600;
        }
        rss_trace.push((total, rss_mib(d.child.id())));
    }
    std::thread::sleep(Duration::from_millis(500));
    let after = rss_mib(d.child.id());
    println!("\ntalon-gateway end to end (client and gateway on the same machine)");
    println!(
        "time to healthy (median of 5 fresh starts): {:.1} ms (all: {})",
        healthy.as_secs_f64() * 1e3,
        starts
            .iter()
            .map(|s| format!("{:.1}", s.as_secs_f64() * 1e3))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!("idle RSS: {idle:.1} MiB; RSS after {total} calls: {after:.1} MiB");
    let trace: Vec<String> = rss_trace
        .iter()
        .map(|(n, r)| format!("{n}: {r:.1}"))
        .collect();
    println!("RSS (MiB) by calls so far: {}\n", trace.join(", "));
    println!(
        "{:<34} {:>8} {:>10} {:>9} {:>9} {:>9} {:>12}",
        "scenario", "calls", "req/s", "p50 µs", "p90 µs", "p99 µs", "CPU µs/call"
    );
    for f in &results {
        println!(
            "{:<34} {:>8} {:>10.0} {:>9.0} {:>9.0} {:>9.0} {:>12.1}",
            f.name, f.calls, f.rps, f.p50_us, f.p90_us, f.p99_us, f.cpu_us_per_call
        );
    }
    // `/mcp` against `POST /tools/invoke` for the same tool on a
    // keep-alive connection, measured in this run (goal: within 1.5x).
    let p50 = |name: &str| {
        results
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.p50_us)
            .unwrap()
    };
    let mcp_ratio = p50("mcp sequential session_status") / p50("http sequential session_status");
    let mcp_ratio_8 = p50("mcp 8-way session_status") / p50("http 8-way session_status");
    println!(
        "\n/mcp tools/call vs POST /tools/invoke (session_status, p50): {mcp_ratio:.2}x sequential, {mcp_ratio_8:.2}x 8-way"
    );
    let doc = json!({
        "mcpVsHttpP50": mcp_ratio,
        "mcpVsHttpP50EightWay": mcp_ratio_8,
        "healthyMs": healthy.as_secs_f64() * 1e3,
        "idleRssMiB": idle,
        "rssAfterCallsMiB": after,
        "calls": total,
        "rssTrace": rss_trace.iter().map(|(n, r)| json!({"calls": n, "rssMiB": r})).collect::<Vec<_>>(),
        "scenarios": results.iter().map(|f| json!({
            "name": f.name, "calls": f.calls, "reqPerSec": f.rps,
            "p50Us": f.p50_us, "p90Us": f.p90_us, "p99Us": f.p99_us, "cpuUsPerCall": f.cpu_us_per_call,
        })).collect::<Vec<_>>(),
    });
    let out =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/gateway-bench.json");
    let _ = std::fs::write(out, serde_json::to_string_pretty(&doc).unwrap());
}
