//! The `browser` tool and the per-agent browsers behind it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use serde_json::{Map, Value, json};
use talon_egress::EgressGuard;
use talon_fs_bridge::{FsBridge, WriteOptions};
use talon_tool_catalog::params::{
    Bounds, StringOpts, read_bool, read_non_negative_integer, read_positive_integer, read_string,
    read_string_array,
};
use talon_tool_catalog::{
    CancellationToken, ContentBlock, Section, Tool, ToolCall, ToolContext, ToolError, ToolFamily,
    ToolResult, ToolSpec, json_result,
};

use crate::browser::{Browser, BrowserSettings, SandboxTarget};
use crate::error::{BrowserError, Result};
use crate::ops::Act;
use crate::sandbox_config::SandboxBrowserConfig;
use crate::snapshot::SnapshotOptions;

/// The largest file `upload` takes from the workspace.
pub const MAX_UPLOAD_BYTES: u64 = 50 * 1024 * 1024;

/// The profile name the tool answers to (OpenClaw's managed profile).
const PROFILE: &str = "openclaw";

/// What a sandboxed run without a sandbox browser is told.
const SANDBOX_REFUSAL: &str = "this session is sandboxed and no sandboxed browser was set up for it, so nothing was started (the host browser is never used for a sandboxed session); use web_fetch, or enable the sandboxed browser: the local backend (`agents.defaults.sandbox.backend: \"local\"`) with `agents.defaults.sandbox.browser.enabled: true`";

/// Which browser a call drives.
#[derive(Debug, Clone, Copy)]
enum Slot<'a> {
    /// The agent's host browser.
    Host(&'a str),
    /// The browser inside a sandbox.
    Sandbox(&'a SandboxBrowser),
}

/// The sandboxed browser of one sandboxed run: where it runs and how
/// (`sandbox.browser`).
#[derive(Debug, Clone)]
pub struct SandboxBrowser {
    /// The run's sandbox.
    pub target: SandboxTarget,
    /// Its `sandbox.browser` settings.
    pub config: SandboxBrowserConfig,
}

/// One Chromium per agent, started on first use, each with its own
/// profile under `<state dir>/browser/<agent>/profile`.
#[derive(Debug)]
pub struct BrowserManager {
    guard: EgressGuard,
    settings: BrowserSettings,
    root: PathBuf,
    browsers: tokio::sync::Mutex<HashMap<String, Arc<Browser>>>,
    /// Sandboxed browsers, by sandbox name (never shared with the host
    /// ones).
    sandboxed: tokio::sync::Mutex<HashMap<String, Arc<Browser>>>,
}

/// A file-name-safe form of an agent id.
fn profile_segment(agent: &str) -> String {
    let mut out = String::new();
    for b in agent.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02x}"));
        }
    }
    if out.is_empty() {
        out.push_str("main");
    }
    out
}

impl BrowserManager {
    /// Browsers vetted by `guard` (the same rules as `web_fetch`), with
    /// profiles under `root` (`<state dir>/browser`).
    pub fn new(guard: EgressGuard, settings: BrowserSettings, root: PathBuf) -> Self {
        BrowserManager {
            guard,
            settings,
            root,
            browsers: tokio::sync::Mutex::new(HashMap::new()),
            sandboxed: tokio::sync::Mutex::new(HashMap::new()),
        }
    }

    /// The running browser of `slot`, if any.
    async fn running_in(&self, slot: Slot<'_>) -> Option<Arc<Browser>> {
        match slot {
            Slot::Host(agent) => self.running(agent).await,
            Slot::Sandbox(sb) => self.sandboxed.lock().await.get(&sb.target.name).cloned(),
        }
    }

