//! Shared helpers: the fixture server binary (built on demand), configs,
//! process checks.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};
use talon_mcp::McpManager;

/// The workspace root.
pub(crate) fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn newest_source(dir: &Path) -> SystemTime {
    let mut newest = SystemTime::UNIX_EPOCH;
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let t = if path.is_dir() {
            newest_source(&path)
        } else {
            entry.metadata().unwrap().modified().unwrap()
        };
        newest = newest.max(t);
    }
    newest
}

/// The fixture server binary. Tests of other packages cannot use
/// `CARGO_BIN_EXE_*` for it, so it is looked up under the target dir
/// (`CARGO_TARGET_DIR` or `<workspace>/target`, `debug` profile) and
/// built with `cargo build -p talon-mcp-fixture-server` when it is missing
/// or older than its sources.
pub(crate) fn fixture_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let root = workspace();
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("target"));
        let bin = target.join("debug").join("talon-mcp-fixture-server");
        let src = root.join("fixtures/mcp-fixture-server");
        let sources = newest_source(&src.join("src")).max(
            std::fs::metadata(src.join("Cargo.toml"))
                .unwrap()
                .modified()
                .unwrap(),
        );
        let fresh = std::fs::metadata(&bin)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t >= sources);
        if !fresh {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
            let status = std::process::Command::new(cargo)
                .args(["build", "-p", "talon-mcp-fixture-server"])
                .current_dir(&root)
                .status()
                .expect("run cargo build for the fixture server");
            assert!(status.success(), "building talon-mcp-fixture-server failed");
        }
        assert!(bin.exists(), "fixture server missing at {}", bin.display());
        bin
    })
}

/// A stdio server entry for the fixture with extra args and settings.
pub(crate) fn fixture_server(args: &[&str], extra: Value) -> Value {
    let mut v = json!({
        "command": fixture_bin().to_str().unwrap(),
        "args": args,
    });
    if let (Value::Object(m), Value::Object(e)) = (&mut v, extra) {
        m.extend(e);
    }
    v
}

/// A manager with these global servers (a JSON object of name → entry).
pub(crate) fn manager(servers: Value) -> McpManager {
    let cfg = talon_mcp::parse_config(&json!({ "servers": servers }), "mcp").unwrap();
    McpManager::new(cfg, Vec::new())
}

/// Whether a process is gone (no /proc entry, or a zombie waiting to be
/// reaped).
pub(crate) fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .map(|(_, rest)| {
                rest.trim_start().starts_with('Z') || rest.trim_start().starts_with('X')
            })
            .unwrap_or(false),
    }
}

/// Wait (bounded) until `pid` is gone.
pub(crate) async fn wait_gone(pid: u32, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if gone(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    gone(pid)
}

/// The Python interpreter of the shared test venv.
pub(crate) fn python() -> String {
    std::env::var("TALON_TEST_PYTHON").unwrap_or_else(|_| {
        panic!(
            "TALON_TEST_PYTHON is not set: run `cargo xtask py-env` (or `cargo xtask test`), \
             or export TALON_TEST_PYTHON=<venv>/bin/python with mcp-server-time installed"
        )
    })
}
