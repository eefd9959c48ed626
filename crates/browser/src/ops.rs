//! What the tool does with a running browser: tabs, navigation,
//! snapshots, screenshots, interactions, console, PDF, uploads, dialogs.
//! Every step is one or more DevTools calls, each bounded by the action
//! time limit; waiting for a page is bounded by the navigation limit.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

use crate::browser::{Browser, ConsoleEntry, PendingDialog, vet_url};
use crate::error::{BrowserError, Result};
use crate::snapshot::{Snapshot, SnapshotOptions, render};

/// The largest screenshot or PDF taken (decoded bytes).
pub const MAX_CAPTURE_BYTES: usize = 32 * 1024 * 1024;

/// One open tab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabInfo {
    /// Its id (`targetId`).
    pub target_id: String,
    /// Its URL.
    pub url: String,
    /// Its title.
    pub title: String,
    /// Whether it is the tab actions default to.
    pub current: bool,
}

/// Where a navigation ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    /// The tab.
    pub target_id: String,
    /// The URL after redirects.
    pub url: String,
    /// The title.
    pub title: String,
    /// `complete`, or `interactive` when a sub-resource was still loading
    /// at the time limit.
    pub ready_state: String,
}

/// One interaction (`act`).
#[derive(Debug, Clone, PartialEq)]
pub enum Act {
    /// Click an element.
    Click {
        /// Its ref.
        r#ref: String,
        /// Two clicks.
        double: bool,
        /// `left`, `right`, `middle`.
        button: String,
    },
    /// Type text into an element (focus, insert), optionally pressing Enter.
    Type {
        /// Its ref.
        r#ref: Option<String>,
        /// The text.
        text: String,
        /// Press Enter afterwards.
        submit: bool,
    },
    /// Press a key in the focused element.
    Press {
        /// The key (`Enter`, `Tab`, `ArrowDown`, `a`).
        key: String,
    },
    /// Move the mouse over an element.
    Hover {
        /// Its ref.
        r#ref: String,
    },
    /// Select options of a `<select>` by value or label.
    Select {
        /// Its ref.
        r#ref: String,
        /// Values or labels.
        values: Vec<String>,
    },
    /// Set several fields at once.
    Fill {
        /// `(ref, value)`: a string for text fields and selects, a boolean
        /// for checkboxes and radios.
        fields: Vec<(String, Value)>,
    },
    /// Wait for time, text, or text to go.
    Wait {
        /// Milliseconds to wait.
        time_ms: Option<u64>,
        /// Text that must appear.
        text: Option<String>,
        /// Text that must disappear.
        text_gone: Option<String>,
    },
    /// Set the viewport size.
    Resize {
        /// Width.
        width: u32,
        /// Height.
        height: u32,
    },
    /// Evaluate a function in the page and return its value.
    Evaluate {
        /// The function's source.
        function: String,
    },
}

impl Browser {
    async fn call(&self, session: Option<&str>, method: &str, params: Value) -> Result<Value> {
        self.shared
            .cdp
            .call(session, method, params, self.settings.action_timeout)
            .await
    }

    /// The tab `target` (or the current one): its id and session.
    pub(crate) fn tab(&self, target: Option<&str>) -> Result<(String, String)> {
        self.shared.with_state(|s| {
            let id = match target {
                Some(t) => t.to_owned(),
                None => s.current.clone().ok_or(BrowserError::NoCurrentTab)?,
            };
            let session = s
                .tabs
                .get(&id)
                .map(|t| t.session.clone())
                .ok_or_else(|| BrowserError::NoTab(id.clone()))?;
            Ok((id, session))
        })?
    }

    /// The flat DevTools session of `target` (or the current tab), for a
    /// raw call on [`Browser::cdp`].
    pub fn session_of(&self, target: Option<&str>) -> Result<String> {
        self.tab(target).map(|(_, session)| session)
    }

