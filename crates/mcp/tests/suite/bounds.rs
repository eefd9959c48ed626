//! Issue 27, "MCP bounds before memory": a real stdio server answering
//! with a 100 MB text result, a 15 MB base64 image, a result whose
//! structure alone is 16 MB and a 10 MiB tool description. Each is cut or
//! refused while it is read: the calls end promptly (not at the call
//! timeout) with a truncated result or a typed error, the session keeps
//! working, and the peak RSS of the process grows by far less than what the
//! server sent (the old path buffered 16 MiB lines and parsed them whole).
//!
//! The measuring test re-runs itself in a fresh process so no other test
//! of the suite moves its high-water mark.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use talon_mcp::MAX_TOOL_DESCRIPTION_BYTES;
use talon_tool_catalog::{ContentBlock, ToolErrorCode};

use crate::suite::calls::call;
use crate::support::{manager, python};

const PROBE_ENV: &str = "TALON_MCP_MEMORY_PROBE";
const MIB: u64 = 1024 * 1024;

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"))
}

/// Reset the high-water mark to the current RSS (Linux >= 4.0).
fn reset_peak() {
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
}

fn server() -> serde_json::Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/huge_server.py");
    json!({"huge": {
        "command": python(),
        "args": ["-u", script.to_str().unwrap()],
        "timeoutMs": 120_000,
    }})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_frames_are_cut_while_read_and_peak_memory_stays_bounded() {
    if std::env::var_os(PROBE_ENV).is_none() {
        let exe = std::env::current_exe().unwrap();
        let out = std::process::Command::new(exe)
            .args([
                "--exact",
                "suite::bounds::huge_frames_are_cut_while_read_and_peak_memory_stays_bounded",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(PROBE_ENV, "1")
            .output()
            .unwrap();
        let text = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "the probe process failed:\n{text}");
        assert!(text.contains("1 passed"), "the probe did not run:\n{text}");
        return;
    }
    let m = manager(server());
    let reports = m.ensure_agent("main").await;
    assert_eq!(reports[0].error, None, "{reports:?}");

    // The 10 MiB description reached the model cut, with a note.
    let mat = m.materialize("main");
    let spec = &mat.get("huge__huge_text").unwrap().spec;
    assert!(
        spec.description.len() <= MAX_TOOL_DESCRIPTION_BYTES + 300,
        "{}",
        spec.description.len()
    );
    assert!(
        spec.description.contains("[talon: the description was cut"),
        "{}",
        &spec.description[spec.description.len() - 200..]
    );

    assert_eq!(
        call(&m, "huge__small", json!({})).await.unwrap().text(),
        "ok"
    );
    reset_peak();
    let base = status_kib("VmRSS:");

    // 100 MB of text: a truncated result, promptly.
    let started = Instant::now();
    let r = call(&m, "huge__huge_text", json!({"mb": 100}))
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(r.details["mcp"]["truncated"], true, "{}", r.details);
    assert!(r.text().len() < 300_000, "{}", r.text().len());
    assert!(r.text().contains("output truncated"), "the note is there");

    // A 15 MB image (under rmcp's own 16 MiB line limit, so the old path
    // parsed it whole): omitted, never passed on cut.
    let r = call(&m, "huge__huge_image", json!({"mb": 15}))
        .await
        .unwrap();
    assert!(
        !r.content
            .iter()
            .any(|b| matches!(b, ContentBlock::Image { .. })),
        "a cut image is never passed on"
    );
    assert!(r.text().contains("omitted"), "{}", r.text());

    let peak = status_kib("VmHWM:");
    let growth = peak.saturating_sub(base) * 1024;
    eprintln!("peak RSS growth: {} KiB", growth / 1024);
    assert!(
        growth < 12 * MIB,
        "peak RSS grew by {} MiB while reading oversized results (cap 200,000 bytes)",
        growth / MIB
    );

    // The session still works after both.
    assert_eq!(
        call(&m, "huge__small", json!({})).await.unwrap().text(),
        "ok"
    );

    // Structure alone past the hard budget: a typed failure naming the
    // limit, promptly; the next call restarts the server and works.
    let started = Instant::now();
    let err = call(&m, "huge__huge_structure", json!({"mb": 16}))
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(err.code(), ToolErrorCode::McpCallFailed, "{err}");
    assert!(err.message().contains("maxOutputBytes"), "{err}");
    assert!(err.message().contains("refused while it was read"), "{err}");
    let peak = status_kib("VmHWM:");
    assert!(
        peak.saturating_sub(base) * 1024 < 12 * MIB,
        "peak RSS grew by {} MiB",
        peak.saturating_sub(base) / 1024
    );
    let mut ok = false;
    for _ in 0..50 {
        if let Ok(r) = call(&m, "huge__small", json!({})).await {
            assert_eq!(r.text(), "ok");
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ok, "the server came back after the refused frame");
    m.shutdown().await;
}
