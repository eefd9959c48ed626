//! The browser tool on Debian's real Chromium against pages this test
//! serves on loopback (allowed by an explicit allowlist entry for
//! 127.0.0.1 only); a second server on 127.0.0.2 stands for a private
//! address nothing may reach, and counts every request it gets.
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "test helpers panic on setup failures"
)]

use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Map, Value, json};
use talon_browser::{BrowserManager, BrowserSettings, BrowserTool};
use talon_egress::{EgressGuard, SsrfAllowlistConfig, SsrfPolicy, StaticResolver};
use talon_fs_bridge::{FsBridge, Mount, MountBridge};
use talon_tool_catalog::{
    CancellationToken, ContentBlock, Tool, ToolCall, ToolContext, ToolError, ToolErrorCode,
    ToolResult,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[path = "suite/sandboxed.rs"]
mod sandboxed;

/// Panic, naming the fix, unless Chromium is installed.
fn require_chromium() {
    assert!(
        Path::new("/usr/bin/chromium").exists(),
        "/usr/bin/chromium is missing: these tests drive the real browser; install Debian's chromium (`cargo xtask media-install`, which `cargo xtask test` runs)"
    );
}

/// A tiny HTTP server: `routes(path, own_port, other_port)` gives the
/// response head and body, `None` never answers.
struct Server {
    port: u16,
    hits: Arc<AtomicUsize>,
}

type Route = fn(&str, u16, u16) -> Option<(String, String)>;

async fn serve(ip: Ipv4Addr, other: u16, route: Route) -> Server {
    let listener = tokio::net::TcpListener::bind((ip, 0)).await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&hits);
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                continue;
            };
            let counter = Arc::clone(&counter);
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let mut got = Vec::new();
                loop {
                    let n = match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    got.extend_from_slice(&buf[..n]);
                    if got.windows(4).any(|w| w == b"\r\n\r\n") {
                        break;
                    }
                }
                counter.fetch_add(1, Ordering::SeqCst);
                let head = String::from_utf8_lossy(&got);
                let target = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                // Through a proxy the request line is absolute-form.
                let path = match target.find("://") {
                    Some(i) => target[i + 3..]
                        .find('/')
                        .map(|j| target[i + 3 + j..].to_owned())
                        .unwrap_or_else(|| "/".to_owned()),
                    None => target,
                };
                match route(&path, port, other) {
                    Some((status_headers, body)) => {
                        // `X-No-Length`: the body ends at close (no size
                        // announced up front).
                        let length = if status_headers.contains("X-No-Length") {
                            String::new()
                        } else {
                            format!("Content-Length: {}\r\n", body.len())
                        };
                        let resp = format!(
                            "HTTP/1.1 {status_headers}\r\n{length}Connection: close\r\n\r\n{body}"
                        );
                        let _ = sock.write_all(resp.as_bytes()).await;
                    }
                    None => tokio::time::sleep(Duration::from_secs(3600)).await,
                }
            });
        }
    });
    Server { port, hits }
}

const FORM: &str = r#"<!doctype html><html><head><title>Form page</title></head><body>
<h1>Form</h1>
<label>Name <input id="name" name="name"></label>
<label><input type="checkbox" id="agree"> Agree</label>
<label>Colour <select id="color"><option value="r">Red</option><option value="g">Green</option></select></label>
<button type="button" id="go" onclick="document.getElementById('out').textContent='Hello '+document.getElementById('name').value+(document.getElementById('agree').checked?' agreed':'')+' '+document.getElementById('color').value; console.log('sent')">Send</button>
<p id="out">waiting</p>
<div role="img" aria-label="Box" style="width:200px;height:100px;background:#c33"></div>
</body></html>"#;

fn html(body: String) -> Option<(String, String)> {
    Some((
        "200 OK\r\nContent-Type: text/html; charset=utf-8".to_owned(),
        body,
    ))
}

