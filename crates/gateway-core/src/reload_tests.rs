#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use super::*;

/// A reload whose file has an invalid section is refused with the loader's
/// own error (origin, line, column, key), and the last good configuration
/// — its policy, its tokens, its MCP servers — stays active.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_with_an_invalid_section_is_refused_and_the_old_config_stays() {
    let dir = tempfile::tempdir().unwrap();
    let config = crate::test_harness::config_path(dir.path());
    let good = r#"{
  "tools": { "deny": ["exec"] },
  "mcp": { "servers": { "gh": { "command": "gh-mcp" } } },
  "gateway": { "auth": { "tokens": [{ "token": "agent-token-aaaaaaaaaa", "scope": "agent" }] } }
}"#;
    let gw = crate::test_harness::open_in(dir.path(), good);
    let before = gw.generation();
    assert_eq!(gw.scope_of("agent-token-aaaaaaaaaa"), Some(Scope::Agent));

    let bad_sections = [
        // A wrong type deep in a section a consumer used to re-parse.
        r#"{
  "tools": {},
  "mcp": { "servers": { "gh": { "command": ["gh-mcp"] } } }
}"#,
        // A bad enum value in the gateway's own section.
        r#"{
  "gateway": { "journal": { "durability": "maybe" } }
}"#,
        // A bad value the gateway itself would read on reload.
        r#"{
  "gateway": { "auth": { "tokens": [{ "token": "agent-token-bbbbbbbbbb", "scope": "root" }] } }
}"#,
    ];
    for bad in bad_sections {
        std::fs::write(&config, bad).unwrap();
        let expected = talon_config::load(&config).unwrap_err().to_string();
        assert!(
            expected.starts_with(&format!("{}:", config.display())),
            "{expected}"
        );
        let report = gw.reload();
        assert!(!report.ok, "{bad} was accepted");
        assert_eq!(report.generation, before.id);
        let error = report.error.unwrap();
        assert!(
            error.contains(&expected),
            "the reload error should be the load error\n  reload: {error}\n  load: {expected}"
        );
        let active = gw.generation();
        assert_eq!(active.id, before.id);
        assert_eq!(active.config, before.config);
        assert_eq!(gw.scope_of("agent-token-aaaaaaaaaa"), Some(Scope::Agent));
        assert_eq!(gw.scope_of("agent-token-bbbbbbbbbb"), None);
    }
    // A valid file is still taken after the refusals.
    std::fs::write(
        &config,
        r#"{ "gateway": { "limits": { "outboundFrames": 7 } } }"#,
    )
    .unwrap();
    let report = gw.reload();
    assert!(report.ok, "{:?}", report.error);
    assert_eq!(gw.limits().outbound_frames, 7);
    gw.shutdown(Duration::from_secs(5)).await;
}

/// A hook that cannot run makes `health` `degraded`, naming it, at open
/// and after a reload that breaks it; a reload that fixes it (the program
/// made executable) brings `ok` back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_hook_degrades_health_until_a_reload_finds_it_fixed() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let config = crate::test_harness::config_path(dir.path());
    let guard = dir.path().join("guard.sh");
    std::fs::write(&guard, "#!/bin/sh\ncat >/dev/null\necho '{}'\n").unwrap();
    std::fs::set_permissions(&guard, std::fs::Permissions::from_mode(0o644)).unwrap();
    let gw = crate::test_harness::open_in(
        dir.path(),
        r#"{ "tools": { "hooks": { "beforeToolCall": [{ "id": "guard", "command": ["./guard.sh"] }] } } }"#,
    );
    let health = crate::handlers::gateway::health(&gw.inner).await;
    assert_eq!((health.ok, health.status.as_str()), (true, "degraded"));
    let found: Vec<(&str, &str, &str, &str)> = health
        .hook_problems
        .iter()
        .map(|p| {
            (
                p.hook_id.as_str(),
                p.event.as_str(),
                p.code.as_str(),
                p.key_path.as_str(),
            )
        })
        .collect();
    assert_eq!(
        found,
        vec![(
            "guard",
            "before_tool_call",
            "hook.not_executable",
            "tools.hooks.beforeToolCall[0].command"
        )]
    );
    assert!(
        health.hook_problems[0].message.contains(&format!(
            "chmod +x {}",
            dir.path().join("guard.sh").display()
        )),
        "{}",
        health.hook_problems[0].message
    );

    std::fs::set_permissions(&guard, std::fs::Permissions::from_mode(0o755)).unwrap();
    let report = gw.reload();
    assert!(report.ok, "{:?}", report.error);
    let health = crate::handlers::gateway::health(&gw.inner).await;
    assert_eq!((health.ok, health.status.as_str()), (true, "ok"));
    assert_eq!(health.hook_problems, vec![]);

    // Broken again by a reload (the program now named is missing).
    std::fs::write(
        &config,
        r#"{ "tools": { "hooks": { "afterToolCall": [{ "id": "audit", "command": ["/nonexistent/talon-audit"] }] } } }"#,
    )
    .unwrap();
    let report = gw.reload();
    assert!(report.ok, "{:?}", report.error);
    let health = crate::handlers::gateway::health(&gw.inner).await;
    assert_eq!(health.status, "degraded");
    assert_eq!(
        health
            .hook_problems
            .iter()
            .map(|p| (p.hook_id.as_str(), p.code.as_str()))
            .collect::<Vec<_>>(),
        vec![("audit", "hook.missing_program")]
    );
    gw.shutdown(Duration::from_secs(5)).await;
}