    /// The open tabs, in the order they were opened.
    pub async fn tabs(&self) -> Result<Vec<TabInfo>> {
        let infos = self.call(None, "Target.getTargets", json!({})).await?;
        let (order, current) = self
            .shared
            .with_state(|s| (s.order.clone(), s.current.clone()))?;
        let list = infos
            .get("targetInfos")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        Ok(order
            .into_iter()
            .map(|id| {
                let info = list
                    .iter()
                    .find(|i| i.get("targetId").and_then(Value::as_str) == Some(id.as_str()));
                let field = |k: &str| {
                    info.and_then(|i| i.get(k))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned()
                };
                TabInfo {
                    current: current.as_deref() == Some(id.as_str()),
                    url: field("url"),
                    title: field("title"),
                    target_id: id,
                }
            })
            .collect())
    }

    /// Open a new tab on `url` and make it current.
    pub async fn open(&self, url: &str) -> Result<Loaded> {
        guard_navigation(self, url).await?;
        let created = self
            .call(None, "Target.createTarget", json!({ "url": "about:blank" }))
            .await?;
        let id = created
            .get("targetId")
            .and_then(Value::as_str)
            .ok_or_else(|| BrowserError::Protocol {
                method: "Target.createTarget".to_owned(),
                message: "no targetId in the answer".to_owned(),
            })?
            .to_owned();
        self.wait_attached(&id).await?;
        self.shared.with_state(|s| s.current = Some(id.clone()))?;
        self.navigate(Some(&id), url).await
    }

    /// Make `target` the current tab.
    pub async fn focus(&self, target: &str) -> Result<()> {
        self.tab(Some(target))?;
        self.call(None, "Target.activateTarget", json!({ "targetId": target }))
            .await?;
        self.shared
            .with_state(|s| s.current = Some(target.to_owned()))
    }

    /// Close `target` (or the current tab).
    pub async fn close_tab(&self, target: Option<&str>) -> Result<String> {
        let (id, _) = self.tab(target)?;
        self.call(None, "Target.closeTarget", json!({ "targetId": id }))
            .await?;
        self.shared.with_state(|s| {
            if let Some(tab) = s.tabs.remove(&id) {
                s.sessions.remove(&tab.session);
            }
            s.order.retain(|t| t != &id);
            if s.current.as_deref() == Some(id.as_str()) {
                s.current = s.order.last().cloned();
            }
        })?;
        Ok(id)
    }

    /// Navigate `target` to `url` and wait for the page to load.
    pub async fn navigate(&self, target: Option<&str>, url: &str) -> Result<Loaded> {
        guard_navigation(self, url).await?;
        let (id, session) = self.tab(target)?;
        let s = Some(session.as_str());
        self.shared.with_state(|st| {
            if let Some(tab) = st.tabs.get_mut(&id) {
                tab.refs.clear();
            }
        })?;
        let since = self.shared.with_state(|st| st.blocked.len())?;
        let nav_timeout = self.settings.navigation_timeout;
        let started = Instant::now();
        let answer = match self
            .shared
            .cdp
            .call(s, "Page.navigate", json!({ "url": url }), nav_timeout)
            .await
        {
            Ok(a) => a,
            Err(BrowserError::Timeout { .. }) => {
                let _ = self.call(s, "Page.stopLoading", json!({})).await;
                return Err(BrowserError::Timeout {
                    what: format!("loading {url} (the server sent no response)"),
                    millis: nav_timeout.as_millis() as u64,
                });
            }
            Err(e) => return Err(e),
        };
        if let Some(error) = answer.get("errorText").and_then(Value::as_str) {
            // A hop the guard refused (the URL itself or a redirect).
            let refused = self.shared.with_state(|st| {
                st.blocked
                    .iter()
                    .skip(since.min(st.blocked.len()))
                    .find(|b| {
                        b.resource_type == "Document" && b.target_id.as_deref() == Some(id.as_str())
                    })
                    .map(|b| b.blocked.clone())
            })?;
            if let Some(blocked) = refused {
                return Err(BrowserError::Blocked(blocked));
            }
            return Err(BrowserError::Navigation {
                url: url.to_owned(),
                reason: error.to_owned(),
            });
        }
        let left = nav_timeout.saturating_sub(started.elapsed());
        let ready_state = self.wait_ready(&session, left).await?;
        let (page_url, title) = self.location(&session).await?;
        Ok(Loaded {
            target_id: id,
            url: page_url,
            title,
            ready_state,
        })
    }

