//! The sandboxed browser: Debian's real Chromium inside the local
//! backend's real bubblewrap sandbox (`network: "bridge"`, so its only
//! way out is the sandbox's SSRF-guarded egress proxy), DevTools over its
//! pipes. The pages are served on the host's loopback by the test and
//! opened by an explicit allowlist entry for 127.0.0.1 only (in the
//! browser's guard and in the sandbox's egress policy alike).

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use talon_browser::{
    BrowserManager, BrowserSettings, BrowserTool, SandboxBrowser, SandboxBrowserConfig,
    SandboxTarget,
};
use talon_egress::{EgressGuard, SsrfAllowlistConfig, SsrfPolicy, StaticResolver};
use talon_sandbox_core::{
    DockerConfig, LaunchRequest, LaunchedProcess, ProcessLauncher, ResolvedSandboxConfig,
    SandboxConfig, SandboxError, SandboxHandle, SandboxInputs, SandboxMode, SandboxRequest,
    WorkspaceAccess,
};
use talon_sandbox_local::{LocalBackend, LocalSandbox};
use talon_tool_catalog::{
    CancellationToken, Tool, ToolCall, ToolContext, ToolError, ToolErrorCode, ToolResult,
};

use super::{Server, pages, private, require_chromium, serve};

/// Panic, naming the fix, unless bubblewrap is installed.
fn require_bwrap() {
    assert!(
        Path::new("/usr/bin/bwrap").exists(),
        "/usr/bin/bwrap is missing: the sandboxed browser tests run Chromium in the real local sandbox; install Debian's bubblewrap (`cargo xtask test` does)"
    );
}

/// `talon-sandbox-exec` (the helper that starts the egress forwarder
/// inside the sandbox), built next to this test binary's directory.
fn sandbox_exec() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target dir")
        .to_path_buf();
    let helper = dir.join("talon-sandbox-exec");
    assert!(
        helper.is_file(),
        "{} is missing: the sandboxed browser needs the local sandbox's helper for its egress forwarder; build it with `cargo build -p talon-sandbox-local --bin talon-sandbox-exec` (`cargo xtask test` builds every binary first)",
        helper.display()
    );
    helper
}

fn loopback_only() -> SsrfPolicy {
    SsrfPolicy::from_config(&SsrfAllowlistConfig {
        hosts: vec![],
        cidrs: vec!["127.0.0.1/32".to_owned()],
    })
    .expect("policy")
}

fn resolver() -> StaticResolver {
    StaticResolver::new()
        .with("pages.test", [IpAddr::V4(Ipv4Addr::LOCALHOST)])
        .with("private.test", [IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2))])
}

struct SandboxFixture {
    tool: BrowserTool,
    manager: Arc<BrowserManager>,
    sandbox: Arc<LocalSandbox>,
    pages: Server,
    private: Server,
    dir: tempfile::TempDir,
}

impl SandboxFixture {
    fn workspace(&self) -> PathBuf {
        self.dir.path().join("state/workspace")
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.pages.port)
    }

    async fn call(&self, params: Value) -> Result<ToolResult, ToolError> {
        let Value::Object(params) = params else {
            panic!("params must be an object")
        };
        let call = ToolCall {
            id: "c".to_owned(),
            name: "browser".to_owned(),
            params,
        };
        self.tool
            .execute(
                &call,
                &ToolContext::new("main", "agent:main:main").sandboxed(true),
                &CancellationToken::new(),
            )
            .await
    }

    async fn ok(&self, params: Value) -> ToolResult {
        let what = params.to_string();
        self.call(params)
            .await
            .unwrap_or_else(|e| panic!("{what}: {e:?}"))
    }
}

