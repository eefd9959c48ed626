//! A stored cron job whose creator cap holds a tool the agent's policy
//! has since lost.

use talon_audit::AuditSeverity;

use super::util::Setup;

fn job(id: &str, creator_tools: Option<Vec<&str>>) -> talon_cron::CronJob {
    let mut value = serde_json::json!({
        "id": id,
        "agentId": "main",
        "name": format!("job {id}"),
        "schedule": {"kind": "every", "everyMs": 3_600_000},
        "payload": {"kind": "systemEvent", "text": "tick"},
        "enabled": true,
        "createdAtMs": 0,
        "updatedAtMs": 0,
    });
    if let Some(tools) = creator_tools {
        value["creatorTools"] = serde_json::json!(tools);
    }
    serde_json::from_value(value).unwrap()
}

#[test]
fn a_cap_wider_than_the_current_policy_is_reported() {
    let setup = Setup::new(
        r#"{ tools: { deny: ["exec"] },
             agents: { defaults: { sandbox: { mode: "all" } } } }"#,
        0o600,
    );
    let mut store = talon_cron::CronStore::open(&setup.state.join("talon.db")).unwrap();
    store.put(&job("wide", Some(vec!["read", "exec"]))).unwrap();
    store.put(&job("narrow", Some(vec!["read"]))).unwrap();
    store.put(&job("operator", None)).unwrap();
    drop(store);

    let report = setup.audit(false);
    let cron: Vec<&talon_audit::AuditFinding> = report
        .findings
        .iter()
        .filter(|f| f.check_id == "talon.cron.cap_wider_than_policy")
        .collect();
    assert_eq!(cron.len(), 1, "{cron:#?}");
    assert_eq!(cron[0].severity, AuditSeverity::Warn);
    assert!(cron[0].title.contains("wide"), "{cron:#?}");
    assert!(cron[0].detail.contains("`exec`"), "{cron:#?}");
}