    /// The browser of `slot`, started if it is not running.
    async fn browser_in(&self, slot: Slot<'_>) -> Result<Arc<Browser>> {
        let sb = match slot {
            Slot::Host(agent) => return self.browser(agent).await,
            Slot::Sandbox(sb) => sb,
        };
        let mut map = self.sandboxed.lock().await;
        if let Some(b) = map.get(&sb.target.name) {
            if b.alive().await {
                return Ok(Arc::clone(b));
            }
            if let Some(dead) = map.remove(&sb.target.name) {
                dead.shutdown().await;
            }
        }
        let mut settings = self.settings.clone();
        if let Some(t) = sb.config.start_timeout {
            settings.start_timeout = t;
        }
        let b =
            Arc::new(Browser::launch_in_sandbox(&sb.target, self.guard.clone(), settings).await?);
        map.insert(sb.target.name.clone(), Arc::clone(&b));
        Ok(b)
    }

    /// Stop the browser of `slot` (and wait until its process tree is
    /// gone); whether one was running.
    async fn stop_in(&self, slot: Slot<'_>) -> bool {
        let b = match slot {
            Slot::Host(agent) => self.browsers.lock().await.remove(agent),
            Slot::Sandbox(sb) => self.sandboxed.lock().await.remove(&sb.target.name),
        };
        match b {
            Some(b) => {
                b.shutdown().await;
                true
            }
            None => false,
        }
    }

    /// The profile directory of `agent`.
    pub fn profile_dir(&self, agent: &str) -> PathBuf {
        self.root.join(profile_segment(agent)).join("profile")
    }

    /// The running browser of `agent`, if any.
    pub async fn running(&self, agent: &str) -> Option<Arc<Browser>> {
        self.browsers.lock().await.get(agent).cloned()
    }

    /// The browser of `agent`, started if it is not running.
    pub async fn browser(&self, agent: &str) -> Result<Arc<Browser>> {
        let mut map = self.browsers.lock().await;
        if let Some(b) = map.get(agent) {
            if b.alive().await {
                return Ok(Arc::clone(b));
            }
            map.remove(agent);
        }
        let b = Arc::new(
            Browser::launch(
                &self.profile_dir(agent),
                self.guard.clone(),
                self.settings.clone(),
            )
            .await?,
        );
        map.insert(agent.to_owned(), Arc::clone(&b));
        Ok(b)
    }

    /// Stop the browser of `agent`; whether one was running.
    pub async fn stop(&self, agent: &str) -> bool {
        let b = self.browsers.lock().await.remove(agent);
        match b {
            Some(b) => {
                b.kill();
                true
            }
            None => false,
        }
    }
}

/// The `browser` tool spec (the catalog's).
pub fn browser_spec() -> ToolSpec {
    ToolSpec::core("browser").unwrap_or_else(|| {
        ToolSpec::new(
            "browser",
            ToolFamily::Core {
                section: Section::Ui,
            },
        )
    })
}

/// The `browser` tool of one run: its agent's browser, files through the
/// run's bridge.
#[derive(Debug, Clone)]
pub struct BrowserTool {
    spec: ToolSpec,
    manager: Arc<BrowserManager>,
    bridge: Arc<dyn FsBridge>,
    sandbox: Option<SandboxBrowser>,
}

impl BrowserTool {
    /// The tool over `manager`, reading and writing workspace files
    /// through `bridge`.
    pub fn new(manager: Arc<BrowserManager>, bridge: Arc<dyn FsBridge>) -> Self {
        BrowserTool {
            spec: browser_spec(),
            manager,
            bridge,
            sandbox: None,
        }
    }

    /// The tool of a sandboxed run: its browser runs inside `sandbox`
    /// (never on the host), files go through the sandbox's bridge.
    pub fn sandboxed(manager: Arc<BrowserManager>, sandbox: SandboxBrowser) -> Self {
        BrowserTool {
            spec: browser_spec(),
            manager,
            bridge: Arc::clone(&sandbox.target.bridge),
            sandbox: Some(sandbox),
        }
    }