    /// Poll `document.readyState` until `complete`, at most `left`.
    async fn wait_ready(&self, session: &str, left: Duration) -> Result<String> {
        let deadline = Instant::now() + left;
        loop {
            let state = self
                .eval_value(session, "document.readyState")
                .await
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            if state == "complete" {
                return Ok(state);
            }
            if Instant::now() >= deadline {
                if state == "interactive" {
                    return Ok(state);
                }
                let _ = self
                    .call(Some(session), "Page.stopLoading", json!({}))
                    .await;
                return Err(BrowserError::Timeout {
                    what: "the page load".to_owned(),
                    millis: left.as_millis() as u64,
                });
            }
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
    }

    async fn location(&self, session: &str) -> Result<(String, String)> {
        let v = self
            .eval_value(session, "[location.href, document.title]")
            .await?;
        let field = |i: usize| v.get(i).and_then(Value::as_str).unwrap_or("").to_owned();
        Ok((field(0), field(1)))
    }

    /// Evaluate `expression` in the page and return its JSON value.
    pub(crate) async fn eval_value(&self, session: &str, expression: &str) -> Result<Value> {
        let r = self
            .call(
                Some(session),
                "Runtime.evaluate",
                json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
            )
            .await?;
        if let Some(ex) = r.get("exceptionDetails") {
            let text = ex
                .get("exception")
                .and_then(|e| e.get("description"))
                .and_then(Value::as_str)
                .or_else(|| ex.get("text").and_then(Value::as_str))
                .unwrap_or("exception");
            return Err(BrowserError::Protocol {
                method: "Runtime.evaluate".to_owned(),
                message: text.chars().take(1000).collect(),
            });
        }
        Ok(r.get("result")
            .and_then(|r| r.get("value"))
            .cloned()
            .unwrap_or(Value::Null))
    }

    /// The accessibility snapshot of `target`; its refs replace the tab's.
    pub async fn snapshot(
        &self,
        target: Option<&str>,
        options: SnapshotOptions,
    ) -> Result<(Snapshot, String, String)> {
        let (id, session) = self.tab(target)?;
        let tree = self
            .call(Some(&session), "Accessibility.getFullAXTree", json!({}))
            .await?;
        let nodes = tree
            .get("nodes")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let snap = render(&nodes, options);
        self.shared.with_state(|s| {
            if let Some(tab) = s.tabs.get_mut(&id) {
                tab.refs = snap.refs.iter().cloned().collect();
            }
        })?;
        let (url, title) = self.location(&session).await?;
        Ok((snap, url, title))
    }

    /// The remote object of `r` in the tab's latest snapshot.
    async fn element(&self, id: &str, session: &str, r: &str) -> Result<String> {
        let backend = self
            .shared
            .with_state(|s| s.tabs.get(id).and_then(|t| t.refs.get(r).copied()))?
            .ok_or_else(|| BrowserError::UnknownRef(r.to_owned()))?;
        let resolved = self
            .call(
                Some(session),
                "DOM.resolveNode",
                json!({ "backendNodeId": backend }),
            )
            .await
            .map_err(|e| match e {
                BrowserError::Protocol { .. } => BrowserError::UnknownRef(r.to_owned()),
                other => other,
            })?;
        resolved
            .get("object")
            .and_then(|o| o.get("objectId"))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| BrowserError::UnknownRef(r.to_owned()))
    }

    async fn call_on(
        &self,
        session: &str,
        object: &str,
        function: &str,
        args: Value,
    ) -> Result<Value> {
        let r = self
            .call(
                Some(session),
                "Runtime.callFunctionOn",
                json!({
                    "objectId": object,
                    "functionDeclaration": function,
                    "arguments": args,
                    "returnByValue": true,
                    "awaitPromise": true,
                }),
            )
            .await?;
        if let Some(ex) = r.get("exceptionDetails") {
            return Err(BrowserError::Protocol {
                method: "Runtime.callFunctionOn".to_owned(),
                message: ex
                    .get("exception")
                    .and_then(|e| e.get("description"))
                    .and_then(Value::as_str)
                    .unwrap_or("exception")
                    .chars()
                    .take(1000)
                    .collect(),
            });
        }
        Ok(r.get("result")
            .and_then(|r| r.get("value"))
            .cloned()
            .unwrap_or(Value::Null))
    }

