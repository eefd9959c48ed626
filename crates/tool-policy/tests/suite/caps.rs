use pretty_assertions::assert_eq;
use talon_tool_policy::{cap_cron_job_tools, intersect_with_parent};

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

#[test]
fn cron_job_without_request_gets_the_creators_tools() {
    let capped = cap_cron_job_tools(&s(&["read", "exec"]), None);
    assert_eq!(capped.tools, s(&["read", "exec"]));
    assert!(capped.dropped.is_empty());
}

#[test]
fn cron_job_request_is_capped_and_overreach_reported() {
    let capped = cap_cron_job_tools(
        &s(&["read", "write", "web_fetch"]),
        Some(&s(&["group:fs", "exec", "web_*", "gateway"])),
    );
    assert_eq!(capped.tools, s(&["read", "write", "web_fetch"]));
    assert_eq!(capped.dropped, s(&["exec", "gateway"]));
    let capped = cap_cron_job_tools(&s(&["read"]), Some(&s(&["*"])));
    assert_eq!(capped.tools, s(&["read"]));
}

#[test]
fn child_is_capped_by_parent() {
    assert_eq!(
        intersect_with_parent(&s(&["read", "exec", "cron"]), &s(&["CRON", "read"])),
        s(&["read", "cron"])
    );
}
