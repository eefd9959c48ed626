use pretty_assertions::assert_eq;
use serde_json::{Map, Value, json};

use super::*;

fn p(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn memory(path: Value, appends: bool) -> Result<Map<String, Value>, Box<BlockedCall>> {
    Narrowing::MemoryAppend(Some("memory/today.md".into())).apply(
        p(json!({"path": path, "content": "x", "append": true})),
        appends,
    )
}

#[test]
fn memory_writes_only_append_to_the_exact_file() {
    assert_eq!(
        memory(json!("./memory//today.md"), true).unwrap()["append"],
        true
    );
    for bad in [
        json!(" memory/today.md"),
        json!("memory/../memory/today.md"),
        json!("AGENTS.md"),
        json!(1),
    ] {
        let err = memory(bad.clone(), true).unwrap_err();
        assert_eq!(err.denied_reason, DeniedReason::TriggerScope, "{bad}");
    }
    assert!(
        memory(json!("memory/today.md"), false).is_err(),
        "a tool that cannot append must not be used"
    );
    let extra = Narrowing::MemoryAppend(Some("memory/today.md".into())).apply(
        p(json!({"path": "memory/today.md", "file_path": "../.bashrc", "content": "x"})),
        true,
    );
    assert!(extra.unwrap_err().reason.contains("`file_path`"));
    let overwrite = Narrowing::MemoryAppend(Some("memory/today.md".into())).apply(
        p(json!({"path": "memory/today.md", "content": "x", "append": false})),
        true,
    );
    assert!(overwrite.is_err());
    // Without `append: true` the write would replace the file: refused,
    // never silently turned into an append.
    let plain = Narrowing::MemoryAppend(Some("memory/today.md".into()))
        .apply(p(json!({"path": "memory/today.md", "content": "x"})), true)
        .unwrap_err();
    assert_eq!(plain.denied_reason, DeniedReason::TriggerScope);
    assert!(plain.reason.contains("`append: true`"), "{}", plain.reason);
    assert!(
        Narrowing::MemoryAppend(None)
            .apply(p(json!({"path": "memory/today.md"})), true)
            .is_err()
    );
}

#[test]
fn cron_runs_only_touch_their_own_job_under_every_spelling() {
    let own = Narrowing::CronSelf(Some("job-1".into()));
    assert!(
        own.apply(p(json!({"action": "remove", "jobId": "job-1"})), false)
            .is_ok()
    );
    assert!(
        own.apply(
            p(json!({"action": "get", "job_id": "job-1", "id": "job-1"})),
            false
        )
        .is_ok()
    );
    for bad in [
        json!({"action": "remove", "jobId": 42, "id": "job-1"}),
        json!({"action": "remove", "jobId": "job-1", "id": "victim"}),
        json!({"action": "remove", "job_id": "victim"}),
        json!({"action": "remove"}),
        json!({"action": "add", "jobId": "job-1"}),
        json!({"jobId": "job-1"}),
    ] {
        assert!(own.apply(p(bad.clone()), false).is_err(), "{bad}");
    }
    assert!(
        Narrowing::CronSelf(None)
            .apply(p(json!({"action": "get", "jobId": "x"})), false)
            .is_err()
    );
}