    /// The element's centre in viewport coordinates, after scrolling it
    /// into view.
    async fn centre(&self, session: &str, object: &str, r: &str) -> Result<(f64, f64)> {
        let v = self
            .call_on(
                session,
                object,
                "function(){this.scrollIntoView({block:'center',inline:'center'});const b=this.getBoundingClientRect();return [b.left+b.width/2,b.top+b.height/2,b.width,b.height];}",
                json!([]),
            )
            .await?;
        let n = |i: usize| v.get(i).and_then(Value::as_f64).unwrap_or(0.0);
        if n(2) <= 0.0 || n(3) <= 0.0 {
            return Err(BrowserError::input(
                "ref",
                format!("element {r} has no size on the page (hidden?); take a new snapshot"),
            ));
        }
        Ok((n(0), n(1)))
    }

    async fn mouse(
        &self,
        session: &str,
        kind: &str,
        x: f64,
        y: f64,
        button: &str,
        count: u32,
    ) -> Result<()> {
        self.call(
            Some(session),
            "Input.dispatchMouseEvent",
            json!({ "type": kind, "x": x, "y": y, "button": button, "clickCount": count }),
        )
        .await
        .map(|_| ())
    }

    async fn key(&self, session: &str, key: &str) -> Result<()> {
        let (code, vk, text) = key_info(key).ok_or_else(|| {
            BrowserError::input(
                "key",
                format!("unknown key `{key}`: use a single character or a key name such as Enter, Tab, Escape, Backspace, Delete, ArrowUp, ArrowDown, ArrowLeft, ArrowRight, Home, End, PageUp, PageDown, Space"),
            )
        })?;
        let mut down =
            json!({ "type": "keyDown", "key": key, "code": code, "windowsVirtualKeyCode": vk });
        if let Some(t) = &text {
            down["text"] = Value::String(t.clone());
        }
        self.call(Some(session), "Input.dispatchKeyEvent", down)
            .await?;
        self.call(
            Some(session),
            "Input.dispatchKeyEvent",
            json!({ "type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": vk }),
        )
        .await?;
        Ok(())
    }

