use pretty_assertions::assert_eq;
use talon_tool_policy::{PolicyConfig, PolicyEngine, RunContext, ToolUniverse, cap_cron_job_tools};

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
fn child_is_capped_by_parent_through_the_inherited_layer() {
    let engine = PolicyEngine::new(&PolicyConfig::default()).unwrap();
    let mut ctx = RunContext::new("main");
    ctx.inherited = Some(s(&["CRON", "read"]));
    let out = engine.evaluate(&ctx, &ToolUniverse::core());
    assert_eq!(out.tools, s(&["read", "cron"]));
    assert_eq!(out.removed_by("exec").unwrap().layer, "inherited");
}

#[test]
fn a_capped_cron_job_runs_with_at_most_its_creators_tools() {
    let engine = PolicyEngine::new(&PolicyConfig::default()).unwrap();
    let creator = s(&["read", "web_fetch"]);
    let capped = cap_cron_job_tools(&creator, Some(&s(&["*"])));
    let mut ctx = RunContext::new("main");
    ctx.trigger = talon_tool_policy::Trigger::Cron;
    ctx.inherited = Some(capped.tools);
    assert_eq!(engine.evaluate(&ctx, &ToolUniverse::core()).tools, creator);
}
