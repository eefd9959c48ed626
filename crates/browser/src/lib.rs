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
//! - A sandboxed run never gets the host browser. With the local
//!   (bubblewrap) backend and `sandbox.browser.enabled` it gets its own
//!   Chromium inside its sandbox ([`Browser::launch_in_sandbox`],
//!   [`BrowserTool::sandboxed`]): one long command of the session's
//!   sandbox (its mounts, namespaces, seccomp, Landlock and limits), with
//!   DevTools over `--remote-debugging-pipe` ([`cdp::Cdp::connect_pipe`]:
//!   no port at all), its profile in the sandbox's private `/tmp`, its
//!   network only the sandbox's egress forwarder
//!   ([`SANDBOX_PROXY_URL`]) while request interception vets every
//!   request as on the host, and its downloads staged in the workspace
//!   ([`SANDBOX_DOWNLOAD_STAGING`]) and reached only through the
//!   sandbox's bridge. A sandbox without egress (`network: "none"`) is
//!   refused (`browser.sandbox_no_egress`); another backend, or a
//!   disabled `sandbox.browser`, is refused with
//!   `browser.sandbox_unsupported`.
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