    /// Perform one interaction in `target`; returns a short report.
    pub async fn act(&self, target: Option<&str>, act: Act) -> Result<Value> {
        let (id, session) = self.tab(target)?;
        let s = session.as_str();
        match act {
            Act::Click {
                r#ref,
                double,
                button,
            } => {
                let obj = self.element(&id, s, &r#ref).await?;
                let (x, y) = self.centre(s, &obj, &r#ref).await?;
                self.mouse(s, "mouseMoved", x, y, "none", 0).await?;
                let clicks = if double { 2 } else { 1 };
                for n in 1..=clicks {
                    self.mouse(s, "mousePressed", x, y, &button, n).await?;
                    self.mouse(s, "mouseReleased", x, y, &button, n).await?;
                }
                Ok(json!({ "clicked": r#ref }))
            }
            Act::Type {
                r#ref,
                text,
                submit,
            } => {
                if let Some(r) = &r#ref {
                    let obj = self.element(&id, s, r).await?;
                    self.call_on(s, &obj, "function(){this.focus();}", json!([]))
                        .await?;
                }
                self.call(Some(s), "Input.insertText", json!({ "text": text }))
                    .await?;
                if submit {
                    self.key(s, "Enter").await?;
                }
                Ok(json!({ "typed": text.chars().count(), "submitted": submit }))
            }
            Act::Press { key } => {
                self.key(s, &key).await?;
                Ok(json!({ "pressed": key }))
            }
            Act::Hover { r#ref } => {
                let obj = self.element(&id, s, &r#ref).await?;
                let (x, y) = self.centre(s, &obj, &r#ref).await?;
                self.mouse(s, "mouseMoved", x, y, "none", 0).await?;
                Ok(json!({ "hovered": r#ref }))
            }
            Act::Select { r#ref, values } => {
                let obj = self.element(&id, s, &r#ref).await?;
                let chosen = self
                    .call_on(s, &obj, SELECT_FN, json!([{ "value": values }]))
                    .await?;
                match chosen {
                    Value::Array(a) if !a.is_empty() => Ok(json!({ "selected": a })),
                    Value::String(err) => Err(BrowserError::input("values", err)),
                    _ => Err(BrowserError::input(
                        "values",
                        format!(
                            "no option of {} matches {:?} by value or label",
                            r#ref, values
                        ),
                    )),
                }
            }
            Act::Fill { fields } => {
                let mut done = Vec::new();
                for (r, value) in fields {
                    let obj = self.element(&id, s, &r).await?;
                    let res = self
                        .call_on(s, &obj, FILL_FN, json!([{ "value": value }]))
                        .await?;
                    if let Value::String(err) = res {
                        return Err(BrowserError::input("fields", format!("{r}: {err}")));
                    }
                    done.push(r);
                }
                Ok(json!({ "filled": done }))
            }
            Act::Wait {
                time_ms,
                text,
                text_gone,
            } => {
                let limit = self.settings.navigation_timeout;
                if let Some(ms) = time_ms {
                    let d = Duration::from_millis(ms);
                    if d > limit {
                        return Err(BrowserError::input(
                            "timeMs",
                            format!("{ms} ms is over the wait limit of {} ms", limit.as_millis()),
                        ));
                    }
                    tokio::time::sleep(d).await;
                }
                if text.is_none() && text_gone.is_none() {
                    return Ok(json!({ "waited": time_ms.unwrap_or(0) }));
                }
                let deadline = Instant::now() + limit;
                loop {
                    let body = self
                        .eval_value(s, "document.body ? document.body.innerText : ''")
                        .await?;
                    let body = body.as_str().unwrap_or("");
                    let appeared = text.as_deref().is_none_or(|t| body.contains(t));
                    let gone = text_gone.as_deref().is_none_or(|t| !body.contains(t));
                    if appeared && gone {
                        return Ok(json!({ "waited": "condition met" }));
                    }
                    if Instant::now() >= deadline {
                        return Err(BrowserError::Timeout {
                            what: "the wait condition".to_owned(),
                            millis: limit.as_millis() as u64,
                        });
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
            Act::Resize { width, height } => {
                if !(100..=8000).contains(&width) || !(100..=8000).contains(&height) {
                    return Err(BrowserError::input(
                        "width",
                        "width and height must be between 100 and 8000",
                    ));
                }
                self.call(
                    Some(s),
                    "Emulation.setDeviceMetricsOverride",
                    json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": false }),
                )
                .await?;
                Ok(json!({ "width": width, "height": height }))
            }
            Act::Evaluate { function } => {
                let expr = format!("({function})()");
                let v = self.eval_value(s, &expr).await?;
                Ok(json!({ "result": v }))
            }
        }
    }

    /// A PNG or JPEG of `target`: the viewport, the whole page, or one
    /// element by ref.
    pub async fn screenshot(
        &self,
        target: Option<&str>,
        full_page: bool,
        element: Option<&str>,
        jpeg: bool,
    ) -> Result<Vec<u8>> {
        let (id, session) = self.tab(target)?;
        let mut params = json!({ "format": if jpeg { "jpeg" } else { "png" } });
        if let Some(r) = element {
            let obj = self.element(&id, &session, r).await?;
            let b = self
                .call_on(
                    &session,
                    &obj,
                    "function(){this.scrollIntoView({block:'center',inline:'center'});const b=this.getBoundingClientRect();return [b.left+window.scrollX,b.top+window.scrollY,b.width,b.height];}",
                    json!([]),
                )
                .await?;
            let n = |i: usize| b.get(i).and_then(Value::as_f64).unwrap_or(0.0);
            if n(2) <= 0.0 || n(3) <= 0.0 {
                return Err(BrowserError::input(
                    "ref",
                    format!("element {r} has no size on the page"),
                ));
            }
            params["clip"] =
                json!({ "x": n(0), "y": n(1), "width": n(2), "height": n(3), "scale": 1 });
            params["captureBeyondViewport"] = json!(true);
        } else if full_page {
            params["captureBeyondViewport"] = json!(true);
            let size = self
                .eval_value(
                    &session,
                    "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]",
                )
                .await?;
            let n = |i: usize| {
                size.get(i)
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0)
                    .min(16384.0)
            };
            params["clip"] = json!({ "x": 0, "y": 0, "width": n(0), "height": n(1), "scale": 1 });
        }
        let shot = self
            .call(Some(&session), "Page.captureScreenshot", params)
            .await?;
        decode_capture(&shot, "Page.captureScreenshot")
    }

    /// The page of `target` printed to PDF.
    pub async fn pdf(&self, target: Option<&str>) -> Result<Vec<u8>> {
        let (_, session) = self.tab(target)?;
        let out = self
            .call(
                Some(&session),
                "Page.printToPDF",
                json!({ "printBackground": true }),
            )
            .await?;
        decode_capture(&out, "Page.printToPDF")
    }

    /// The console of `target`: entries at `min_level` or above, the last
    /// `limit`.
    pub fn console(
        &self,
        target: Option<&str>,
        min_level: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ConsoleEntry>> {
        let (id, _) = self.tab(target)?;
        let rank = |l: &str| match l {
            "debug" | "verbose" => 0,
            "log" | "info" => 1,
            "warning" | "warn" => 2,
            "error" | "assert" => 3,
            _ => 1,
        };
        let min = min_level.map(rank).unwrap_or(0);
        self.shared.with_state(|s| {
            let entries: Vec<ConsoleEntry> = s
                .tabs
                .get(&id)
                .map(|t| {
                    t.console
                        .iter()
                        .filter(|e| rank(&e.level) >= min)
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            let start = entries.len().saturating_sub(limit);
            entries[start..].to_vec()
        })
    }

    /// Put `files` (local paths Talon wrote) into the file input `r`.
    pub async fn upload(&self, target: Option<&str>, r: &str, files: &[PathBuf]) -> Result<()> {
        let (id, session) = self.tab(target)?;
        let backend = self
            .shared
            .with_state(|s| s.tabs.get(&id).and_then(|t| t.refs.get(r).copied()))?
            .ok_or_else(|| BrowserError::UnknownRef(r.to_owned()))?;
        let files: Vec<String> = files
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        self.call(
            Some(&session),
            "DOM.setFileInputFiles",
            json!({ "files": files, "backendNodeId": backend }),
        )
        .await?;
        Ok(())
    }

    /// Answer the pending dialog of `target`, or arm the answer for the
    /// next one. Returns the dialog answered, if one was pending.
    pub async fn dialog(
        &self,
        target: Option<&str>,
        accept: bool,
        prompt: Option<String>,
    ) -> Result<Option<PendingDialog>> {
        let (id, session) = self.tab(target)?;
        let pending = self.shared.with_state(|s| {
            let tab = s.tabs.get_mut(&id)?;
            match tab.dialog.take() {
                Some(d) => Some(d),
                None => {
                    tab.dialog_arm = Some((accept, prompt.clone()));
                    None
                }
            }
        })?;
        if pending.is_some() {
            let mut params = json!({ "accept": accept });
            if let Some(t) = prompt {
                params["promptText"] = Value::String(t);
            }
            self.call(Some(&session), "Page.handleJavaScriptDialog", params)
                .await?;
        }
        Ok(pending)
    }

    /// The dialog `target` is waiting on, if any.
    pub fn pending_dialog(&self, target: Option<&str>) -> Option<PendingDialog> {
        let (id, _) = self.tab(target).ok()?;
        self.shared
            .with_state(|s| s.tabs.get(&id).and_then(|t| t.dialog.clone()))
            .ok()
            .flatten()
    }
}

/// Check a URL the model asked for before anything is loaded.
async fn guard_navigation(browser: &Browser, url: &str) -> Result<()> {
    if url == "about:blank" {
        return Ok(());
    }
    let parsed = url::Url::parse(url).map_err(|e| {
        BrowserError::input(
            "targetUrl",
            format!("`{url}` is not an absolute URL ({e}); give an http:// or https:// URL"),
        )
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(BrowserError::input(
            "targetUrl",
            format!(
                "the browser opens only http:// and https:// URLs (and about:blank), not `{}:`",
                parsed.scheme()
            ),
        ));
    }
    match vet_url(&browser.shared.guard, url).await {
        None => Ok(()),
        Some(b) => Err(BrowserError::Blocked(browser.shared.guard.explain(b))),
    }
}

fn decode_capture(answer: &Value, method: &str) -> Result<Vec<u8>> {
    let data =
        answer
            .get("data")
            .and_then(Value::as_str)
            .ok_or_else(|| BrowserError::Protocol {
                method: method.to_owned(),
                message: "no data in the answer".to_owned(),
            })?;
    if data.len() / 4 * 3 > MAX_CAPTURE_BYTES {
        return Err(BrowserError::input(
            "fullPage",
            format!(
                "the capture is over {} MiB; capture the viewport or one element instead",
                MAX_CAPTURE_BYTES / (1024 * 1024)
            ),
        ));
    }
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| BrowserError::Protocol {
            method: method.to_owned(),
            message: format!("bad base64: {e}"),
        })
}

/// `(code, windowsVirtualKeyCode, text)` of a key name.
fn key_info(key: &str) -> Option<(String, i64, Option<String>)> {
    let named = |code: &str, vk: i64, text: Option<&str>| {
        Some((code.to_owned(), vk, text.map(str::to_owned)))
    };
    match key {
        "Enter" => named("Enter", 13, Some("\r")),
        "Tab" => named("Tab", 9, None),
        "Escape" => named("Escape", 27, None),
        "Backspace" => named("Backspace", 8, None),
        "Delete" => named("Delete", 46, None),
        "ArrowUp" => named("ArrowUp", 38, None),
        "ArrowDown" => named("ArrowDown", 40, None),
        "ArrowLeft" => named("ArrowLeft", 37, None),
        "ArrowRight" => named("ArrowRight", 39, None),
        "Home" => named("Home", 36, None),
        "End" => named("End", 35, None),
        "PageUp" => named("PageUp", 33, None),
        "PageDown" => named("PageDown", 34, None),
        "Space" | " " => named("Space", 32, Some(" ")),
        _ => {
            let mut chars = key.chars();
            let c = chars.next()?;
            if chars.next().is_some() {
                return None;
            }
            let upper = c.to_ascii_uppercase();
            let (code, vk) = if c.is_ascii_alphabetic() {
                (format!("Key{upper}"), upper as i64)
            } else if c.is_ascii_digit() {
                (format!("Digit{c}"), c as i64)
            } else {
                (String::new(), 0)
            };
            Some((code, vk, Some(c.to_string())))
        }
    }
}

/// Select options by value or label; returns the chosen values, or a
/// message when the element is not a `<select>`.
const SELECT_FN: &str = r#"function(want){
  if (!(this instanceof HTMLSelectElement)) return 'the element is not a <select>';
  const chosen = [];
  for (const o of this.options) {
    const hit = want.includes(o.value) || want.includes(o.label) || want.includes(o.text);
    if (hit && (this.multiple || chosen.length === 0)) { o.selected = true; chosen.push(o.value); }
    else if (this.multiple) { o.selected = false; }
  }
  if (chosen.length) { this.dispatchEvent(new Event('input',{bubbles:true})); this.dispatchEvent(new Event('change',{bubbles:true})); }
  return chosen;
}"#;

/// Set one field: text inputs and textareas get the value through the
/// native setter (so frameworks see it), checkboxes and radios a checked
/// state, selects an option.
const FILL_FN: &str = r#"function(v){
  this.focus();
  if (this instanceof HTMLInputElement && (this.type === 'checkbox' || this.type === 'radio')) {
    const want = v === true || v === 'true' || v === 'on' || v === 'checked';
    if (this.checked !== want) this.click();
    return null;
  }
  if (this instanceof HTMLSelectElement) {
    const s = String(v); let hit = false;
    for (const o of this.options) { if (o.value === s || o.label === s || o.text === s) { o.selected = true; hit = true; break; } }
    if (!hit) return 'no option matches ' + s;
  } else if (this instanceof HTMLInputElement || this instanceof HTMLTextAreaElement) {
    const proto = this instanceof HTMLInputElement ? HTMLInputElement.prototype : HTMLTextAreaElement.prototype;
    const set = Object.getOwnPropertyDescriptor(proto, 'value').set;
    set.call(this, v === null || v === undefined ? '' : String(v));
  } else if (this.isContentEditable) {
    this.textContent = String(v);
  } else {
    return 'the element is not a form field';
  }
  this.dispatchEvent(new Event('input',{bubbles:true}));
  this.dispatchEvent(new Event('change',{bubbles:true}));
  return null;
}"#;