    /// Which browser this run drives, or why it gets none.
    fn slot<'a>(
        &'a self,
        ctx: &'a ToolContext,
        target: Option<&str>,
    ) -> std::result::Result<Slot<'a>, ToolError> {
        let Some(sb) = &self.sandbox else {
            if ctx.sandboxed {
                return Err(
                    BrowserError::SandboxUnsupported(SANDBOX_REFUSAL.to_owned()).into_tool_error()
                );
            }
            return match target {
                None | Some("host") => Ok(Slot::Host(&ctx.agent_id)),
                Some("sandbox") => Err(BrowserError::SandboxUnsupported(
                    "this session is not sandboxed, so it has no sandbox browser (`sandbox.browser` applies to sandboxed sessions): omit target or use \"host\"".to_owned(),
                )
                .into_tool_error()),
                Some(other) => Err(BrowserError::input(
                    "target",
                    format!("target `{other}` is not available: use \"host\" (or omit target)"),
                )
                .into_tool_error()),
            };
        };
        let backend = sb.target.launcher.id();
        if backend != "local" {
            return Err(BrowserError::SandboxUnsupported(format!(
                "this session's sandbox runs on the `{backend}` backend, which has no browser in this version of Talon (a browser container is not implemented); the sandboxed browser runs only with the local (bubblewrap) backend: set `agents.defaults.sandbox.backend` to \"local\" with `sandbox.browser.enabled: true`, or use web_fetch; nothing was started, and the host browser is never used for a sandboxed session"
            ))
            .into_tool_error());
        }
        if !sb.config.enabled {
            return Err(BrowserError::SandboxUnsupported(
                "this session is sandboxed and its sandboxed browser is off: set `agents.defaults.sandbox.browser.enabled: true` (the local backend runs Chromium inside the session's bubblewrap sandbox), or use web_fetch; the host browser is never used for a sandboxed session".to_owned(),
            )
            .into_tool_error());
        }
        match target {
            None | Some("sandbox") => Ok(Slot::Sandbox(sb)),
            Some("host") => Err(BrowserError::SandboxUnsupported(
                "a sandboxed session never drives the host browser (`sandbox.browser.allowHostControl` is not supported by Talon): omit target or use \"sandbox\"".to_owned(),
            )
            .into_tool_error()),
            Some(other) => Err(BrowserError::input(
                "target",
                format!("target `{other}` is not available: use \"sandbox\" (or omit target)"),
            )
            .into_tool_error()),
        }
    }

    /// The browser of `slot` for `action`: started on first use, unless
    /// the sandbox says `autoStart: false` (then only `start` starts it).
    async fn get(
        &self,
        slot: Slot<'_>,
        action: &str,
    ) -> std::result::Result<Arc<Browser>, ToolError> {
        if let Slot::Sandbox(sb) = slot
            && !sb.config.auto_start
            && action != "start"
            && let None = self.manager.running_in(slot).await
        {
            return Err(BrowserError::Unavailable(
                "the sandbox browser is not running and `sandbox.browser.autoStart` is false: call the `start` action first".to_owned(),
            )
            .into_tool_error());
        }
        self.manager
            .browser_in(slot)
            .await
            .map_err(BrowserError::into_tool_error)
    }
}

fn ok(v: Value) -> ToolResult {
    json_result(v)
}

fn string(
    params: &Map<String, Value>,
    key: &str,
) -> std::result::Result<Option<String>, ToolError> {
    read_string(params, key, StringOpts::default())
}