fn resolved(dir: &Path, network: &str) -> ResolvedSandboxConfig {
    let defaults = SandboxConfig {
        mode: Some(SandboxMode::All),
        backend: Some("local".to_owned()),
        workspace_access: Some(WorkspaceAccess::Rw),
        docker: Some(DockerConfig {
            network: Some(network.to_owned()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let tools = talon_tool_policy::config::ToolsConfig::default();
    ResolvedSandboxConfig::resolve(&SandboxInputs {
        agent_id: "main",
        defaults: Some(&defaults),
        agent: None,
        agent_key: None,
        state_dir: &dir.join("state"),
        home: Some(&dir.join("home")),
        tools: &tools,
        agent_tools: None,
    })
}

async fn sandbox_fixture(network: &str, config: SandboxBrowserConfig) -> SandboxFixture {
    require_chromium();
    require_bwrap();
    let private_srv = serve(Ipv4Addr::new(127, 0, 0, 2), 0, private).await;
    let pages_srv = serve(Ipv4Addr::LOCALHOST, private_srv.port, pages).await;
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("state/workspace")).expect("workspace");
    std::fs::create_dir_all(dir.path().join("home")).expect("home");
    std::fs::write(dir.path().join("home/secret.txt"), "HOST-SECRET-4711").expect("secret");
    let backend = LocalBackend::new()
        .expect("bwrap")
        .with_home_dirs(vec![dir.path().join("home")])
        .with_sandbox_exec(sandbox_exec())
        .expect("helper")
        .with_egress_policy(Arc::new(loopback_only()))
        .with_resolver(Arc::new(resolver()));
    let request = SandboxRequest::new(
        resolved(dir.path(), network),
        "agent:main:main",
        &dir.path().join("state/workspace"),
        None,
    );
    let sandbox = backend.ensure_local(&request).await.expect("sandbox");
    let target = SandboxTarget {
        launcher: sandbox.launcher(),
        bridge: sandbox.fs_bridge().expect("bridge"),
        name: sandbox.name().to_owned(),
    };
    let guard = EgressGuard::new(Arc::new(loopback_only()), Arc::new(resolver()))
        .with_opt_in("add it to `tools.web.fetch.ssrfAllowlist`");
    let manager = Arc::new(BrowserManager::new(
        guard,
        BrowserSettings {
            navigation_timeout: Duration::from_secs(6),
            max_download_bytes: 1024 * 1024,
            ..BrowserSettings::default()
        },
        dir.path().join("state/browser"),
    ));
    SandboxFixture {
        tool: BrowserTool::sandboxed(Arc::clone(&manager), SandboxBrowser { target, config }),
        manager,
        sandbox,
        pages: pages_srv,
        private: private_srv,
        dir,
    }
}

fn enabled() -> SandboxBrowserConfig {
    SandboxBrowserConfig {
        enabled: true,
        ..SandboxBrowserConfig::default()
    }
}

/// The sandboxed browser tests one at a time: each counts the sandboxed
/// Chromium processes on the machine.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The bytes of every file beneath `dir`.
fn walk_sizes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                walk_sizes(&p)
            } else {
                e.metadata().map(|m| m.len()).unwrap_or(0)
            }
        })
        .sum()
}

/// Host pids of Chromium processes (not the shell or `bwrap` that
/// started them) whose command line holds `needle`.
fn pids_with(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let argv0 = cmdline.split(|b| *b == 0).next().unwrap_or_default();
        if !String::from_utf8_lossy(argv0).ends_with("/chromium") {
            continue;
        }
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if text.contains(needle) {
            out.push(pid);
        }
    }
    out
}

