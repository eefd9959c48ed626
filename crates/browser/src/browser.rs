//! One running Chromium: its process tree, its DevTools connection, the
//! egress proxy it must use, and what its tabs said (console, dialogs,
//! refused requests).
//!
//! Every request a page makes is vetted twice: DevTools request
//! interception (`Fetch.enable` on every page, frame and worker, which
//! are attached paused) checks each URL with the [`EgressGuard`] and fails
//! a refused one with `BlockedByClient`, recording why; and Chromium's
//! only route out is `--proxy-server` pointing at a loopback relay to
//! Talon's [`EgressProxy`], which vets the destination again and
//! connects only to the addresses it vetted (so a second DNS answer
//! cannot swap in a private address, and a request interception did not
//! see, a WebSocket or a prefetch, is still judged).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use talon_egress::{EgressError, EgressGuard, EgressProxy, SsrfBlocked};
use talon_fs_bridge::{Access, FsBridge};
use talon_proc_tree::{Leaf, Limits, Supervisor};
use talon_sandbox_core::{LaunchRequest, ProcessControl, ProcessLauncher};
use tokio::sync::{Notify, mpsc};
use tokio::task::JoinHandle;
use url::Url;

use crate::cdp::{Cdp, Event};
use crate::error::{BrowserError, Result};

/// The console entries kept per tab.
const CONSOLE_KEEP: usize = 500;
/// Refused requests and downloads kept.
const BLOCKED_KEEP: usize = 200;

/// How a browser is started and bounded.
#[derive(Debug, Clone)]
pub struct BrowserSettings {
    /// The Chromium binary; `None` looks `chromium` up in `env`'s `PATH`.
    pub executable: Option<PathBuf>,
    /// The environment Chromium gets (built by the caller from the
    /// exec-env policy); `HOME` and the XDG dirs are replaced by dirs in
    /// the profile.
    pub env: BTreeMap<String, String>,
    /// From spawn to a usable DevTools connection.
    pub start_timeout: Duration,
    /// One DevTools call, and an action as a whole unless it says more.
    pub action_timeout: Duration,
    /// A navigation, until the page has loaded.
    pub navigation_timeout: Duration,
    /// The window (and viewport) size.
    pub window: (u32, u32),
    /// The largest download kept: one that announces more, or whose
    /// received bytes pass it, is cancelled and deleted.
    pub max_download_bytes: u64,
}

/// The default download limit (100 MiB).
pub const DEFAULT_MAX_DOWNLOAD_BYTES: u64 = 100 * 1024 * 1024;

impl Default for BrowserSettings {
    fn default() -> Self {
        BrowserSettings {
            executable: None,
            env: BTreeMap::from([
                ("PATH".to_owned(), "/usr/bin:/bin".to_owned()),
                ("LANG".to_owned(), "C.UTF-8".to_owned()),
            ]),
            start_timeout: Duration::from_secs(20),
            action_timeout: Duration::from_secs(15),
            navigation_timeout: Duration::from_secs(20),
            window: (1280, 720),
            max_download_bytes: DEFAULT_MAX_DOWNLOAD_BYTES,
        }
    }
}

/// One console message (or a Talon note: a refused request).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleEntry {
    /// `log`, `info`, `warning`, `error`, `debug`.
    pub level: String,
    /// The text.
    pub text: String,
    /// Where it came from (`console`, `exception`, `network`, `talon-egress`).
    pub source: String,
}

/// A request the egress guard refused.
#[derive(Debug, Clone)]
pub struct BlockedRequest {
    /// The tab it came from, when known.
    pub target_id: Option<String>,
    /// The URL.
    pub url: String,
    /// Chromium's resource type (`Document`, `Image`, ...).
    pub resource_type: String,
    /// The refusal.
    pub blocked: SsrfBlocked,
}

/// A download Chromium finished into the browser's private download
/// directory, waiting to be copied into the workspace.
#[derive(Debug, Clone)]
pub struct FinishedDownload {
    /// The URL it came from.
    pub url: String,
    /// The name the page suggested (untrusted: never used as a path).
    pub suggested_name: String,
    /// The file in the private download directory (named by Chromium's
    /// download id, not by the page).
    pub temp_path: PathBuf,
    /// Its size.
    pub bytes: u64,
}

/// A download that was cancelled or refused, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedDownload {
    /// The URL.
    pub url: String,
    /// Why it was not kept.
    pub reason: String,
}

#[derive(Debug, Clone)]
pub(crate) struct Pending {
    url: String,
    suggested: String,
    /// Cancelled by Talon (over the limit); its later events are ignored.
    cancelled: bool,
}

/// A JavaScript dialog waiting for an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingDialog {
    /// `alert`, `confirm`, `prompt`, `beforeunload`.
    pub kind: String,
    /// Its message.
    pub message: String,
}

#[derive(Debug, Default)]
pub(crate) struct Tab {
    pub(crate) session: String,
    pub(crate) console: VecDeque<ConsoleEntry>,
    pub(crate) refs: HashMap<String, i64>,
    pub(crate) dialog: Option<PendingDialog>,
    /// The answer to give the next dialog (`accept`, prompt text).
    pub(crate) dialog_arm: Option<(bool, Option<String>)>,
}

#[derive(Debug, Default)]
pub(crate) struct State {
    pub(crate) tabs: HashMap<String, Tab>,
    /// Tab ids in the order they were attached.
    pub(crate) order: Vec<String>,
    /// Session id to tab id, pages only.
    pub(crate) sessions: HashMap<String, String>,
    pub(crate) current: Option<String>,
    pub(crate) blocked: VecDeque<BlockedRequest>,
    pub(crate) downloads_refused: VecDeque<RefusedDownload>,
    /// Downloads under way, by Chromium's guid.
    pub(crate) downloads: HashMap<String, Pending>,
    /// Finished downloads not yet copied into the workspace.
    pub(crate) downloads_done: VecDeque<FinishedDownload>,
}