#[async_trait::async_trait]
impl Tool for BrowserTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(
        &self,
        call: &ToolCall,
        ctx: &ToolContext,
        abort: &CancellationToken,
    ) -> std::result::Result<ToolResult, ToolError> {
        let p = &call.params;
        let action = read_string(p, "action", StringOpts::required())?.unwrap_or_default();
        let target_param = string(p, "target")?;
        let slot = self.slot(ctx, target_param.as_deref())?;
        if let Some(profile) = string(p, "profile")?
            && profile != PROFILE
        {
            return Err(BrowserError::input(
                "profile",
                format!(
                    "unknown profile `{profile}`: the only profile is `{PROFILE}` (one per agent)"
                ),
            )
            .into_tool_error());
        }
        let limit = match read_positive_integer(p, "timeoutMs", Bounds::inclusive(1.0, 300_000.0))?
        {
            Some(ms) => Duration::from_millis(ms),
            None => Duration::from_secs(120),
        };
        let work = self.run(&action, p, slot);
        let result = tokio::select! {
            _ = abort.cancelled() => Err(BrowserError::Aborted.into_tool_error()),
            r = tokio::time::timeout(limit, work) => match r {
                Ok(r) => r,
                Err(_) => Err(BrowserError::Timeout {
                    what: format!("browser action `{action}`"),
                    millis: limit.as_millis() as u64,
                }
                .into_tool_error()),
            },
        };
        // Finished downloads go into the workspace after any action.
        let mut result = result?;
        if let Some(br) = self.manager.running_in(slot).await {
            let saved = self.save_downloads(&br).await;
            if !saved.is_empty() {
                let lines: Vec<String> = saved
                    .iter()
                    .map(|d| match (d.get("path"), d.get("error")) {
                        (Some(path), _) => format!(
                            "Downloaded {} into the workspace: {} ({} bytes).",
                            d["url"].as_str().unwrap_or(""),
                            path.as_str().unwrap_or(""),
                            d["bytes"]
                        ),
                        (None, err) => format!(
                            "Download of {} not saved: {}",
                            d["url"].as_str().unwrap_or(""),
                            err.and_then(Value::as_str).unwrap_or("")
                        ),
                    })
                    .collect();
                result.content.push(ContentBlock::Text {
                    text: lines.join("\n"),
                });
                match result.details.as_object_mut() {
                    Some(obj) => {
                        obj.insert("downloads".to_owned(), Value::Array(saved));
                    }
                    None => {
                        result.details = json!({ "result": result.details, "downloads": saved });
                    }
                }
            }
        }
        Ok(result)
    }
}

/// The workspace name of a download: `downloads/<stamp>-<name>`, where
/// `<name>` is the page's suggestion cut to its last component and to
/// `[A-Za-z0-9._-]` (other characters become `_`, no leading dot, at
/// most 100 bytes; `download` when nothing is left). Never a path from
/// the page.
pub fn download_file_name(suggested: &str, stamp: &str) -> String {
    let last = suggested.rsplit(['/', '\\']).next().unwrap_or("");
    let mut name: String = last
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    name = name.trim_start_matches('.').to_owned();
    name.truncate(100);
    if name.is_empty() || name.chars().all(|c| c == '_' || c == '.') {
        name = "download".to_owned();
    }
    format!("downloads/{stamp}-{name}")
}