/// The sandboxed Chromium processes: their profile is in the sandbox's
/// private `/tmp`.
fn sandboxed_chromium() -> Vec<u32> {
    pids_with("--user-data-dir=/tmp/talon-browser-")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxed_session_browses_inside_bubblewrap_behind_the_guard() {
    let _one = ONE_AT_A_TIME.lock().await;
    let f = sandbox_fixture("bridge", enabled()).await;
    let started = f.ok(json!({"action": "start"})).await;
    assert_eq!(started.details["running"], true, "{:?}", started.details);

    // Chromium runs in the sandbox's own namespaces, not the host's.
    let pids = sandboxed_chromium();
    assert!(!pids.is_empty(), "no sandboxed chromium process found");
    let ns = |pid: u32, kind: &str| std::fs::read_link(format!("/proc/{pid}/ns/{kind}")).ok();
    let me = std::process::id();
    for kind in ["net", "mnt", "pid"] {
        assert_ne!(
            ns(pids[0], kind),
            ns(me, kind),
            "chromium shares the host's {kind} namespace"
        );
    }
    // Its filesystem is the sandbox's: the workspace is there, the host
    // home (with its secret) is not, and the system is read-only.
    let root = format!("/proc/{}/root", pids[0]);
    assert!(Path::new(&format!("{root}/workspace")).is_dir());
    let secret_path = f.dir.path().join("home/secret.txt");
    assert!(
        !Path::new(&format!("{root}{}", secret_path.display())).exists(),
        "the host home is visible to the sandboxed chromium"
    );
    assert!(
        !Path::new(&format!(
            "{root}{}",
            f.dir.path().join("state/browser").display()
        ))
        .exists()
    );
    // No DevTools port: in the browser's network namespace the only TCP
    // listener is the egress forwarder (127.0.0.1:3128).
    let mut listening = Vec::new();
    for table in ["tcp", "tcp6"] {
        let text =
            std::fs::read_to_string(format!("/proc/{}/net/{table}", pids[0])).unwrap_or_default();
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.get(3) == Some(&"0A") {
                listening.push(cols[1].to_owned());
            }
        }
    }
    assert_eq!(listening, ["0100007F:0C38"], "listeners in the sandbox");
    let status = f.ok(json!({"action": "status"})).await;
    assert_eq!(status.details["target"], "sandbox");

    // A loopback page the explicit test config allows: navigate and
    // snapshot.
    let nav = f
        .ok(json!({"action": "open", "targetUrl": f.url("/form")}))
        .await;
    assert_eq!(nav.details["title"], "Form page");
    let snap = f.ok(json!({"action": "snapshot"})).await;
    let text = snap.text();
    assert!(text.contains("heading \"Form\""), "{text}");
    assert!(text.contains("button \"Send\""), "{text}");

    // A host file outside the workspace is never read through file://.
    let secret = f.dir.path().join("home/secret.txt");
    let err = f
        .call(json!({"action": "navigate", "targetUrl": format!("file://{}", secret.display())}))
        .await
        .expect_err("file url");
    assert_eq!(err.code(), ToolErrorCode::InputInvalid, "{err:?}");
    // Nor by the page itself: the request is refused by interception
    // (and the file is not in the sandbox at all).
    let url = format!("file://{}", secret.display());
    f.ok(json!({"action": "act", "request": {"kind": "evaluate",
        "fn": format!("() => {{ location.href = {url:?}; return 1; }}")}}))
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let snap = f.ok(json!({"action": "snapshot"})).await;
    assert!(!snap.text().contains("HOST-SECRET-4711"), "{}", snap.text());

    // The SSRF rules still apply: the metadata address, and a name that
    // resolves to a loopback address the config does not open.
    let err = f
        .call(
            json!({"action": "navigate", "targetUrl": "http://169.254.169.254/latest/meta-data/"}),
        )
        .await
        .expect_err("metadata");
    assert_eq!(err.code(), ToolErrorCode::WebMetadataBlocked, "{err:?}");
    let err = f
        .call(json!({"action": "navigate", "targetUrl": format!("http://private.test:{}/", f.private.port)}))
        .await
        .expect_err("private name");
    assert_eq!(err.code(), ToolErrorCode::WebSsrfBlocked, "{err:?}");
    // ... and for sub-resources.
    f.ok(json!({"action": "navigate", "targetUrl": f.url("/embeds")}))
        .await;
    assert_eq!(
        f.private.hits.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the private server was reached from the sandbox"
    );

    // A download lands in the sandbox workspace, through its bridge.
    // (The navigation itself ends as ERR_ABORTED: the response became a
    // download.)
    let _ = f
        .call(json!({"action": "navigate", "targetUrl": f.url("/download")}))
        .await;
    let deadline = Instant::now() + Duration::from_secs(15);
    let saved = loop {
        let r = f.ok(json!({"action": "status"})).await;
        if let Some(d) = r.details.get("downloads") {
            break d.clone();
        }
        assert!(
            Instant::now() < deadline,
            "no download saved: {:?}",
            r.details
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let path = saved[0]["path"].as_str().expect("saved path").to_owned();
    let rel = path.trim_start_matches("/workspace/");
    let bytes = std::fs::read(f.workspace().join(rel)).expect("download in the workspace");
    assert_eq!(bytes.len(), 4096);
    // Its staging copy is gone.
    let staging = f.workspace().join(talon_browser::SANDBOX_DOWNLOAD_STAGING);
    let left: Vec<_> = std::fs::read_dir(&staging)
        .expect("staging dir")
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "{left:?}");

    // One over the limit (1 MiB here) is cancelled and deleted, and
    // nothing of it reaches the workspace.
    let _ = f
        .call(json!({"action": "navigate", "targetUrl": f.url("/huge")}))
        .await;
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let r = f.ok(json!({"action": "status"})).await;
        if r.details["refusedDownloads"].as_u64().unwrap_or(0) >= 1 {
            break;
        }
        assert!(Instant::now() < deadline, "not refused: {:?}", r.details);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let downloads: Vec<_> = std::fs::read_dir(f.workspace().join("downloads"))
        .expect("downloads dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(downloads.len(), 1, "{downloads:?}");
    let big: u64 = walk_sizes(&staging);
    assert!(big <= 2 * 1024 * 1024, "{big} bytes left in staging");

    // Stop: the whole Chromium tree is gone.
    let stopped = f.ok(json!({"action": "stop"})).await;
    assert_eq!(stopped.details["stopped"], true);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !sandboxed_chromium().is_empty() {
        assert!(
            Instant::now() < deadline,
            "chromium still runs: {:?}",
            sandboxed_chromium()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        f.manager.running("main").await.is_none(),
        "a host browser was started"
    );
    assert!(!staging.exists(), "the staging dir outlived the browser");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_without_egress_gets_no_browser() {
    let _one = ONE_AT_A_TIME.lock().await;
    let f = sandbox_fixture("none", enabled()).await;
    let err = f
        .call(json!({"action": "start"}))
        .await
        .expect_err("no egress");
    assert_eq!(err.code(), ToolErrorCode::BrowserSandboxNoEgress, "{err:?}");
    assert!(sandboxed_chromium().is_empty());
    assert!(f.manager.running("main").await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_browser_follows_its_config() {
    let _one = ONE_AT_A_TIME.lock().await;
    // Off: refused, and the host browser is not used instead.
    let f = sandbox_fixture("bridge", SandboxBrowserConfig::default()).await;
    let err = f
        .call(json!({"action": "start"}))
        .await
        .expect_err("disabled");
    assert_eq!(err.code(), ToolErrorCode::BrowserSandboxUnsupported);
    // A sandboxed session never asks for the host browser.
    let f = sandbox_fixture(
        "bridge",
        SandboxBrowserConfig {
            enabled: true,
            auto_start: false,
            start_timeout: None,
        },
    )
    .await;
    let err = f
        .call(json!({"action": "status", "target": "host"}))
        .await
        .expect_err("host");
    assert_eq!(err.code(), ToolErrorCode::BrowserSandboxUnsupported);
    // autoStart false: only `start` starts it.
    let err = f
        .call(json!({"action": "open", "targetUrl": f.url("/form")}))
        .await
        .expect_err("not started");
    assert_eq!(err.code(), ToolErrorCode::BrowserUnavailable);
    assert!(sandboxed_chromium().is_empty());
    assert!(f.manager.running("main").await.is_none());
}

/// A launcher of another backend (the trait seam only: it never runs
/// anything).
#[derive(Debug)]
struct OtherBackend;

#[async_trait::async_trait]
impl ProcessLauncher for OtherBackend {
    fn id(&self) -> &str {
        "docker"
    }

    async fn launch(&self, _: LaunchRequest) -> Result<LaunchedProcess, SandboxError> {
        panic!("nothing may be launched for a backend without a sandboxed browser")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_docker_backend_is_refused_naming_the_local_one() {
    let _one = ONE_AT_A_TIME.lock().await;
    let f = sandbox_fixture("bridge", enabled()).await;
    let mut target = SandboxTarget {
        launcher: Arc::new(OtherBackend),
        bridge: f.sandbox.fs_bridge().expect("bridge"),
        name: "docker-sandbox".to_owned(),
    };
    target.name.push_str("-1");
    let tool = BrowserTool::sandboxed(
        Arc::clone(&f.manager),
        SandboxBrowser {
            target,
            config: enabled(),
        },
    );
    let Value::Object(params) = json!({"action": "start"}) else {
        unreachable!()
    };
    let err = tool
        .execute(
            &ToolCall {
                id: "c".to_owned(),
                name: "browser".to_owned(),
                params,
            },
            &ToolContext::new("main", "s").sandboxed(true),
            &CancellationToken::new(),
        )
        .await
        .expect_err("docker");
    assert_eq!(err.code(), ToolErrorCode::BrowserSandboxUnsupported);
    assert!(err.message().contains("local"), "{}", err.message());
    assert!(f.manager.running("main").await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_sandbox_browser_takes_its_process_tree_with_it() {
    let _one = ONE_AT_A_TIME.lock().await;
    let f = sandbox_fixture("bridge", enabled()).await;
    f.ok(json!({"action": "start"})).await;
    assert!(!sandboxed_chromium().is_empty());
    // No stop: the gateway going away drops the manager (and the tool).
    let SandboxFixture {
        tool,
        manager,
        sandbox,
        ..
    } = f;
    drop(tool);
    drop(manager);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !sandboxed_chromium().is_empty() {
        assert!(
            Instant::now() < deadline,
            "chromium outlived its browser: {:?}",
            sandboxed_chromium()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(sandbox);
}
