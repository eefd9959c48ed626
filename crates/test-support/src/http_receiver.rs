//! A loopback HTTP/1.1 receiver for webhook tests and benches: it records
//! every request (method, path, headers, body) and answers as its
//! [`ReceiverMode`] says (200 with a JSON id, an error status, or a stall).
//! Keep-alive is supported, so a pooled client reuses its connection.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context as _, Result};

/// How the receiver answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiverMode {
    /// `200` with `{"id":"r-<n>"}`.
    Ok,
    /// This status with a short body.
    Status(u16),
    /// Read the request, record it, then say nothing for this long.
    Stall(Duration),
}

/// One request as received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedRequest {
    /// `POST`, ...
    pub method: String,
    /// The request target.
    pub path: String,
    /// The headers, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl ReceivedRequest {
    /// The first header of this (lower-case) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug)]
struct Shared {
    requests: Mutex<Vec<ReceivedRequest>>,
    mode: Mutex<ReceiverMode>,
    stop: AtomicBool,
    count: AtomicU64,
    /// Keep only the count (benches).
    record: AtomicBool,
}

/// The running receiver; stopped on drop.
#[derive(Debug)]
pub struct HttpReceiver {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl HttpReceiver {
    /// Listen on `127.0.0.1`, port chosen by the kernel.
    pub fn start() -> Result<HttpReceiver> {
        let listener = TcpListener::bind("127.0.0.1:0").context("cannot bind the receiver")?;
        let addr = listener.local_addr().context("no local address")?;
        let shared = Arc::new(Shared {
            requests: Mutex::new(Vec::new()),
            mode: Mutex::new(ReceiverMode::Ok),
            stop: AtomicBool::new(false),
            count: AtomicU64::new(0),
            record: AtomicBool::new(true),
        });
        let s = Arc::clone(&shared);
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.stop.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(conn) = conn else { continue };
                let s = Arc::clone(&s);
                std::thread::spawn(move || serve(conn, &s));
            }
        });
        Ok(HttpReceiver { addr, shared })
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Change how it answers.
    pub fn set_mode(&self, mode: ReceiverMode) {
        *self.shared.mode.lock().unwrap_or_else(|p| p.into_inner()) = mode;
    }

    /// Stop recording requests (only count them), for benches.
    pub fn count_only(&self) {
        self.shared.record.store(false, Ordering::SeqCst);
    }

    /// The requests recorded so far.
    pub fn requests(&self) -> Vec<ReceivedRequest> {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// How many requests arrived.
    pub fn count(&self) -> u64 {
        self.shared.count.load(Ordering::SeqCst)
    }
}

impl Drop for HttpReceiver {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect(self.addr);
    }
}

fn serve(conn: TcpStream, shared: &Shared) {
    let Ok(mut writer) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(conn);
    loop {
        let mut request_line = String::new();
        match reader.read_line(&mut request_line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let mut parts = request_line.split_whitespace();
        let method = parts.next().unwrap_or_default().to_owned();
        let path = parts.next().unwrap_or_default().to_owned();
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((n, v)) = line.split_once(':') {
                headers.push((n.trim().to_ascii_lowercase(), v.trim().to_owned()));
            }
        }
        let len = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .and_then(|(_, v)| v.parse::<usize>().ok())
            .unwrap_or(0);
        let mut body = vec![0; len];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let n = shared.count.fetch_add(1, Ordering::SeqCst) + 1;
        if shared.record.load(Ordering::SeqCst) {
            shared
                .requests
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(ReceivedRequest {
                    method,
                    path,
                    headers,
                    body,
                });
        }
        let mode = *shared.mode.lock().unwrap_or_else(|p| p.into_inner());
        let (status, text) = match mode {
            ReceiverMode::Ok => (200, format!("{{\"id\":\"r-{n}\"}}")),
            ReceiverMode::Status(s) => (s, "receiver says no".to_owned()),
            ReceiverMode::Stall(d) => {
                std::thread::sleep(d);
                return;
            }
        };
        let answer = format!(
            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{text}",
            text.len()
        );
        if writer.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}
