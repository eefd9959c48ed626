//! Talon's `browser` tool: Debian's Chromium, headless, driven over the
//! Chrome DevTools Protocol by a small client of its own ([`cdp`]).
//!
//! - [`Browser`]: one Chromium per agent ([`BrowserManager`]), its profile
//!   under `<state dir>/browser/<agent>/profile`, started through
//!   `talon-proc-tree` (its whole process tree dies with it) with
//!   `--remote-debugging-port=0` on loopback (the port is read from
//!   `DevToolsActivePort`).
//! - Every request a page makes is vetted by the same [`EgressGuard`]
//!   rules as `web_fetch`: request interception (`Fetch.enable` on every
//!   page, frame and worker, attached paused) fails a refused request and
//!   records why, and Chromium's only route out is a proxy that vets the
//!   destination again and connects only to vetted addresses.
//! - Downloads go to a private temp dir under Chromium's own ids, are
//!   cancelled and deleted past [`BrowserSettings::max_download_bytes`],
//!   and a finished one is copied into the workspace (`downloads/`, a
//!   generated one-component name) and deleted; files for `upload`, the
//!   `pdf` action's output and downloads go through the run's
//!   [`FsBridge`](talon_fs_bridge::FsBridge).
//! - Every DevTools call, navigation, wait and action is bounded in time.
//! - A sandboxed run is refused (`browser.sandbox_unsupported`): this
//!   version has no sandboxed browser.
//!
//! ```
//! use talon_browser::cdp::{Incoming, parse_message};
//!
//! let m = parse_message(r#"{"id":1,"result":{}}"#).unwrap();
//! assert!(matches!(m, Incoming::Response { id: 1, .. }));
//! assert!(parse_message("[1,2]").is_err());
//! ```
#![deny(missing_docs)]

pub use crate::browser::{
    BlockedRequest, Browser, BrowserSettings, ConsoleEntry, DEFAULT_MAX_DOWNLOAD_BYTES,
    FinishedDownload, PendingDialog, RefusedDownload, SANDBOX_DOWNLOAD_STAGING, SANDBOX_PROXY_URL,
    SandboxTarget, locate_chromium,
};
pub use crate::error::{BrowserError, Result};
pub use crate::ops::{Act, Loaded, MAX_CAPTURE_BYTES, TabInfo};
pub use crate::sandbox_config::SandboxBrowserConfig;
pub use crate::snapshot::{Snapshot, SnapshotOptions};
pub use crate::tool::{
    BrowserManager, BrowserTool, MAX_UPLOAD_BYTES, SandboxBrowser, browser_spec, download_file_name,
};
pub use talon_egress::EgressGuard;

mod browser;
pub mod cdp;
mod error;
mod ops;
mod sandbox_config;
pub mod snapshot;
mod tool;