#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) cdp: Cdp,
    pub(crate) guard: EgressGuard,
    pub(crate) state: Mutex<State>,
    pub(crate) attached: Notify,
    pub(crate) call_timeout: Duration,
    /// Chromium's download directory: private, in the runtime dir on
    /// the host; in the sandbox workspace (a sandbox path, reached only
    /// through `sandbox_bridge`) for a sandboxed browser.
    pub(crate) download_dir: PathBuf,
    pub(crate) max_download_bytes: u64,
    /// The sandbox's file bridge, for a sandboxed browser: its download
    /// files are read and deleted through it, never by a host path.
    pub(crate) sandbox_bridge: Option<Arc<dyn FsBridge>>,
}

impl Shared {
    pub(crate) fn with_state<T>(&self, f: impl FnOnce(&mut State) -> T) -> Result<T> {
        let mut guard = self
            .state
            .lock()
            .map_err(|_| BrowserError::Io("browser state lock poisoned".to_owned()))?;
        Ok(f(&mut guard))
    }
}

/// A running Chromium. Dropping it kills the whole process tree and stops
/// its proxy.
#[derive(Debug)]
pub struct Browser {
    pub(crate) shared: Arc<Shared>,
    pub(crate) settings: BrowserSettings,
    pub(crate) profile_dir: PathBuf,
    pub(crate) runtime_dir: tempfile::TempDir,
    pub(crate) started: Instant,
    pub(crate) version: String,
    process: Process,
    _proxy: Option<EgressProxy>,
    tasks: Vec<JoinHandle<()>>,
}

/// Where Chromium runs, and how its process tree ends.
#[derive(Debug)]
enum Process {
    /// On the host, in a cgroup leaf of its own.
    Host {
        child: Box<tokio::process::Child>,
        leaf: Leaf,
    },
    /// Inside the session's sandbox, launched by its launcher (for the
    /// local backend: one `bwrap` run, whose process group and PID
    /// namespace end together).
    Sandbox { control: Arc<dyn ProcessControl> },
}

impl Drop for Browser {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
        match &mut self.process {
            Process::Host { child, leaf } => {
                let _ = child.start_kill();
                let _ = leaf.kill();
            }
            Process::Sandbox { control } => {
                // Dropping the last handle ends the tree too; a kill now
                // does not wait for that.
                let control = Arc::clone(control);
                if let Ok(rt) = tokio::runtime::Handle::try_current() {
                    rt.spawn(async move {
                        let _ = control.kill().await;
                    });
                }
            }
        }
    }
}

/// Where a sandboxed browser runs: the session's sandbox, reached through
/// its process launcher and file bridge.
#[derive(Debug, Clone)]
pub struct SandboxTarget {
    /// The sandbox's launcher (`local`: one `bwrap` run per command).
    pub launcher: Arc<dyn ProcessLauncher>,
    /// The sandbox's file bridge (the workspace, as the sandbox sees it).
    pub bridge: Arc<dyn FsBridge>,
    /// The sandbox's name: one browser per sandbox.
    pub name: String,
}

/// The exit code of the sandbox start script when the sandbox has no
/// egress proxy.
const NO_EGRESS_EXIT: i32 = 86;

/// The egress forwarder's address inside a local sandbox with
/// `network: "bridge"` (`talon_sandbox_local::EGRESS_PROXY_URL`).
pub const SANDBOX_PROXY_URL: &str = "http://127.0.0.1:3128";

/// Where a sandboxed Chromium keeps its downloads until the tool moves
/// them to `downloads/` (relative to the sandbox workdir).
pub const SANDBOX_DOWNLOAD_STAGING: &str = ".talon-browser";

/// Whether this process runs as root (Chromium's own sandbox cannot run
/// then, so `--no-sandbox` is passed).
fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

/// Where `chromium` is in `env`'s `PATH`.
pub fn locate_chromium(settings: &BrowserSettings) -> Result<PathBuf> {
    if let Some(p) = &settings.executable {
        return if p.is_file() {
            Ok(p.clone())
        } else {
            Err(BrowserError::Unavailable(format!(
                "{} does not exist; install Debian's `chromium` package",
                p.display()
            )))
        };
    }
    let path = settings
        .env
        .get("PATH")
        .map(String::as_str)
        .unwrap_or("/usr/bin:/bin");
    path.split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join("chromium"))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            BrowserError::Unavailable(
                "`chromium` is not installed (looked in PATH); install Debian's `chromium` package (`cargo xtask media-install`)".to_owned(),
            )
        })
}

fn io(what: &str, e: impl std::fmt::Display) -> BrowserError {
    BrowserError::Io(format!("{what}: {e}"))
}

/// The last lines of Chromium's stderr, for a start-up failure.
fn stderr_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains("dbus") && !l.trim().is_empty())
        .collect();
    let start = lines.len().saturating_sub(5);
    lines[start..].join(" | ").chars().take(1500).collect()
}

impl Browser {
    /// Start Chromium headless with `profile_dir` as its profile, every
    /// request vetted by `guard`.
    pub async fn launch(
        profile_dir: &Path,
        guard: EgressGuard,
        settings: BrowserSettings,
    ) -> Result<Browser> {
        let binary = locate_chromium(&settings)?;
        let started = Instant::now();
        std::fs::create_dir_all(profile_dir).map_err(|e| io("cannot create the profile", e))?;
        let runtime_dir = tempfile::Builder::new()
            .prefix("talon-browser-")
            .tempdir()
            .map_err(|e| io("cannot create the browser's runtime dir", e))?;
        // The proxy: a Unix socket in the private runtime dir, and a
        // loopback TCP relay to it (Chromium takes only a TCP proxy).
        let socket = runtime_dir.path().join("egress.sock");
        let proxy = EgressProxy::start(&socket, guard.policy_arc(), guard.resolver())
            .map_err(|e| io("cannot start the egress proxy", e))?;
        let relay = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| io("cannot bind the proxy relay", e))?;
        let relay_port = relay
            .local_addr()
            .map_err(|e| io("proxy relay address", e))?
            .port();
        let relay_task = tokio::spawn(relay_loop(relay, socket.clone()));

