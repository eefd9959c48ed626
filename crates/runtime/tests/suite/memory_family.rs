//! `memory_search` / `memory_get` through `ToolTable::invoke` from a real
//! config, and the memory-flush run appending with the real `write` tool.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use talon_hooks::DeniedReason;
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, RuntimeBuilder, provides_core_tool};
use talon_tool_policy::{RunContext, Trigger};

fn details(out: &InvokeOutcome) -> Value {
    match out {
        InvokeOutcome::Completed { result, .. } => result.details.clone(),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_memory_tools_search_and_read_the_agent_workspace() {
    assert!(provides_core_tool("memory_search") && provides_core_tool("memory_get"));
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
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
    let loaded = talon_config::load_str(
        r#"{ agents: { defaults: { workspace: "./ws", memorySearch: { query: { maxResults: 3 } } } } }"#,
        "talon.json",
    )
    .unwrap();
    let runtime =
        RuntimeBuilder::from_config_in(&loaded.config, dir.path(), dir.path().join("state"))
            .unwrap()
            .build()
            .unwrap();
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    assert!(table.names().contains(&"memory_search") && table.names().contains(&"memory_get"));

    let out = table
        .invoke(ModelToolCall::new(
            "c1",
            "memory_search",
            json!({"query": "ferry (timetable)*"}),
        ))
        .await;
    let d = details(&out);
    assert_eq!(d["results"][0]["path"], "memory/2026-12-01.md", "{d}");
    assert_eq!(d["results"][0]["startLine"], 1);
    assert_eq!(d["results"][0]["endLine"], 3);
    assert_eq!(d["provider"], "none");
    // The index lives in the state dir.
    assert!(
        dir.path()
            .join("state/memory")
            .read_dir()
            .unwrap()
            .next()
            .is_some()
    );

    let out = table
        .invoke(ModelToolCall::new(
            "c2",
            "memory_get",
            json!({"path": "MEMORY.md", "from": 3, "lines": 1}),
        ))
        .await;
    assert_eq!(details(&out)["text"], "The user drinks oolong tea.");
    let out = table
        .invoke(ModelToolCall::new(
            "c3",
            "memory_get",
            json!({"path": "talon.json"}),
        ))
        .await;
    match out {
        InvokeOutcome::Failed(e) => assert_eq!(e.code().as_str(), "memory.path_refused"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn memory_search_can_be_turned_off() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = talon_config::load_str(
        r#"{ agents: { defaults: { memorySearch: { enabled: false } } } }"#,
        "talon.json",
    )
    .unwrap();
    let runtime =
        RuntimeBuilder::from_config_in(&loaded.config, dir.path(), dir.path().join("state"))
            .unwrap()
            .build()
            .unwrap();
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    assert!(!table.names().contains(&"memory_search"));
}

#[tokio::test]
async fn a_memory_flush_run_appends_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("memory")).unwrap();
    let file = ws.join("memory/2026-12-05.md");
    std::fs::write(&file, "# Dec 5\n\nfirst fact\n").unwrap();
    let loaded = talon_config::load_str(
        r#"{ agents: { defaults: { workspace: "./ws" } } }"#,
        "talon.json",
    )
    .unwrap();
    let runtime =
        RuntimeBuilder::from_config_in(&loaded.config, dir.path(), dir.path().join("state"))
            .unwrap()
            .build()
            .unwrap();
    let mut run = RunSpec::new(RunContext {
        trigger: Trigger::Memory,
        ..RunContext::new("main")
    });
    run.memory_flush_path = Some("memory/2026-12-05.md".into());
    let table = runtime.assemble(run);
    assert_eq!(table.names(), vec!["read", "write"]);

    // Without append: refused, the file untouched.
    let out = table
        .invoke(ModelToolCall::new(
            "w1",
            "write",
            json!({"path": "memory/2026-12-05.md", "content": "replaced"}),
        ))
        .await;
    assert!(
        matches!(&out, InvokeOutcome::Blocked(b) if b.denied_reason == DeniedReason::TriggerScope && b.reason.contains("`append: true`")),
        "{out:?}"
    );
    let out = table
        .invoke(ModelToolCall::new(
            "w2",
            "write",
            json!({"path": "memory/2026-12-05.md", "content": "x", "append": false}),
        ))
        .await;
    assert!(matches!(out, InvokeOutcome::Blocked(_)), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "# Dec 5\n\nfirst fact\n"
    );

    // With append: added to the end, twice.
    for (i, line) in ["second fact\n", "third fact\n"].iter().enumerate() {
        let out = table
            .invoke(ModelToolCall::new(
                format!("a{i}"),
                "write",
                json!({"path": "memory/2026-12-05.md", "content": line, "append": true}),
            ))
            .await;
        assert_eq!(details(&out)["appended"], true);
    }
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "# Dec 5\n\nfirst fact\nsecond fact\nthird fact\n"
    );
    // Another file: refused.
    let out = table
        .invoke(ModelToolCall::new(
            "w3",
            "write",
            json!({"path": "MEMORY.md", "content": "x", "append": true}),
        ))
        .await;
    assert!(matches!(out, InvokeOutcome::Blocked(_)), "{out:?}");
}

#[tokio::test]
async fn write_appends_in_a_normal_run_and_creates_a_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = talon_config::load_str(
        r#"{ agents: { defaults: { workspace: "./ws" } } }"#,
        "talon.json",
    )
    .unwrap();
    let runtime =
        RuntimeBuilder::from_config_in(&loaded.config, dir.path(), dir.path().join("state"))
            .unwrap()
            .build()
            .unwrap();
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    for (i, part) in ["a\n", "b\n"].iter().enumerate() {
        let out = table
            .invoke(ModelToolCall::new(
                format!("w{i}"),
                "write",
                json!({"path": "log/x.md", "content": part, "append": true}),
            ))
            .await;
        assert_eq!(details(&out)["created"], i == 0);
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ws/log/x.md")).unwrap(),
        "a\nb\n"
    );
    // A plain write still replaces.
    let out = table
        .invoke(ModelToolCall::new(
            "w9",
            "write",
            json!({"path": "log/x.md", "content": "c\n"}),
        ))
        .await;
    assert_eq!(details(&out)["appended"], false);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ws/log/x.md")).unwrap(),
        "c\n"
    );
}