fn pages(path: &str, _own: u16, other: u16) -> Option<(String, String)> {
    match path {
        "/form" => html(FORM.to_owned()),
        "/embeds" => html(format!(
            r#"<!doctype html><title>Embeds</title><img id="a" src="http://127.0.0.2:{other}/secret.png"><img id="b" src="http://169.254.169.254/latest/meta-data/x.png"><img id="c" src="http://private.test:{other}/named.png"><p>done</p>"#
        )),
        "/to-private" => Some((
            format!("302 Found\r\nLocation: http://private.test:{other}/landing"),
            String::new(),
        )),
        "/to-metadata" => Some((
            "302 Found\r\nLocation: http://169.254.169.254/latest/meta-data/".to_owned(),
            String::new(),
        )),
        "/loop" => Some(("302 Found\r\nLocation: /loop".to_owned(), String::new())),
        "/hang" => None,
        "/download" => Some((
            "200 OK\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"big.bin\"".to_owned(),
            "x".repeat(4096),
        )),
        "/stream" => Some((
            "200 OK\r\nContent-Type: application/octet-stream\r\nX-No-Length: 1\r\nContent-Disposition: attachment; filename=\"stream.bin\"".to_owned(),
            "z".repeat(16 * 1024 * 1024),
        )),
        "/huge" => Some((
            "200 OK\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"../../huge.bin\"".to_owned(),
            "y".repeat(16 * 1024 * 1024),
        )),
        "/big" => {
            let mut s = String::from("<!doctype html><title>Big</title>");
            for i in 0..1000 {
                s.push_str(&format!("<button>b{i}</button>"));
            }
            html(s)
        }
        _ => Some(("404 Not Found".to_owned(), "no".to_owned())),
    }
}

fn private(_path: &str, _own: u16, _other: u16) -> Option<(String, String)> {
    html("<title>secret</title>secret".to_owned())
}

struct Fixture {
    tool: BrowserTool,
    manager: Arc<BrowserManager>,
    pages: Server,
    private: Server,
    _dir: tempfile::TempDir,
    ws: std::path::PathBuf,
}

async fn fixture() -> Fixture {
    fixture_with(BrowserSettings::default()).await
}

async fn fixture_with(settings: BrowserSettings) -> Fixture {
    require_chromium();
    let private_srv = serve(Ipv4Addr::new(127, 0, 0, 2), 0, private).await;
    let pages_srv = serve(Ipv4Addr::LOCALHOST, private_srv.port, pages).await;
    // The explicit test config: only 127.0.0.1 is opened; 127.0.0.2 (and
    // the name that resolves to it) stay refused like any loopback.
    let policy = SsrfPolicy::from_config(&SsrfAllowlistConfig {
        hosts: vec![],
        cidrs: vec!["127.0.0.1/32".to_owned()],
    })
    .expect("policy");
    let resolver = StaticResolver::new()
        .with("pages.test", [IpAddr::V4(Ipv4Addr::LOCALHOST)])
        .with("private.test", [IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2))]);
    let guard = EgressGuard::new(Arc::new(policy), Arc::new(resolver))
        .with_opt_in("add it to `tools.web.fetch.ssrfAllowlist`");
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).expect("mkdir");
    let bridge: Arc<dyn FsBridge> = Arc::new(
        MountBridge::new(vec![Mount::writable("/workspace", &ws)], "/workspace").expect("bridge"),
    );
    let settings = BrowserSettings {
        navigation_timeout: Duration::from_secs(4),
        ..settings
    };
    let manager = Arc::new(BrowserManager::new(
        guard,
        settings,
        dir.path().join("state/browser"),
    ));
    Fixture {
        tool: BrowserTool::new(Arc::clone(&manager), bridge),
        manager,
        pages: pages_srv,
        private: private_srv,
        _dir: dir,
        ws,
    }
}

impl Fixture {
    async fn call_in(&self, ctx: &ToolContext, params: Value) -> Result<ToolResult, ToolError> {
        let Value::Object(params) = params else {
            panic!("params must be an object")
        };
        let call = ToolCall {
            id: "c".to_owned(),
            name: "browser".to_owned(),
            params,
        };
        self.tool
            .execute(&call, ctx, &CancellationToken::new())
            .await
    }

    async fn call(&self, params: Value) -> Result<ToolResult, ToolError> {
        self.call_in(&ToolContext::new("main", "s"), params).await
    }

    async fn ok(&self, params: Value) -> ToolResult {
        let what = params.to_string();
        self.call(params)
            .await
            .unwrap_or_else(|e| panic!("{what}: {e:?}"))
    }

    async fn tool_browser(&self) -> Arc<talon_browser::Browser> {
        self.manager.running("main").await.expect("running browser")
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.pages.port)
    }
}

fn text(r: &ToolResult) -> String {
    r.text()
}

/// The ref of the first snapshot line containing `needle`.
fn ref_of(snapshot: &str, needle: &str) -> String {
    let line = snapshot
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no `{needle}` in snapshot:\n{snapshot}\n"));
    let start = line.find("[ref=").expect("ref") + 5;
    let end = line[start..].find(']').expect("]") + start;
    line[start..end].to_owned()
}

