//! The real `talon-gateway` daemon in a temp state dir, bound to
//! `127.0.0.1:0`: the kernel picks a free port and the daemon reports the
//! one it got with `--print-address` (one `HOST:PORT` line on stdout once
//! it listens), so no test picks a port by binding and dropping it.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, anyhow, bail};

/// How long a start may take, to the first healthy `/healthz`.
const START_LIMIT: Duration = Duration::from_secs(20);

/// A running daemon in its own temp dir (`<dir>/talon.json`,
/// `<dir>/state`, `<dir>/gateway.log`); killed on drop.
#[derive(Debug)]
pub struct GatewayProcess {
    /// The daemon process (`None` after it was reaped by [`Self::wait_exit`]).
    pub child: Option<Child>,
    /// The temp dir holding config, state and log; also its `HOME`.
    pub dir: tempfile::TempDir,
    /// The address it reported (changes on every [`Self::spawn`]).
    pub addr: SocketAddr,
    /// The operator token it wrote to `<state>/gateway.token`.
    pub token: String,
    /// The config file.
    pub config: PathBuf,
    /// Its stderr (the tracing log), appended across restarts.
    pub log: PathBuf,
    /// From spawn to the first healthy `/healthz` of the last start.
    pub healthy_after: Duration,
    /// Extra environment for the next [`Self::spawn`] (e.g. a test-only
    /// hook); empty by default.
    pub env: Vec<(String, String)>,
    bin: PathBuf,
}

impl GatewayProcess {
    /// Start `bin` (`env!("CARGO_BIN_EXE_talon-gateway")`) with `config`
    /// (JSON5 text) in a new temp dir.
    pub fn launch(bin: impl AsRef<Path>, config: &str) -> Result<GatewayProcess> {
        let dir = tempfile::tempdir().context("cannot create the gateway temp dir")?;
        GatewayProcess::launch_in(bin, dir, config)
    }

    /// Start `bin` with `config` written to `<dir>/talon.json`.
    pub fn launch_in(
        bin: impl AsRef<Path>,
        dir: tempfile::TempDir,
        config: &str,
    ) -> Result<GatewayProcess> {
        GatewayProcess::launch_in_with_env(bin, dir, config, Vec::new())
    }

    /// [`Self::launch_in`] with extra environment variables for this and
    /// later starts (clear [`Self::env`] before a restart to drop them).
    pub fn launch_in_with_env(
        bin: impl AsRef<Path>,
        dir: tempfile::TempDir,
        config: &str,
        env: Vec<(String, String)>,
    ) -> Result<GatewayProcess> {
        let config_path = dir.path().join("talon.json");
        std::fs::write(&config_path, config).context("cannot write talon.json")?;
        let mut gw = GatewayProcess {
            child: None,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            token: String::new(),
            config: config_path,
            log: dir.path().join("gateway.log"),
            dir,
            healthy_after: Duration::ZERO,
            env,
            bin: bin.as_ref().to_path_buf(),
        };
        gw.try_spawn()?;
        Ok(gw)
    }

    /// The state dir (`<dir>/state`).
    pub fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// (Re)start the process on the same state dir; it gets a new port.
    /// Panics with the log when it does not become healthy.
    pub fn spawn(&mut self) {
        if let Err(e) = self.try_spawn() {
            panic!("{e:#}");
        }
    }