        let port_file = profile_dir.join("DevToolsActivePort");
        let _ = std::fs::remove_file(&port_file);
        let home = runtime_dir.path().join("home");
        std::fs::create_dir_all(&home).map_err(|e| io("cannot create the browser home", e))?;
        let mut env = settings.env.clone();
        for key in ["HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"] {
            env.remove(key);
        }
        env.insert("HOME".to_owned(), home.to_string_lossy().into_owned());
        env.insert(
            "XDG_CONFIG_HOME".to_owned(),
            home.join(".config").to_string_lossy().into_owned(),
        );
        env.insert(
            "XDG_CACHE_HOME".to_owned(),
            home.join(".cache").to_string_lossy().into_owned(),
        );
        let mut args: Vec<String> = common_args(&settings);
        args.extend([
            format!("--user-data-dir={}", profile_dir.display()),
            "--remote-debugging-port=0".into(),
            "--remote-debugging-address=127.0.0.1".into(),
            format!("--proxy-server=http://127.0.0.1:{relay_port}"),
            // Loopback goes through the proxy too (Chromium bypasses it by
            // default), so the guard judges it like any other address.
            "--proxy-bypass-list=<-loopback>".into(),
        ]);
        if running_as_root() {
            args.push("--no-sandbox".into());
        }
        args.push("about:blank".into());

        let supervisor = Supervisor::shared()
            .map_err(|e| BrowserError::Unavailable(format!("process containment: {e}")))?;
        let leaf = supervisor
            .leaf(&Limits::NONE)
            .map_err(|e| BrowserError::Unavailable(format!("process containment: {e}")))?;
        let stderr_path = runtime_dir.path().join("chromium.stderr");
        let stderr = std::fs::File::create(&stderr_path)
            .map_err(|e| io("cannot create the stderr log", e))?;
        let mut cmd = tokio::process::Command::from(leaf.command(&binary, &args, &env));
        cmd.kill_on_drop(true)
            .stdout(Stdio::null())
            .stderr(Stdio::from(stderr));
        let mut child = cmd.spawn().map_err(|e| {
            BrowserError::Unavailable(format!("cannot start {}: {e}", binary.display()))
        })?;
        if let Some(pid) = child.id() {
            leaf.set_root_pid(pid);
        }