fn details(r: &ToolResult) -> &Map<String, Value> {
    r.details.as_object().expect("details object")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navigate_snapshot_click_fill_and_screenshot() {
    let f = fixture().await;
    let nav = f
        .ok(json!({"action": "open", "targetUrl": f.url("/form")}))
        .await;
    assert_eq!(details(&nav)["title"], "Form page");
    assert_eq!(details(&nav)["readyState"], "complete");

    let snap = f.ok(json!({"action": "snapshot"})).await;
    let s = text(&snap);
    assert!(s.contains("heading \"Form\""), "{s}");
    let name = ref_of(&s, "textbox \"Name\"");
    let agree = ref_of(&s, "checkbox \"Agree\"");
    let color = ref_of(&s, "combobox \"Colour\"");
    let send = ref_of(&s, "button \"Send\"");
    let bx = ref_of(&s, "image \"Box\"");

    // Fill a form: text, checkbox, select.
    f.ok(
        json!({"action": "act", "request": {"kind": "fill", "fields": [
            {"ref": name, "value": "Ada"},
            {"ref": agree, "value": true},
            {"ref": color, "value": "Green"},
        ]}}),
    )
    .await;
    // Click the button by ref.
    f.ok(json!({"action": "act", "request": {"kind": "click", "ref": send}}))
        .await;
    f.ok(json!({"action": "act", "request": {"kind": "wait", "text": "Hello Ada agreed g"}}))
        .await;
    let after = text(&f.ok(json!({"action": "snapshot"})).await);
    assert!(after.contains("Hello Ada agreed g"), "{after}");
    // The click's console.log is in the console.
    let console = f.ok(json!({"action": "console"})).await;
    assert!(text(&console).contains("sent"), "{}", text(&console));

    // Typing appends through the keyboard path.
    f.ok(json!({"action": "act", "request": {"kind": "type", "ref": name, "text": " L"}}))
        .await;
    let typed = f
        .ok(json!({"action": "act", "request": {"kind": "evaluate", "fn": "() => document.getElementById('name').value"}}))
        .await;
    assert_eq!(details(&typed)["result"]["result"], "Ada L");

    // A stale ref is a typed input error.
    let err = f
        .call(json!({"action": "act", "request": {"kind": "click", "ref": "e9999"}}))
        .await
        .expect_err("unknown ref");
    assert_eq!(err.code(), ToolErrorCode::BrowserUnknownRef);

    // Screenshot of one element: a PNG of its CSS size.
    let shot = f.ok(json!({"action": "screenshot", "ref": bx})).await;
    let png = png_of(&shot);
    assert_eq!((png.width(), png.height()), (200, 100));
    assert_eq!(png.get_pixel(100, 50).0[..3], [0xcc, 0x33, 0x33]);
    // The viewport: the window's inner size.
    let inner = f
        .ok(json!({"action": "act", "request": {"kind": "evaluate", "fn": "() => [innerWidth, innerHeight]"}}))
        .await;
    let shot = f.ok(json!({"action": "screenshot"})).await;
    let png = png_of(&shot);
    assert_eq!(
        json!([png.width(), png.height()]),
        details(&inner)["result"]["result"]
    );

    // pdf lands in the workspace through the bridge.
    let pdf = f.ok(json!({"action": "pdf"})).await;
    let path = details(&pdf)["path"].as_str().unwrap().to_owned();
    let rel = path.strip_prefix("/workspace/").expect("in workspace");
    let bytes = std::fs::read(f.ws.join(rel)).expect("pdf written");
    assert!(bytes.starts_with(b"%PDF-"));

    let tabs = f.ok(json!({"action": "tabs"})).await;
    assert!(text(&tabs).contains("Form page"));
    let status = f.ok(json!({"action": "status"})).await;
    assert_eq!(details(&status)["running"], true);
    let stop = f.ok(json!({"action": "stop"})).await;
    assert_eq!(details(&stop)["stopped"], true);
}

fn png_of(r: &ToolResult) -> image::RgbaImage {
    let Some(ContentBlock::Image { data, mime_type }) = r.content.first() else {
        panic!("no image block: {r:?}")
    };
    assert_eq!(mime_type, "image/png");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .expect("base64");
    image::load_from_memory_with_format(&bytes, image::ImageFormat::Png)
        .expect("PNG decodes")
        .to_rgba8()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssrf_refused_at_navigation_and_for_redirects() {
    let f = fixture().await;
    // The metadata address: refused before anything loads.
    let err = f
        .call(json!({"action": "open", "targetUrl": "http://169.254.169.254/latest/meta-data/"}))
        .await
        .expect_err("metadata");
    assert_eq!(err.code(), ToolErrorCode::WebMetadataBlocked, "{err:?}");
    // A name that resolves to loopback, not on the allowlist.
    let err = f
        .call(json!({"action": "open", "targetUrl": format!("http://private.test:{}/", f.private.port)}))
        .await
        .expect_err("loopback name");
    assert_eq!(err.code(), ToolErrorCode::WebSsrfBlocked, "{err:?}");
    assert!(err.message().contains("private.test"), "{}", err.message());
    // file: and other schemes.
    let err = f
        .call(json!({"action": "open", "targetUrl": "file:///etc/passwd"}))
        .await
        .expect_err("file");
    assert_eq!(err.code(), ToolErrorCode::InputInvalid);

    // An allowed page that redirects to a refused one: the hop is refused.
    f.ok(json!({"action": "open", "targetUrl": f.url("/form")}))
        .await;
    let err = f
        .call(json!({"action": "navigate", "targetUrl": f.url("/to-private")}))
        .await
        .expect_err("redirect to private");
    assert_eq!(err.code(), ToolErrorCode::WebSsrfBlocked, "{err:?}");
    let err = f
        .call(json!({"action": "navigate", "targetUrl": f.url("/to-metadata")}))
        .await
        .expect_err("redirect to metadata");
    assert_eq!(err.code(), ToolErrorCode::WebMetadataBlocked, "{err:?}");
    assert_eq!(f.private.hits.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssrf_refused_for_sub_resources() {
    let f = fixture().await;
    let nav = f
        .ok(json!({"action": "open", "targetUrl": f.url("/embeds")}))
        .await;
    assert_eq!(details(&nav)["title"], "Embeds");
    let broken = f
        .ok(json!({"action": "act", "request": {"kind": "evaluate", "fn": "() => [...document.images].map(i => i.complete && i.naturalWidth === 0)"}}))
        .await;
    assert_eq!(
        details(&broken)["result"]["result"],
        json!([true, true, true])
    );
    // Nothing reached the private server, and the console says why.
    assert_eq!(f.private.hits.load(Ordering::SeqCst), 0);
    let console = text(&f.ok(json!({"action": "console", "level": "error"})).await);
    assert!(console.contains("secret.png"), "{console}");
    assert!(console.contains("metadata_blocked"), "{console}");
    assert!(console.contains("private.test"), "{console}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bounded_time_for_bad_pages() {
    let f = fixture().await;
    f.ok(json!({"action": "start"})).await;
    // A page that never answers: the navigation limit (4 s here).
    let started = std::time::Instant::now();
    let err = f
        .call(json!({"action": "navigate", "targetUrl": f.url("/hang")}))
        .await
        .expect_err("hang");
    assert_eq!(err.code(), ToolErrorCode::BrowserTimeout, "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(15));
    // An endless redirect chain stops with Chromium's redirect limit.
    let err = f
        .call(json!({"action": "navigate", "targetUrl": f.url("/loop")}))
        .await
        .expect_err("loop");
    assert_eq!(err.code(), ToolErrorCode::BrowserFailed, "{err:?}");
    assert!(err.message().contains("REDIRECT"), "{}", err.message());
    // The whole call is bounded by timeoutMs too.
    let err = f
        .call(json!({"action": "navigate", "targetUrl": f.url("/hang"), "timeoutMs": 500}))
        .await
        .expect_err("call limit");
    assert_eq!(err.code(), ToolErrorCode::BrowserTimeout, "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxed_run_never_gets_the_host_browser() {
    let f = fixture().await;
    let ctx = ToolContext::new("main", "s").sandboxed(true);
    let err = f
        .call_in(&ctx, json!({"action": "start"}))
        .await
        .expect_err("sandboxed");
    assert_eq!(err.code(), ToolErrorCode::BrowserSandboxUnsupported);
    assert!(
        err.message().contains("sandbox.browser"),
        "{}",
        err.message()
    );
    let err = f
        .call(json!({"action": "status", "target": "sandbox"}))
        .await
        .expect_err("target sandbox");
    assert_eq!(err.code(), ToolErrorCode::BrowserSandboxUnsupported);
    // Nothing was started.
    let status = f.ok(json!({"action": "status"})).await;
    assert_eq!(details(&status)["running"], false);
}

/// Call `status` until a download is saved or `refused` downloads were
/// refused (or 10 s pass).
async fn wait_download(f: &Fixture, refused: u64) -> ToolResult {
    for _ in 0..100 {
        let status = f.ok(json!({"action": "status"})).await;
        let d = details(&status);
        if d.contains_key("downloads") || d["refusedDownloads"] == json!(refused) {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no download finished or was refused within 10 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downloads_land_in_the_workspace_under_the_cap() {
    let f = fixture_with(BrowserSettings {
        max_download_bytes: 1024 * 1024,
        ..BrowserSettings::default()
    })
    .await;
    f.ok(json!({"action": "start"})).await;
    // A small file: copied into the workspace under a generated name,
    // its temp file gone.
    let _ = f
        .call(json!({"action": "navigate", "targetUrl": f.url("/download")}))
        .await;
    let status = wait_download(&f, 99).await;
    let saved = details(&status)["downloads"]
        .as_array()
        .expect("downloads")
        .clone();
    assert_eq!(saved.len(), 1, "{saved:?}");
    assert_eq!(saved[0]["bytes"], json!(4096), "{saved:?}");
    let path = saved[0]["path"].as_str().expect("path");
    assert!(path.starts_with("/workspace/downloads/"), "{path}");
    assert!(path.ends_with("-big.bin"), "{path}");
    assert!(text(&status).contains(path), "{}", text(&status));
    let rel = path.trim_start_matches("/workspace/");
    let on_disk = std::fs::read(f.ws.join(rel)).expect("downloaded file in the workspace");
    assert_eq!(on_disk, vec![b'x'; 4096]);
    let br = f.tool_browser().await;
    let temp = br.download_dir().to_path_buf();
    assert!(walk(&temp).is_empty(), "{:?}", walk(&temp));

    // 16 MiB against a 1 MiB cap (and a name that tries to climb out):
    // cancelled, deleted, nothing in the workspace or the temp dir.
    let _ = f
        .call(json!({"action": "navigate", "targetUrl": f.url("/huge")}))
        .await;
    let status = wait_download(&f, 1).await;
    let d = details(&status);
    assert!(!d.contains_key("downloads"), "{d:?}");
    assert_eq!(d["refusedDownloads"], json!(1), "{d:?}");
    let reason = d["refusedDownloadList"][0]["reason"]
        .as_str()
        .expect("reason");
    assert!(
        reason.contains("download limit of 1048576 bytes"),
        "{reason}"
    );
    // Late writes after the cancel are deleted too.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let _ = f.ok(json!({"action": "status"})).await;
    assert!(walk(&temp).is_empty(), "{:?}", walk(&temp));
    let files = walk(&f.ws);
    assert_eq!(files.len(), 1, "{files:?}");
    let stray: Vec<_> = walk(f._dir.path())
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("huge"))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");

    // 16 MiB with no size announced: cancelled once the received bytes
    // pass the cap, and deleted.
    let _ = f
        .call(json!({"action": "navigate", "targetUrl": f.url("/stream")}))
        .await;
    let status = wait_download(&f, 2).await;
    let d = details(&status);
    assert!(!d.contains_key("downloads"), "{d:?}");
    assert_eq!(d["refusedDownloads"], json!(2), "{d:?}");
    let reason = d["refusedDownloadList"][1]["reason"]
        .as_str()
        .expect("reason");
    assert!(reason.contains("received so far"), "{reason}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let _ = f.ok(json!({"action": "status"})).await;
    assert!(walk(&temp).is_empty(), "{:?}", walk(&temp));
    assert_eq!(walk(&f.ws).len(), 1);

    // A download from an address the guard refuses is never fetched.
    let before = f.private.hits.load(Ordering::SeqCst);
    let _ = f
        .call(json!({"action": "navigate", "targetUrl": format!("http://127.0.0.2:{}/file.bin", f.private.port)}))
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let status = f.ok(json!({"action": "status"})).await;
    assert!(!details(&status).contains_key("downloads"));
    assert_eq!(f.private.hits.load(Ordering::SeqCst), before);
    assert_eq!(walk(&f.ws).len(), 1);
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() && !p.is_symlink() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn download_names_are_one_generated_component() {
    use talon_browser::download_file_name;
    assert_eq!(
        download_file_name("report.pdf", "1"),
        "downloads/1-report.pdf"
    );
    assert_eq!(
        download_file_name("../../etc/passwd", "1"),
        "downloads/1-passwd"
    );
    assert_eq!(
        download_file_name("..\\..\\x.exe", "1"),
        "downloads/1-x.exe"
    );
    assert_eq!(download_file_name("..", "1"), "downloads/1-download");
    assert_eq!(download_file_name("", "1"), "downloads/1-download");
    assert_eq!(download_file_name(".bashrc", "1"), "downloads/1-bashrc");
    assert_eq!(
        download_file_name("a b\u{202e}c.txt", "1"),
        "downloads/1-a_b_c.txt"
    );
    let long = download_file_name(&"n".repeat(500), "1");
    assert_eq!(long.len(), "downloads/1-".len() + 100);
}