    fn try_spawn(&mut self) -> Result<()> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .context("cannot open the gateway log")?;
        let started = Instant::now();
        let mut child = Command::new(&self.bin)
            .arg("--config")
            .arg(&self.config)
            .arg("--state-dir")
            .arg(self.state())
            .args(["--bind", "127.0.0.1:0", "--print-address"])
            .env("HOME", self.dir.path())
            .env("TALON_LOG", "info")
            .env("NO_COLOR", "1")
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .with_context(|| format!("cannot start {}", self.bin.display()))?;
        let stdout = child.stdout.take();
        self.child = Some(child);
        let addr = self.read_address(stdout)?;
        self.addr = addr;
        let deadline = started + START_LIMIT;
        loop {
            if let Ok((200, _)) = http(addr, "GET", "/healthz", None, None) {
                break;
            }
            self.fail_if_exited()?;
            if Instant::now() >= deadline {
                bail!("the gateway is not healthy on {addr}: {}", self.log_text());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        self.healthy_after = started.elapsed();
        self.token = std::fs::read_to_string(self.state().join("gateway.token"))
            .context("cannot read the gateway token")?
            .trim()
            .to_owned();
        Ok(())
    }

    /// The `--print-address` line, read on a thread so a daemon that hangs
    /// before listening fails the start instead of the whole test run.
    fn read_address(&mut self, stdout: Option<std::process::ChildStdout>) -> Result<SocketAddr> {
        let stdout = stdout.ok_or_else(|| anyhow!("the gateway's stdout is not piped"))?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = match rx.recv_timeout(START_LIMIT) {
            Ok(line) => line,
            Err(_) => bail!(
                "the gateway printed no address within {START_LIMIT:?}: {}",
                self.log_text()
            ),
        };
        if line.is_empty() {
            // Stdout closed: the daemon is exiting; report how it ended.
            if let Some(code) = self.wait_exit(Duration::from_secs(5)) {
                bail!("gateway exited early (code {code}): {}", self.log_text());
            }
            bail!("the gateway closed stdout before printing its address");
        }
        line.trim().parse().with_context(|| {
            format!(
                "the gateway printed {line:?}, not an address: {}",
                self.log_text()
            )
        })
    }

    fn fail_if_exited(&mut self) -> Result<()> {
        let child = self
            .child
            .as_mut()
            .ok_or_else(|| anyhow!("no gateway process"))?;
        if let Some(status) = child.try_wait().context("cannot wait for the gateway")? {
            bail!("gateway exited early ({status}): {}", self.log_text());
        }
        Ok(())
    }

    /// The daemon's pid; panics when it was never started.
    pub fn pid(&self) -> i32 {
        let child = self
            .child
            .as_ref()
            .unwrap_or_else(|| panic!("the gateway is not running"));
        i32::try_from(child.id()).unwrap_or(i32::MAX)
    }

    /// Send signal number `sig` to the daemon; panics when `kill` fails.
    pub fn signal(&self, sig: i32) {
        let pid = u32::try_from(self.pid()).unwrap_or(u32::MAX);
        assert!(crate::proc::signal(pid, sig), "kill -{sig} {pid} failed");
    }

    /// Wait up to `limit` for the process to exit: its exit code, `None`
    /// when it did not exit in time or was killed by a signal.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<i32> {
        let deadline = Instant::now() + limit;
        let child = self.child.as_mut()?;
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return status.code();
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Everything the daemon logged so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for GatewayProcess {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A minimal HTTP/1.1 request (`Connection: close`, optional bearer
/// token and JSON body): the status and the (de-chunked) body.
pub fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> std::io::Result<(u16, String)> {
    http_response(addr, method, path, token, body).map(|r| (r.status, r.body))
}

/// What [`http_response`] read back.
#[derive(Debug, Clone)]
pub struct HttpResponse {
    /// The status code (0 when the status line did not parse).
    pub status: u16,
    /// The header lines, names lowercased, in order.
    pub headers: Vec<(String, String)>,
    /// The (de-chunked) body.
    pub body: String,
}

impl HttpResponse {
    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// [`http`] with the response headers.
pub fn http_response(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> std::io::Result<HttpResponse> {
    http_with_headers(addr, method, path, token, &[], body)
}

/// [`http_response`] with extra request headers (`Accept`, a session
/// header, ...).
pub fn http_with_headers(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> std::io::Result<HttpResponse> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    let body = body.unwrap_or("");
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let extra: String = headers
        .iter()
        .map(|(k, v)| format!("{k}: {v}\r\n"))
        .collect();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}{extra}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
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
    let headers: Vec<(String, String)> = head
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_owned()
    };
    Ok(HttpResponse {
        status,
        headers,
        body,
    })
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        let Some(chunk) = rest.get(..n).filter(|_| n > 0) else {
            break;
        };
        out.push_str(chunk);
        s = rest.get(n..).unwrap_or("");
        s = s.strip_prefix("\r\n").unwrap_or(s);
    }
    out
}