impl BrowserTool {
    /// Copy each finished download into the workspace through the
    /// bridge (a new file, never an overwrite), delete its temp file,
    /// and describe what happened.
    async fn save_downloads(&self, br: &Browser) -> Vec<Value> {
        let mut out = Vec::new();
        for (i, d) in br.take_finished_downloads().into_iter().enumerate() {
            let path = download_file_name(&d.suggested_name, &format!("{}-{i}", stamp()));
            let bytes = br.read_download(&d).await;
            br.discard_download(&d).await;
            let saved = match bytes {
                Ok(bytes) => self
                    .bridge
                    .write(
                        &path,
                        &bytes,
                        WriteOptions {
                            create_parents: true,
                            create_new: true,
                        },
                    )
                    .await
                    .map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            out.push(match saved {
                Ok(report) => json!({
                    "url": d.url,
                    "path": report.container_path,
                    "bytes": report.bytes,
                }),
                Err(error) => json!({ "url": d.url, "error": error }),
            });
        }
        out
    }
}

impl BrowserTool {
    async fn run(
        &self,
        action: &str,
        p: &Map<String, Value>,
        slot: Slot<'_>,
    ) -> std::result::Result<ToolResult, ToolError> {
        let target = string(p, "targetId")?;
        let target = target.as_deref();
        let m = &self.manager;
        let e = BrowserError::into_tool_error;
        match action {
            "status" => {
                let running = m.running_in(slot).await;
                let mut out = json!({
                    "running": running.is_some(),
                    "profile": PROFILE,
                    "profileDir": profile_label(m, slot),
                    "headless": true,
                    "target": match slot { Slot::Host(_) => "host", Slot::Sandbox(_) => "sandbox" },
                });
                if let Some(br) = running {
                    out["version"] = json!(br.version());
                    out["uptimeMs"] = json!(br.uptime().as_millis() as u64);
                    out["tabs"] = json!(br.tabs().await.map(|t| t.len()).unwrap_or(0));
                    out["refusedRequests"] = json!(br.blocked_requests().len());
                    out["refusedDownloads"] = json!(br.refused_downloads().len());
                    out["refusedDownloadList"] = json!(
                        br.refused_downloads()
                            .iter()
                            .map(|d| json!({ "url": d.url, "reason": d.reason }))
                            .collect::<Vec<_>>()
                    );
                    out["downloadsInProgress"] = json!(br.downloads_in_progress());
                }
                Ok(ok(out))
            }
            "start" => {
                let br = self.get(slot, action).await?;
                Ok(ok(json!({
                    "running": true,
                    "version": br.version(),
                    "profile": PROFILE,
                    "profileDir": br.profile_dir().display().to_string(),
                })))
            }
            "stop" => Ok(ok(json!({ "stopped": m.stop_in(slot).await }))),
            "profiles" => Ok(ok(json!({
                "profiles": [{
                    "name": PROFILE,
                    "profileDir": profile_label(m, slot),
                    "running": m.running_in(slot).await.is_some(),
                }]
            }))),
            "tabs" => {
                let br = self.get(slot, action).await?;
                let mut tabs = br.tabs().await.map_err(e)?;
                if let Some(n) = read_positive_integer(p, "limit", Bounds::default())? {
                    tabs.truncate(n as usize);
                }
                Ok(ok(json!({
                    "tabs": tabs.iter().map(|t| json!({
                        "targetId": t.target_id, "url": t.url, "title": t.title, "current": t.current,
                    })).collect::<Vec<_>>()
                })))
            }
            "open" | "navigate" => {
                let url = read_string(p, "targetUrl", StringOpts::required())?.unwrap_or_default();
                let br = self.get(slot, action).await?;
                let loaded = if action == "open" {
                    br.open(&url).await
                } else {
                    br.navigate(target, &url).await
                }
                .map_err(e)?;
                Ok(ok(json!({
                    "targetId": loaded.target_id,
                    "url": loaded.url,
                    "title": loaded.title,
                    "readyState": loaded.ready_state,
                })))
            }
            "focus" => {
                let id = read_string(p, "targetId", StringOpts::required())?.unwrap_or_default();
                let br = self.get(slot, action).await?;
                br.focus(&id).await.map_err(e)?;
                Ok(ok(json!({ "focused": id })))
            }
            "close" => {
                let br = self.get(slot, action).await?;
                let id = br.close_tab(target).await.map_err(e)?;
                Ok(ok(json!({ "closed": id })))
            }
            "snapshot" => {
                let br = self.get(slot, action).await?;
                let mut options = SnapshotOptions::default();
                if let Some(n) =
                    read_positive_integer(p, "maxChars", Bounds::inclusive(100.0, 1_000_000.0))?
                {
                    options.max_chars = n as usize;
                }
                options.interactive = read_bool(p, "interactive")?.unwrap_or(false);
                if let Some(d) = read_non_negative_integer(p, "depth", Bounds::default())? {
                    options.max_depth = Some(d as usize);
                }
                if string(p, "selector")?.is_some() || string(p, "frame")?.is_some() {
                    return Err(BrowserError::input(
                        "selector",
                        "selector and frame scoping are not supported; take the whole-page snapshot (narrow it with interactive or depth)",
                    )
                    .into_tool_error());
                }
                let (snap, url, title) = br.snapshot(target, options).await.map_err(e)?;
                let text = format!("Page: {title}\nURL: {url}\n\n{}", snap.text);
                Ok(ToolResult {
                    content: vec![ContentBlock::Text { text }],
                    details: json!({
                        "url": url,
                        "title": title,
                        "refs": snap.refs.len(),
                        "truncated": snap.truncated,
                    }),
                    status: Default::default(),
                })
            }
            "screenshot" => {
                let br = self.get(slot, action).await?;
                let jpeg = match string(p, "type")?.as_deref() {
                    None | Some("png") => false,
                    Some("jpeg") => true,
                    Some(other) => {
                        return Err(ToolError::input(
                            "type",
                            format!("type `{other}` is not png or jpeg"),
                        ));
                    }
                };
                let full = read_bool(p, "fullPage")?.unwrap_or(false);
                let element = string(p, "ref")?;
                let bytes = br
                    .screenshot(target, full, element.as_deref(), jpeg)
                    .await
                    .map_err(e)?;
                let mime = if jpeg { "image/jpeg" } else { "image/png" };
                Ok(ToolResult {
                    content: vec![ContentBlock::Image {
                        data: base64::engine::general_purpose::STANDARD.encode(&bytes),
                        mime_type: mime.to_owned(),
                    }],
                    details: json!({ "bytes": bytes.len(), "mimeType": mime, "fullPage": full, "ref": element }),
                    status: Default::default(),
                })
            }
            "console" => {
                let br = self.get(slot, action).await?;
                let limit =
                    read_positive_integer(p, "limit", Bounds::default())?.unwrap_or(100) as usize;
                let level = string(p, "level")?;
                let entries = br.console(target, level.as_deref(), limit).map_err(e)?;
                Ok(ok(json!({
                    "entries": entries.iter().map(|c| json!({
                        "level": c.level, "text": c.text, "source": c.source,
                    })).collect::<Vec<_>>()
                })))
            }
            "pdf" => {
                let br = self.get(slot, action).await?;
                let bytes = br.pdf(target).await.map_err(e)?;
                let path = format!("browser/page-{}.pdf", stamp());
                let report = self
                    .bridge
                    .write(
                        &path,
                        &bytes,
                        WriteOptions {
                            create_parents: true,
                            create_new: true,
                        },
                    )
                    .await
                    .map_err(|err| talon_tools::fs_error("action", err))?;
                Ok(ToolResult {
                    content: vec![ContentBlock::Text {
                        text: format!(
                            "MEDIA:{}\nSaved the page as PDF ({} bytes).",
                            report.container_path, report.bytes
                        ),
                    }],
                    details: json!({ "path": report.container_path, "bytes": report.bytes }),
                    status: Default::default(),
                })
            }
            "upload" => {
                let paths = read_string_array(p, "paths", true, None)?.unwrap_or_default();
                let input = match string(p, "inputRef")? {
                    Some(r) => r,
                    None => string(p, "ref")?.ok_or_else(|| {
                        ToolError::input(
                            "inputRef",
                            "inputRef required: the ref of the file input (from a snapshot)",
                        )
                    })?,
                };
                let br = self.get(slot, action).await?;
                let local = if br.sandboxed() {
                    // Chromium sees the sandbox's own files: each path as
                    // the sandbox names it, checked through its bridge.
                    let mut local = Vec::new();
                    for path in &paths {
                        let stat = self
                            .bridge
                            .stat(path)
                            .await
                            .map_err(|err| talon_tools::fs_error("paths", err))?;
                        if stat.size > MAX_UPLOAD_BYTES {
                            return Err(ToolError::input(
                                "paths",
                                format!(
                                    "{path} is {} bytes, over the upload limit of {MAX_UPLOAD_BYTES}",
                                    stat.size
                                ),
                            ));
                        }
                        let resolved = self
                            .bridge
                            .resolve(path, talon_fs_bridge::Access::Read)
                            .await
                            .map_err(|err| talon_tools::fs_error("paths", err))?;
                        local.push(PathBuf::from(resolved.container_path));
                    }
                    local
                } else {
                    self.stage_uploads(&br, &paths).await?
                };
                br.upload(target, &input, &local).await.map_err(e)?;
                Ok(ok(json!({ "uploaded": paths, "inputRef": input })))
            }
            "dialog" => {
                let accept = read_bool(p, "accept")?.unwrap_or(true);
                let prompt = read_string(
                    p,
                    "promptText",
                    StringOpts::default().allow_empty().untrimmed(),
                )?;
                let br = self.get(slot, action).await?;
                let answered = br.dialog(target, accept, prompt).await.map_err(e)?;
                Ok(ok(match answered {
                    Some(d) => {
                        json!({ "handled": true, "type": d.kind, "message": d.message, "accept": accept })
                    }
                    None => json!({ "handled": false, "armed": true, "accept": accept }),
                }))
            }
            "act" => {
                let request = match p.get("request") {
                    Some(Value::Object(r)) => r,
                    _ => {
                        return Err(ToolError::input(
                            "request",
                            "request required for act: an object with kind (click, type, press, hover, select, fill, wait, resize, evaluate, close)",
                        ));
                    }
                };
                let kind = read_string(
                    request,
                    "kind",
                    StringOpts::required().label("request.kind"),
                )?
                .unwrap_or_default();
                let target = match string(request, "targetId")? {
                    Some(t) => Some(t),
                    None => target.map(str::to_owned),
                };
                let br = self.get(slot, action).await?;
                if kind == "close" {
                    let id = br.close_tab(target.as_deref()).await.map_err(e)?;
                    return Ok(ok(json!({ "closed": id })));
                }
                let act = parse_act(&kind, request)?;
                let report = br.act(target.as_deref(), act).await.map_err(e)?;
                let mut out = json!({ "kind": kind, "result": report });
                if let Some(d) = br.pending_dialog(target.as_deref()) {
                    out["dialog"] = json!({ "type": d.kind, "message": d.message, "hint": "answer it with action dialog" });
                }
                Ok(ok(out))
            }
            other => Err(ToolError::input(
                "action",
                format!(
                    "unknown action `{other}`: use status, start, stop, profiles, tabs, open, focus, close, snapshot, screenshot, navigate, console, pdf, upload, dialog or act"
                ),
            )),
        }
    }
}

/// The profile directory a status names.
fn profile_label(m: &BrowserManager, slot: Slot<'_>) -> String {
    match slot {
        Slot::Host(agent) => m.profile_dir(agent).display().to_string(),
        Slot::Sandbox(_) => "(inside the sandbox's private /tmp)".to_owned(),
    }
}

impl BrowserTool {
    /// Copy the files to upload from the workspace (through the bridge)
    /// into the host browser's private runtime dir.
    async fn stage_uploads(
        &self,
        br: &Browser,
        paths: &[String],
    ) -> std::result::Result<Vec<PathBuf>, ToolError> {
        let dir = br.runtime_dir.path().join("uploads").join(stamp());
        std::fs::create_dir_all(&dir).map_err(|err| {
            BrowserError::Io(format!("cannot create the upload dir: {err}")).into_tool_error()
        })?;
        let mut local = Vec::new();
        for (i, path) in paths.iter().enumerate() {
            let file = self
                .bridge
                .read(path, Some(MAX_UPLOAD_BYTES + 1))
                .await
                .map_err(|err| talon_tools::fs_error("paths", err))?;
            if file.truncated || file.total_size > MAX_UPLOAD_BYTES {
                return Err(ToolError::input(
                    "paths",
                    format!(
                        "{path} is {} bytes, over the upload limit of {MAX_UPLOAD_BYTES}",
                        file.total_size
                    ),
                ));
            }
            let name = Path::new(path)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| format!("file-{i}"));
            let sub = dir.join(i.to_string());
            std::fs::create_dir_all(&sub)
                .and_then(|()| std::fs::write(sub.join(&name), &file.bytes))
                .map_err(|err| {
                    BrowserError::Io(format!("cannot stage {path}: {err}")).into_tool_error()
                })?;
            local.push(sub.join(name));
        }
        Ok(local)
    }
}