        // DevToolsActivePort: the port, then the browser endpoint's path.
        let deadline = started + settings.start_timeout;
        let ws_url = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                let mut lines = text.lines();
                if let (Some(port), Some(path)) = (lines.next(), lines.next())
                    && let (Ok(port), true) = (port.trim().parse::<u16>(), path.starts_with('/'))
                {
                    break format!("ws://127.0.0.1:{port}{}", path.trim());
                }
            }
            if let Ok(Some(status)) = child.try_wait() {
                let _ = leaf.kill();
                return Err(BrowserError::Unavailable(format!(
                    "chromium exited during start-up ({status}): {}",
                    stderr_tail(&stderr_path)
                )));
            }
            if Instant::now() >= deadline {
                let _ = child.start_kill();
                let _ = leaf.kill();
                return Err(BrowserError::Timeout {
                    what: format!(
                        "chromium start-up (no DevToolsActivePort; stderr: {})",
                        stderr_tail(&stderr_path)
                    ),
                    millis: settings.start_timeout.as_millis() as u64,
                });
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        };
        let remaining = deadline.saturating_duration_since(Instant::now());
        let (cdp, events) = Cdp::connect(&ws_url, remaining.max(Duration::from_secs(1))).await?;
        let download_dir = runtime_dir.path().join("downloads");
        std::fs::create_dir_all(&download_dir)
            .map_err(|e| io("cannot create the download dir", e))?;
        Browser::finish(
            Started {
                cdp,
                events,
                guard,
                settings,
                profile_dir: profile_dir.to_path_buf(),
                runtime_dir,
                started,
                download_dir,
                sandbox_bridge: None,
                process: Process::Host {
                    child: Box::new(child),
                    leaf,
                },
                proxy: Some(proxy),
                tasks: vec![relay_task],
            },
            true,
        )
        .await
    }

    /// Start Chromium headless inside the session's sandbox (`target`),
    /// every request vetted by `guard` (DevTools request interception, as
    /// on the host) and leaving only through the sandbox's egress proxy.
    ///
    /// Chromium is one long command of the sandbox's launcher: for the
    /// local backend a `bwrap` run with the session's whole confinement
    /// (read-only system, the workspace and a private `/tmp` as the only
    /// writable places, no home, loopback-only network, seccomp,
    /// Landlock, cgroup limits). DevTools runs over its standard input
    /// and output (`--remote-debugging-pipe`): no port is opened. Its
    /// profile lives in the sandbox's private `/tmp` and ends with it.
    /// Downloads are staged in the workspace
    /// ([`SANDBOX_DOWNLOAD_STAGING`]) and reached only through the
    /// sandbox's file bridge.
    pub async fn launch_in_sandbox(
        target: &SandboxTarget,
        guard: EgressGuard,
        settings: BrowserSettings,
    ) -> Result<Browser> {
        let binary = locate_chromium(&settings)?;
        let started = Instant::now();
        let runtime_dir = tempfile::Builder::new()
            .prefix("talon-browser-")
            .tempdir()
            .map_err(|e| io("cannot create the browser's runtime dir", e))?;
        let id = runtime_dir
            .path()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "talon-browser".to_owned());
        let root = format!("/tmp/{id}");
        let profile = format!("{root}/profile");
        // The staging dir for downloads, in the workspace, as the sandbox
        // sees it.
        let cwd = target.bridge.cwd().trim_end_matches('/').to_owned();
        let staging = format!("{cwd}/{SANDBOX_DOWNLOAD_STAGING}/{id}");
        let download_dir = match target.bridge.mkdir(&staging, true).await {
            Ok(()) => target
                .bridge
                .resolve(&staging, Access::Write)
                .await
                .map(|r| PathBuf::from(r.container_path))
                .ok(),
            Err(e) => {
                tracing::warn!(target: "talon::browser", "sandboxed browser: no download dir in the workspace ({e}); downloads are refused");
                None
            }
        };
        let mut args: Vec<String> = common_args(&settings);
        args.extend([
            format!("--user-data-dir={profile}"),
            "--remote-debugging-pipe".to_owned(),
            // Chromium's own sandbox cannot nest inside bubblewrap (no new
            // user namespaces there); the sandbox is the boundary.
            "--no-sandbox".to_owned(),
            // `/dev/shm` is not writable in the sandbox.
            "--disable-dev-shm-usage".to_owned(),
            format!("--proxy-server={SANDBOX_PROXY_URL}"),
            "--proxy-bypass-list=<-loopback>".to_owned(),
            "about:blank".to_owned(),
        ]);
        let quoted: Vec<String> = std::iter::once(binary.to_string_lossy().into_owned())
            .chain(args)
            .map(|a| shell_quote(&a))
            .collect();
        // Descriptors 3 and 4 are the DevTools pipe (Chromium reads 3,
        // writes 4): the command's standard input and output. Without the
        // egress forwarder (network "none") nothing is started.
        let script = format!(
            "case \"${{HTTPS_PROXY:-}}\" in {SANDBOX_PROXY_URL}) ;; *) echo 'talon-browser: this sandbox has no egress proxy' >&2; exit {NO_EGRESS_EXIT};; esac\n\
             mkdir -p {root}/home/.config {root}/home/.cache {profile} || exit 1\n\
             exec 3<&0 4>&1 </dev/null >/dev/null\n\
             exec {}\n",
            quoted.join(" ")
        );
        let mut env = BTreeMap::new();
        for key in ["LANG", "LC_ALL", "TZ"] {
            if let Some(v) = settings.env.get(key) {
                env.insert(key.to_owned(), v.clone());
            }
        }
        env.insert("XDG_CONFIG_HOME".to_owned(), format!("{root}/home/.config"));
        env.insert("XDG_CACHE_HOME".to_owned(), format!("{root}/home/.cache"));
        let launched = target
            .launcher
            .launch(LaunchRequest {
                command: script,
                workdir: None,
                env,
                pty: false,
            })
            .await
            .map_err(|e| {
                BrowserError::Unavailable(format!("cannot start chromium in the sandbox: {e}"))
            })?;
        let control: Arc<dyn ProcessControl> = Arc::from(launched.control);
        let stderr_log = Arc::new(Mutex::new(String::new()));
        let mut tasks = Vec::new();
        if let Some(mut stderr) = launched.stderr {
            let log = Arc::clone(&stderr_log);
            tasks.push(tokio::spawn(async move {
                use tokio::io::AsyncReadExt as _;
                let mut buf = [0u8; 4096];
                while let Ok(n) = stderr.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    if let Ok(mut l) = log.lock() {
                        l.push_str(&String::from_utf8_lossy(&buf[..n]));
                        if l.len() > 16_384 {
                            let cut = l.len() - 8192;
                            let cut = (cut..l.len()).find(|i| l.is_char_boundary(*i)).unwrap_or(0);
                            l.drain(..cut);
                        }
                    }
                }
            }));
        }
        let Some(stdin) = launched.stdin else {
            let _ = control.kill().await;
            return Err(BrowserError::Unavailable(
                "the sandbox launcher gave no standard input for the DevTools pipe".to_owned(),
            ));
        };
        let (cdp, events) = Cdp::connect_pipe(launched.stdout, stdin);
        // The first answer says the browser is up.
        let answered = cdp
            .call(
                None,
                "Browser.getVersion",
                json!({}),
                settings.start_timeout,
            )
            .await;
        if let Err(e) = answered {
            let status = tokio::time::timeout(Duration::from_millis(500), control.wait()).await;
            let _ = control.kill().await;
            let tail = tail_lines(&stderr_log.lock().map(|l| l.clone()).unwrap_or_default());
            return Err(match status {
                Ok(Ok(talon_sandbox_core::ExitStatus::Code(NO_EGRESS_EXIT))) => {
                    BrowserError::SandboxNoEgress(no_egress_message())
                }
                Ok(Ok(status)) => BrowserError::Unavailable(format!(
                    "chromium exited during start-up in the sandbox ({status:?}): {tail}"
                )),
                _ => match e {
                    BrowserError::Timeout { millis, .. } => BrowserError::Timeout {
                        what: format!("chromium start-up in the sandbox (stderr: {tail})"),
                        millis,
                    },
                    other => BrowserError::Unavailable(format!(
                        "chromium in the sandbox did not answer: {other}; stderr: {tail}"
                    )),
                },
            });
        }
        Browser::finish(
            Started {
                cdp,
                events,
                guard,
                settings,
                profile_dir: PathBuf::from(profile),
                runtime_dir,
                started,
                download_dir: download_dir.clone().unwrap_or_default(),
                sandbox_bridge: Some(Arc::clone(&target.bridge)),
                process: Process::Sandbox { control },
                proxy: None,
                tasks,
            },
            download_dir.is_some(),
        )
        .await
    }

    /// Set up a started browser: the event dispatcher, downloads,
    /// auto-attach, and the first tab.
    async fn finish(st: Started, downloads: bool) -> Result<Browser> {
        let Started {
            cdp,
            events,
            guard,
            settings,
            profile_dir,
            runtime_dir,
            started,
            download_dir,
            sandbox_bridge,
            process,
            proxy,
            mut tasks,
        } = st;
        let shared = Arc::new(Shared {
            cdp: cdp.clone(),
            guard,
            state: Mutex::new(State::default()),
            attached: Notify::new(),
            call_timeout: settings.action_timeout,
            download_dir: download_dir.clone(),
            max_download_bytes: settings.max_download_bytes,
            sandbox_bridge,
        });
        tasks.push(tokio::spawn(dispatch(Arc::clone(&shared), events)));
        let t = settings.action_timeout;
        let browser = Browser {
            shared,
            settings,
            profile_dir,
            runtime_dir,
            started,
            version: String::new(),
            process,
            _proxy: proxy,
            tasks,
        };
        let version = cdp
            .call(None, "Browser.getVersion", json!({}), t)
            .await?
            .get("product")
            .and_then(Value::as_str)
            .unwrap_or("chromium")
            .to_owned();
        let mut browser = browser;
        browser.version = version;
        // Downloads go to the private download dir under Chromium's own
        // ids (`allowAndName`: never a name from the page); the
        // dispatcher enforces the size limit and the tool copies finished
        // ones into the workspace. The request itself was vetted like
        // any other.
        let behavior = if downloads {
            json!({
                "behavior": "allowAndName",
                "downloadPath": download_dir.to_string_lossy(),
                "eventsEnabled": true,
            })
        } else {
            json!({ "behavior": "deny", "eventsEnabled": true })
        };
        cdp.call(None, "Browser.setDownloadBehavior", behavior, t)
            .await?;
        cdp.call(
            None,
            "Target.setAutoAttach",
            json!({ "autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true }),
            t,
        )
        .await?;
        // Pages that existed before auto-attach (the first blank tab).
        let targets = cdp.call(None, "Target.getTargets", json!({}), t).await?;
        let attached: Vec<String> = browser
            .shared
            .with_state(|s| s.tabs.keys().cloned().collect())?;
        for info in targets
            .get("targetInfos")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let id = info.get("targetId").and_then(Value::as_str).unwrap_or("");
            if info.get("type").and_then(Value::as_str) != Some("page") {
                continue;
            }
            if !attached.iter().any(|a| a == id) {
                // Already attached by auto-attach is an error here; fine.
                let _ = cdp
                    .call(
                        None,
                        "Target.attachToTarget",
                        json!({ "targetId": id, "flatten": true }),
                        t,
                    )
                    .await;
            }
            // The first tab is usable when `launch` returns.
            browser.wait_attached(id).await?;
        }
        Ok(browser)
    }

    /// The DevTools connection.
    pub fn cdp(&self) -> &Cdp {
        &self.shared.cdp
    }

    /// The product string (`Chrome/156...`).
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The profile directory.
    pub fn profile_dir(&self) -> &Path {
        &self.profile_dir
    }

    /// How long ago it was started.
    pub fn uptime(&self) -> Duration {
        self.started.elapsed()
    }

    /// Whether the browser still answers on its DevTools connection.
    pub async fn alive(&self) -> bool {
        self.shared
            .cdp
            .call(
                None,
                "Browser.getVersion",
                json!({}),
                Duration::from_secs(5),
            )
            .await
            .is_ok()
    }

    /// Kill the browser's whole process tree now (a sandboxed one: the
    /// kill is sent, see [`Browser::shutdown`] to wait for it).
    pub fn kill(&self) {
        match &self.process {
            Process::Host { leaf, .. } => {
                let _ = leaf.kill();
            }
            Process::Sandbox { control } => {
                let control = Arc::clone(control);
                tokio::spawn(async move {
                    let _ = control.kill().await;
                });
            }
        }
    }

    /// Kill the browser's whole process tree and wait until it is gone.
    pub async fn shutdown(&self) {
        match &self.process {
            Process::Host { leaf, .. } => {
                let _ = leaf.kill();
            }
            Process::Sandbox { control } => {
                let _ = control.kill().await;
                let _ = tokio::time::timeout(Duration::from_secs(10), control.wait()).await;
            }
        }
        let dir = &self.shared.download_dir;
        // Only the browser's own staging dir (none when downloads were
        // refused): never anything else in the workspace.
        let own = dir
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("talon-browser-"))
            && dir
                .parent()
                .and_then(Path::file_name)
                .is_some_and(|n| n == SANDBOX_DOWNLOAD_STAGING);
        if let (Some(bridge), true) = (&self.shared.sandbox_bridge, own) {
            let _ = bridge.remove(&dir.to_string_lossy(), true).await;
            // The staging parent, when no other browser uses it.
            if let Some(parent) = dir.parent() {
                let _ = bridge.remove(&parent.to_string_lossy(), false).await;
            }
        }
    }

    /// Whether this browser runs inside a sandbox.
    pub fn sandboxed(&self) -> bool {
        matches!(self.process, Process::Sandbox { .. })
    }

    /// The bytes of a finished download (from the private dir on the
    /// host; through the sandbox's bridge for a sandboxed browser, at most
    /// the download limit).
    pub async fn read_download(&self, d: &FinishedDownload) -> Result<Vec<u8>> {
        match &self.shared.sandbox_bridge {
            None => {
                std::fs::read(&d.temp_path).map_err(|e| io("cannot read the downloaded file", e))
            }
            Some(bridge) => {
                let cap = self.shared.max_download_bytes;
                let file = bridge
                    .read(&d.temp_path.to_string_lossy(), Some(cap + 1))
                    .await
                    .map_err(|e| io("cannot read the downloaded file", e))?;
                if file.truncated || file.total_size > cap {
                    return Err(BrowserError::Io(format!(
                        "the downloaded file is {} bytes, over the download limit of {cap} bytes",
                        file.total_size
                    )));
                }
                Ok(file.bytes)
            }
        }
    }

    /// Delete a finished download's temp file.
    pub async fn discard_download(&self, d: &FinishedDownload) {
        match &self.shared.sandbox_bridge {
            None => {
                let _ = std::fs::remove_file(&d.temp_path);
            }
            Some(bridge) => {
                let _ = bridge.remove(&d.temp_path.to_string_lossy(), false).await;
            }
        }
    }

    /// The refused requests, oldest first.
    pub fn blocked_requests(&self) -> Vec<BlockedRequest> {
        self.shared
            .with_state(|s| s.blocked.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The refused or cancelled downloads, oldest first.
    pub fn refused_downloads(&self) -> Vec<RefusedDownload> {
        self.shared
            .with_state(|s| s.downloads_refused.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The private directory Chromium downloads into.
    pub fn download_dir(&self) -> &Path {
        &self.shared.download_dir
    }

    /// Take the finished downloads (the caller copies each into the
    /// workspace and deletes its temp file).
    pub fn take_finished_downloads(&self) -> Vec<FinishedDownload> {
        self.shared
            .with_state(|s| s.downloads_done.drain(..).collect())
            .unwrap_or_default()
    }

    /// Downloads still under way.
    pub fn downloads_in_progress(&self) -> usize {
        self.shared
            .with_state(|s| s.downloads.values().filter(|p| !p.cancelled).count())
            .unwrap_or(0)
    }

    /// Wait until the tab `target_id` is attached and set up.
    pub(crate) async fn wait_attached(&self, target_id: &str) -> Result<String> {
        let deadline = Instant::now() + self.settings.action_timeout;
        loop {
            let notified = self.shared.attached.notified();
            if let Some(session) = self
                .shared
                .with_state(|s| s.tabs.get(target_id).map(|t| t.session.clone()))?
            {
                return Ok(session);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(BrowserError::Timeout {
                    what: format!("attaching to tab {target_id}"),
                    millis: self.settings.action_timeout.as_millis() as u64,
                });
            }
            let _ = tokio::time::timeout(left, notified).await;
        }
    }
}

/// The switches every Chromium gets, on the host or in a sandbox.
fn common_args(settings: &BrowserSettings) -> Vec<String> {
    vec![
        "--headless".into(),
        "--disable-gpu".into(),
        "--disable-quic".into(),
        "--no-first-run".into(),
        "--no-default-browser-check".into(),
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-sync".into(),
        "--disable-default-apps".into(),
        "--disable-extensions".into(),
        "--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider".into(),
        "--password-store=basic".into(),
        "--use-mock-keychain".into(),
        "--hide-scrollbars".into(),
        "--mute-audio".into(),
        format!("--window-size={},{}", settings.window.0, settings.window.1),
    ]
}

/// `s` as one POSIX shell word.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The last few non-empty lines of a log, for an error.
fn tail_lines(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains("dbus") && !l.trim().is_empty())
        .collect();
    let start = lines.len().saturating_sub(5);
    lines[start..].join(" | ").chars().take(1500).collect()
}

/// What a sandbox without egress is told.
pub(crate) fn no_egress_message() -> String {
    "this session's sandbox has no network (`docker.network` is \"none\"), so its browser could reach nothing: the sandboxed Chromium goes out only through the sandbox's SSRF-guarded egress proxy, which the local backend runs for `network: \"bridge\"`; set `agents.defaults.sandbox.docker.network` (or the agent's) to \"bridge\", or use web_fetch; nothing was started".to_owned()
}

/// A started Chromium, before its set-up.
struct Started {
    cdp: Cdp,
    events: mpsc::UnboundedReceiver<Event>,
    guard: EgressGuard,
    settings: BrowserSettings,
    profile_dir: PathBuf,
    runtime_dir: tempfile::TempDir,
    started: Instant,
    download_dir: PathBuf,
    sandbox_bridge: Option<Arc<dyn FsBridge>>,
    process: Process,
    proxy: Option<EgressProxy>,
    tasks: Vec<JoinHandle<()>>,
}

/// Relay each loopback connection to the proxy's Unix socket.
async fn relay_loop(listener: tokio::net::TcpListener, socket: PathBuf) {
    loop {
        let Ok((mut tcp, _)) = listener.accept().await else {
            // Out of descriptors or similar: do not spin.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let socket = socket.clone();
        tokio::spawn(async move {
            if let Ok(mut unix) = tokio::net::UnixStream::connect(&socket).await {
                let _ = tokio::io::copy_bidirectional(&mut tcp, &mut unix).await;
            }
        });
    }
}

/// What the guard says about one request URL: `None` allows it.
pub(crate) async fn vet_url(guard: &EgressGuard, raw: &str) -> Option<SsrfBlocked> {
    let invalid = |reason: String| SsrfBlocked {
        url: raw.chars().take(500).collect(),
        reason,
        kind: talon_egress::BlockKind::Invalid,
        fix: None,
    };
    let url = match Url::parse(raw) {
        Ok(u) => u,
        Err(e) => return Some(invalid(format!("Blocked: not a URL ({e})"))),
    };
    match url.scheme() {
        // In-page content; nothing is fetched from the network.
        "data" | "blob" | "about" => None,
        "http" | "https" => {
            match tokio::time::timeout(Duration::from_secs(10), guard.destination(&url)).await {
                Ok(Ok(_)) => None,
                Ok(Err(EgressError::Blocked(b))) => Some(b),
                Ok(Err(e)) => Some(invalid(format!("Blocked: {e}"))),
                Err(_) => Some(invalid(
                    "Blocked: resolving the host took over 10 s".to_owned(),
                )),
            }
        }
        other => Some(invalid(format!(
            "Blocked: the scheme `{other}` is not fetched by the browser (only http and https)"
        ))),
    }
}

fn push_console(tab: &mut Tab, entry: ConsoleEntry) {
    if tab.console.len() >= CONSOLE_KEEP {
        tab.console.pop_front();
    }
    tab.console.push_back(entry);
}

/// Handle the browser's events until the connection ends.
async fn dispatch(shared: Arc<Shared>, mut events: mpsc::UnboundedReceiver<Event>) {
    while let Some(ev) = events.recv().await {
        let session = ev.session_id.clone();
        let p = &ev.params;
        match ev.method.as_str() {
            "Target.attachedToTarget" => {
                let shared = Arc::clone(&shared);
                let params = ev.params.clone();
                tokio::spawn(async move { on_attached(shared, params).await });
            }
            "Target.detachedFromTarget" => {
                let sid = p.get("sessionId").and_then(Value::as_str).unwrap_or("");
                let _ = shared.with_state(|s| {
                    if let Some(target) = s.sessions.remove(sid) {
                        s.tabs.remove(&target);
                        s.order.retain(|t| t != &target);
                        if s.current.as_deref() == Some(target.as_str()) {
                            s.current = s.order.last().cloned();
                        }
                    }
                });
            }
            "Fetch.requestPaused" => {
                let shared = Arc::clone(&shared);
                let params = ev.params.clone();
                tokio::spawn(async move { on_request(shared, session, params).await });
            }
            "Runtime.consoleAPICalled" => {
                let level = p.get("type").and_then(Value::as_str).unwrap_or("log");
                let text = p
                    .get("args")
                    .and_then(Value::as_array)
                    .map(|args| {
                        args.iter()
                            .map(|a| match a.get("value") {
                                Some(Value::String(s)) => s.clone(),
                                Some(v) => v.to_string(),
                                None => a
                                    .get("description")
                                    .and_then(Value::as_str)
                                    .unwrap_or("")
                                    .to_owned(),
                            })
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .unwrap_or_default();
                record_console(&shared, session.as_deref(), level, text, "console");
            }
            "Runtime.exceptionThrown" => {
                let d = p.get("exceptionDetails");
                let text = d
                    .and_then(|d| d.get("exception"))
                    .and_then(|e| e.get("description"))
                    .and_then(Value::as_str)
                    .or_else(|| d.and_then(|d| d.get("text")).and_then(Value::as_str))
                    .unwrap_or("exception")
                    .to_owned();
                record_console(&shared, session.as_deref(), "error", text, "exception");
            }
            "Log.entryAdded" => {
                let e = p.get("entry");
                let level = e
                    .and_then(|e| e.get("level"))
                    .and_then(Value::as_str)
                    .unwrap_or("info");
                let text = e
                    .and_then(|e| e.get("text"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                let source = e
                    .and_then(|e| e.get("source"))
                    .and_then(Value::as_str)
                    .unwrap_or("log")
                    .to_owned();
                record_console(&shared, session.as_deref(), level, text, &source);
            }
            "Page.javascriptDialogOpening" => {
                let dialog = PendingDialog {
                    kind: p
                        .get("type")
                        .and_then(Value::as_str)
                        .unwrap_or("alert")
                        .to_owned(),
                    message: p
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                };
                let armed = shared
                    .with_state(|s| {
                        let target = session
                            .as_ref()
                            .and_then(|sid| s.sessions.get(sid))?
                            .clone();
                        let tab = s.tabs.get_mut(&target)?;
                        match tab.dialog_arm.take() {
                            Some(arm) => Some(arm),
                            None => {
                                tab.dialog = Some(dialog);
                                None
                            }
                        }
                    })
                    .ok()
                    .flatten();
                if let Some((accept, prompt)) = armed {
                    let mut params = json!({ "accept": accept });
                    if let Some(text) = prompt {
                        params["promptText"] = Value::String(text);
                    }
                    shared
                        .cdp
                        .send(session.as_deref(), "Page.handleJavaScriptDialog", params);
                }
            }
            "Page.javascriptDialogClosed" => {
                let _ = shared.with_state(|s| {
                    if let Some(target) = session
                        .as_ref()
                        .and_then(|sid| s.sessions.get(sid))
                        .cloned()
                        && let Some(tab) = s.tabs.get_mut(&target)
                    {
                        tab.dialog = None;
                    }
                });
            }
            "Browser.downloadWillBegin" => {
                let field = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
                let (guid, url) = (field("guid"), field("url"));
                if guid.is_empty() {
                    continue;
                }
                tracing::info!(target: "talon::browser", url = %url, "download started");
                let _ = shared.with_state(|s| {
                    s.downloads.insert(
                        guid,
                        Pending {
                            url,
                            suggested: field("suggestedFilename"),
                            cancelled: false,
                        },
                    );
                });
            }
            "Browser.downloadProgress" => on_download_progress(&shared, p),
            _ => {}
        }
    }
}

/// Delete everything Chromium wrote for download `guid` (the file and
/// any partial file next to it).
fn remove_download_files(shared: &Shared, guid: &str) {
    let dir = &shared.download_dir;
    if dir.as_os_str().is_empty() || guid.is_empty() {
        return;
    }
    if let Some(bridge) = &shared.sandbox_bridge {
        // Never a host path: the sandbox could have swapped the staging
        // dir for a symlink; the bridge resolves beneath its mounts.
        let bridge = Arc::clone(bridge);
        let dir = dir.to_string_lossy().into_owned();
        let guid = guid.to_owned();
        tokio::spawn(async move {
            let Ok(entries) = bridge.list(&dir).await else {
                return;
            };
            for e in entries {
                if e.name.starts_with(&guid) {
                    let _ = bridge.remove(&format!("{dir}/{}", e.name), false).await;
                }
            }
        });
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if e.file_name().to_string_lossy().starts_with(guid) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

fn refuse_download(shared: &Shared, url: String, reason: String) {
    tracing::warn!(target: "talon::browser", url = %url, reason = %reason, "download refused");
    let _ = shared.with_state(|s| {
        if let Some(tab) = s.current.clone().and_then(|c| s.tabs.get_mut(&c)) {
            push_console(
                tab,
                ConsoleEntry {
                    level: "warning".to_owned(),
                    text: format!("download refused: {reason}: {url}"),
                    source: "talon".to_owned(),
                },
            );
        }
        if s.downloads_refused.len() >= BLOCKED_KEEP {
            s.downloads_refused.pop_front();
        }
        s.downloads_refused
            .push_back(RefusedDownload { url, reason });
    });
}

/// One `Browser.downloadProgress`: cancel and delete a download over the
/// limit as soon as it says so, and queue a finished one.
fn on_download_progress(shared: &Shared, p: &Value) {
    let Some(guid) = p.get("guid").and_then(Value::as_str) else {
        return;
    };
    let state = p.get("state").and_then(Value::as_str).unwrap_or("");
    let bytes = |k: &str| p.get(k).and_then(Value::as_f64).unwrap_or(0.0).max(0.0) as u64;
    let (total, received) = (bytes("totalBytes"), bytes("receivedBytes"));
    let cap = shared.max_download_bytes;
    let dir = &shared.download_dir;
    let pending = shared
        .with_state(|s| s.downloads.get(guid).cloned())
        .ok()
        .flatten();
    let Some(pending) = pending else {
        // Not announced (or already finished): nothing of it is kept.
        if state != "inProgress" {
            remove_download_files(shared, guid);
        }
        return;
    };
    if pending.cancelled {
        remove_download_files(shared, guid);
        if state != "inProgress" {
            let _ = shared.with_state(|s| s.downloads.remove(guid));
        }
        return;
    }
    match state {
        "inProgress" if total > cap || received > cap => {
            shared
                .cdp
                .send(None, "Browser.cancelDownload", json!({ "guid": guid }));
            let _ = shared.with_state(|s| {
                if let Some(d) = s.downloads.get_mut(guid) {
                    d.cancelled = true;
                }
            });
            remove_download_files(shared, guid);
            refuse_download(
                shared,
                pending.url,
                format!(
                    "it is larger than the download limit of {cap} bytes ({} bytes {}); the transfer was cancelled and nothing was kept",
                    total.max(received),
                    if total > cap {
                        "announced"
                    } else {
                        "received so far"
                    }
                ),
            );
        }
        "inProgress" => {}
        "completed" => {
            let _ = shared.with_state(|s| s.downloads.remove(guid));
            let path = dir.join(guid);
            let size = if shared.sandbox_bridge.is_some() {
                // Checked again when it is read through the bridge.
                Ok(received.max(total))
            } else {
                std::fs::metadata(&path).map(|m| m.len())
            };
            match size {
                Ok(size) if size <= cap => {
                    let _ = shared.with_state(|s| {
                        s.downloads_done.push_back(FinishedDownload {
                            url: pending.url,
                            suggested_name: pending.suggested,
                            temp_path: path,
                            bytes: size,
                        })
                    });
                }
                Ok(size) => {
                    remove_download_files(shared, guid);
                    refuse_download(
                        shared,
                        pending.url,
                        format!(
                            "it is {size} bytes, over the download limit of {cap} bytes; it was deleted"
                        ),
                    );
                }
                Err(e) => {
                    remove_download_files(shared, guid);
                    refuse_download(
                        shared,
                        pending.url,
                        format!("the finished file cannot be read: {e}"),
                    );
                }
            }
        }
        _ => {
            // `canceled` by the page or Chromium (a failed transfer).
            let _ = shared.with_state(|s| s.downloads.remove(guid));
            remove_download_files(shared, guid);
            refuse_download(
                shared,
                pending.url,
                "the browser cancelled it (the transfer failed or was refused)".to_owned(),
            );
        }
    }
}

fn record_console(shared: &Shared, session: Option<&str>, level: &str, text: String, source: &str) {
    let _ = shared.with_state(|s| {
        let target = session.and_then(|sid| s.sessions.get(sid)).cloned();
        if let Some(tab) = target.and_then(|t| s.tabs.get_mut(&t)) {
            push_console(
                tab,
                ConsoleEntry {
                    level: level.to_owned(),
                    text: text.chars().take(4000).collect(),
                    source: source.to_owned(),
                },
            );
        }
    });
}

/// Set up a newly attached target: interception first, then let it run.
async fn on_attached(shared: Arc<Shared>, params: Value) {
    let Some(session) = params.get("sessionId").and_then(Value::as_str) else {
        return;
    };
    let info = params.get("targetInfo").cloned().unwrap_or(Value::Null);
    let kind = info.get("type").and_then(Value::as_str).unwrap_or("");
    let target_id = info
        .get("targetId")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let t = shared.call_timeout;
    let cdp = &shared.cdp;
    let s = Some(session);
    // Interception on every target that can fetch; a target kind without
    // the Fetch domain still goes through the proxy.
    let _ = cdp
        .call(
            s,
            "Fetch.enable",
            json!({ "patterns": [{ "urlPattern": "*", "requestStage": "Request" }] }),
            t,
        )
        .await;
    if kind == "page" || kind == "iframe" {
        let _ = cdp
            .call(
                s,
                "Target.setAutoAttach",
                json!({ "autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true }),
                t,
            )
            .await;
    }
    if kind == "page" {
        for method in ["Page.enable", "Runtime.enable", "Log.enable", "DOM.enable"] {
            let _ = cdp.call(s, method, json!({}), t).await;
        }
        let duplicate = shared
            .with_state(|st| st.tabs.contains_key(&target_id))
            .unwrap_or(false);
        if duplicate {
            // Attached twice (auto-attach and the start-up attach): keep
            // the first session, drop this one.
            let _ = cdp
                .call(
                    None,
                    "Target.detachFromTarget",
                    json!({ "sessionId": session }),
                    t,
                )
                .await;
            shared.attached.notify_waiters();
            return;
        }
        let _ = shared.with_state(|st| {
            st.sessions.insert(session.to_owned(), target_id.clone());
            st.tabs.insert(
                target_id.clone(),
                Tab {
                    session: session.to_owned(),
                    ..Tab::default()
                },
            );
            st.order.push(target_id.clone());
            if st.current.is_none() {
                st.current = Some(target_id.clone());
            }
        });
    }
    let _ = cdp
        .call(s, "Runtime.runIfWaitingForDebugger", json!({}), t)
        .await;
    shared.attached.notify_waiters();
}

/// Vet one paused request; continue or fail it.
async fn on_request(shared: Arc<Shared>, session: Option<String>, params: Value) {
    let Some(request_id) = params.get("requestId").and_then(Value::as_str) else {
        return;
    };
    let url = params
        .get("request")
        .and_then(|r| r.get("url"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let resource_type = params
        .get("resourceType")
        .and_then(Value::as_str)
        .unwrap_or("Other")
        .to_owned();
    match vet_url(&shared.guard, url).await {
        None => {
            shared.cdp.send(
                session.as_deref(),
                "Fetch.continueRequest",
                json!({ "requestId": request_id }),
            );
        }
        Some(blocked) => {
            tracing::warn!(target: "talon::browser", url = %blocked.url, code = blocked.code(), reason = %blocked.reason, "browser request refused by the egress guard");
            shared.cdp.send(
                session.as_deref(),
                "Fetch.failRequest",
                json!({ "requestId": request_id, "errorReason": "BlockedByClient" }),
            );
            let _ = shared.with_state(|s| {
                let target = session
                    .as_ref()
                    .and_then(|sid| s.sessions.get(sid))
                    .cloned();
                if let Some(tab) = target.as_ref().and_then(|t| s.tabs.get_mut(t)) {
                    push_console(
                        tab,
                        ConsoleEntry {
                            level: "error".to_owned(),
                            text: format!("{resource_type} request refused: {blocked}"),
                            source: "talon-egress".to_owned(),
                        },
                    );
                }
                if s.blocked.len() >= BLOCKED_KEEP {
                    s.blocked.pop_front();
                }
                s.blocked.push_back(BlockedRequest {
                    target_id: target,
                    url: url.to_owned(),
                    resource_type,
                    blocked,
                });
            });
        }
    }
}