/// An agent's own `memorySearch` is merged over the defaults: `enabled:
/// false` removes the memory tools from that agent's runs only, and its
/// `extraPaths` are indexed for it alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_agent_memory_search_settings_hold_per_agent() {
    let dir = tempfile::tempdir().unwrap();
    for ws in ["ws-main", "ws-quiet", "ws-wide"] {
        let ws = dir.path().join(ws);
        std::fs::create_dir_all(ws.join("notes")).unwrap();
        std::fs::write(ws.join("MEMORY.md"), "# Prefs\n\nTea, not coffee.\n").unwrap();
        std::fs::write(
            ws.join("notes/ferry.md"),
            "# Ferry\n\nThe ferry leaves at noon.\n",
        )
        .unwrap();
    }
    let loaded = talon_config::load_str(
        r#"{ agents: {
          defaults: { memorySearch: { query: { maxResults: 3 } } },
          list: [
            { id: "main", workspace: "./ws-main" },
            { id: "quiet", workspace: "./ws-quiet", memorySearch: { enabled: false } },
            { id: "wide", workspace: "./ws-wide", memorySearch: { extraPaths: ["notes"] } },
          ],
        } }"#,
        "talon.json",
    )
    .unwrap();
    let runtime =
        RuntimeBuilder::from_config_in(&loaded.config, dir.path(), dir.path().join("state"))
            .unwrap()
            .build()
            .unwrap();
    let quiet = runtime.assemble(RunSpec::new(RunContext::new("quiet")));
    assert!(
        !quiet.names().contains(&"memory_search") && !quiet.names().contains(&"memory_get"),
        "{:?}",
        quiet.names()
    );
    let search = |agent: &'static str| {
        let table = runtime.assemble(RunSpec::new(RunContext::new(agent)));
        async move {
            assert!(table.names().contains(&"memory_search"), "{agent}");
            let out = table
                .invoke(ModelToolCall::new(
                    "c1",
                    "memory_search",
                    json!({"query": "ferry"}),
                ))
                .await;
            details(&out)["results"].as_array().unwrap().len()
        }
    };
    assert_eq!(
        search("main").await,
        0,
        "notes/ is not a memory path for main"
    );
    assert_eq!(search("wide").await, 1, "wide indexes its extra path");
}
