//! `talon memory index|search|status` on a real workspace.

use std::path::Path;

use pretty_assertions::assert_eq;

use super::util::{Run, cli};

fn talon(home: &Path, args: &[&str]) -> Run {
    cli()
        .home(home)
        .state_dir(home.join("state"))
        .args(args)
        .run()
}

#[test]
fn index_search_and_status_share_the_host_index() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let ws = h.join("ws");
    std::fs::create_dir_all(ws.join("memory")).unwrap();
    std::fs::write(
        ws.join("MEMORY.md"),
        "# Prefs\n\nThe user drinks oolong tea.\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("memory/2026-12-01.md"),
        "# Dec 1\n\nMet Ana about the ferry timetable.\n",
    )
    .unwrap();
    std::fs::write(ws.join("memory/bad.md"), b"\xff\xfe not text\n").unwrap();
    let w = ws.to_str().unwrap();

    let run = talon(h, &["memory", "index", "--workspace", w, "--json"]);
    assert_eq!(run.code, 1, "a skipped file exits 1: {}", run.stderr);
    let v = run.json();
    assert_eq!(v["files"], 3);
    assert_eq!(v["indexed"], 2);
    assert_eq!(v["skipped"][0]["code"], "memory.invalid_utf8");

    let run = talon(
        h,
        &["memory", "search", "ferry (timetable)*", "--workspace", w],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("memory/2026-12-01.md#L1-L3"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("memory.invalid_utf8"), "{}", run.stdout);

    let run = talon(
        h,
        &["memory", "search", "oolong", "--workspace", w, "--json"],
    );
    let v = run.json();
    assert_eq!(v["results"][0]["path"], "MEMORY.md");
    assert_eq!(v["results"][0]["startLine"], 1);
    assert_eq!(v["provider"], "none");

    let run = talon(h, &["memory", "search", "zeppelin", "--workspace", w]);
    assert_eq!(run.code, 1);

    let run = talon(h, &["memory", "status", "--workspace", w, "--json"]);
    assert_eq!(run.code, 0);
    let v = run.json();
    assert_eq!(
        (v["files"].as_u64(), v["chunks"].as_u64()),
        (Some(2), Some(2))
    );
    assert!(v["path"].as_str().unwrap().contains("/state/memory/"));

    // A rebuild gives the same counts.
    let run = talon(
        h,
        &["memory", "index", "--rebuild", "--workspace", w, "--json"],
    );
    assert_eq!(run.json()["chunksWritten"], 2);
}

/// An agent whose own `memorySearch` turns memory off cannot be indexed
/// or searched; the other agents can.
#[test]
fn an_agent_with_memory_off_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    std::fs::create_dir_all(h.join("ws")).unwrap();
    std::fs::write(h.join("ws/MEMORY.md"), "# Prefs\n\nTea.\n").unwrap();
    let cfg = h.join("talon.json");
    std::fs::write(
        &cfg,
        r#"{ agents: { list: [
            { id: "main", workspace: "./ws" },
            { id: "quiet", workspace: "./ws", memorySearch: { enabled: false } },
        ] } }"#,
    )
    .unwrap();
    let c = cfg.to_str().unwrap();
    let run = talon(
        h,
        &["--config", c, "--agent", "quiet", "memory", "search", "tea"],
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr
            .contains("memory search is off for agent `quiet`"),
        "{}",
        run.stderr
    );
    let run = talon(
        h,
        &[
            "--config", c, "--agent", "main", "memory", "search", "tea", "--json",
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
}