fn stamp() -> String {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    format!("{ms}-{}", std::process::id())
}

fn req_ref(r: &Map<String, Value>) -> std::result::Result<String, ToolError> {
    read_string(r, "ref", StringOpts::required().label("request.ref"))
        .map(Option::unwrap_or_default)
        .map_err(|e| e.with_param("request.ref"))
}

/// An `act` request as an [`Act`].
fn parse_act(kind: &str, r: &Map<String, Value>) -> std::result::Result<Act, ToolError> {
    Ok(match kind {
        "click" => Act::Click {
            r#ref: req_ref(r)?,
            double: read_bool(r, "doubleClick")?.unwrap_or(false),
            button: match read_string(r, "button", StringOpts::default())?.as_deref() {
                None | Some("left") => "left".to_owned(),
                Some("right") => "right".to_owned(),
                Some("middle") => "middle".to_owned(),
                Some(other) => {
                    return Err(ToolError::input(
                        "request.button",
                        format!("button `{other}` is not left, right or middle"),
                    ));
                }
            },
        },
        "type" => Act::Type {
            r#ref: read_string(r, "ref", StringOpts::default())?,
            text: read_string(
                r,
                "text",
                StringOpts::required().untrimmed().label("request.text"),
            )?
            .unwrap_or_default(),
            submit: read_bool(r, "submit")?.unwrap_or(false),
        },
        "press" => Act::Press {
            key: read_string(
                r,
                "key",
                StringOpts::required().untrimmed().label("request.key"),
            )?
            .unwrap_or_default(),
        },
        "hover" => Act::Hover { r#ref: req_ref(r)? },
        "select" => Act::Select {
            r#ref: req_ref(r)?,
            values: read_string_array(r, "values", true, Some("request.values"))?
                .unwrap_or_default(),
        },
        "fill" => {
            let fields = match r.get("fields") {
                Some(Value::Array(items)) if !items.is_empty() => items,
                _ => {
                    return Err(ToolError::input(
                        "request.fields",
                        "request.fields required: a list of {ref, value}",
                    ));
                }
            };
            let mut out = Vec::new();
            for (i, f) in fields.iter().enumerate() {
                let r = f.get("ref").and_then(Value::as_str).ok_or_else(|| {
                    ToolError::input("request.fields", format!("request.fields[{i}] has no ref"))
                })?;
                let v = f.get("value").cloned().unwrap_or(Value::Null);
                out.push((r.to_owned(), v));
            }
            Act::Fill { fields: out }
        }
        "wait" => Act::Wait {
            time_ms: read_non_negative_integer(r, "timeMs", Bounds::default())?,
            text: read_string(r, "text", StringOpts::default())?,
            text_gone: read_string(r, "textGone", StringOpts::default())?,
        },
        "resize" => Act::Resize {
            width: read_positive_integer(r, "width", Bounds::default())?
                .ok_or_else(|| ToolError::input("request.width", "request.width required"))?
                as u32,
            height: read_positive_integer(r, "height", Bounds::default())?
                .ok_or_else(|| ToolError::input("request.height", "request.height required"))?
                as u32,
        },
        "evaluate" => Act::Evaluate {
            function: read_string(
                r,
                "fn",
                StringOpts::required().untrimmed().label("request.fn"),
            )?
            .unwrap_or_default(),
        },
        "drag" => {
            return Err(ToolError::input(
                "request.kind",
                "drag is not supported by this version of Talon; use click, or evaluate a script",
            ));
        }
        other => {
            return Err(ToolError::input(
                "request.kind",
                format!(
                    "unknown act kind `{other}`: use click, type, press, hover, select, fill, wait, resize, evaluate or close"
                ),
            ));
        }
    })
}
