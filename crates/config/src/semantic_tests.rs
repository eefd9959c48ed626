use pretty_assertions::assert_eq;

use super::*;
use crate::json5_spanned::parse;

fn issues(text: &str) -> Vec<String> {
    let parsed = parse(text).unwrap();
    let mut findings = Findings::default();
    check(&parsed.value, &parsed.spans, &mut findings);
    findings
        .sorted_issues()
        .into_iter()
        .map(|i| format!("{}:{}: {}", i.line, i.key_path, i.message))
        .collect()
}

#[test]
fn agent_ids() {
    assert_eq!(agent_id_problem("main"), None);
    assert_eq!(agent_id_problem("Ops_2-x"), None);
    assert_eq!(agent_id_problem("0day"), None);
    assert_eq!(
        agent_id_problem(" "),
        Some("agent id must not be empty (e.g. `main`)".to_owned())
    );
    assert_eq!(
        agent_id_problem("My Agent!"),
        Some("invalid agent id \"My Agent!\": after lowercasing, an id must match `[a-z0-9][a-z0-9_-]*` and be at most 64 characters (e.g. `my-agent`)".to_owned())
    );
    assert!(agent_id_problem("-lead").is_some());
    assert!(agent_id_problem(&"a".repeat(65)).is_some());
    assert_eq!(agent_id_problem(&"a".repeat(64)), None);
}

#[test]
fn every_policy_list_is_checked() {
    let text = r#"{
  tools: {
    allow: ["read?"],
    byProvider: { openai: { deny: [" "] } },
    groups: { "*": { alsoAllow: ["group:"], toolsBySender: { bob: { deny: ["a b"] } } } },
    toolsBySender: { "*": { allow: ["x[1]"] } },
    sandbox: { tools: { deny: ["{a}"] } },
    subagents: { tools: { allow: ["!x"] } },
  },
  agents: {
    list: [{ id: "a", tools: { deny: ["?"], byProvider: { x: { allow: ["y?"] } }, sandbox: { tools: { alsoAllow: ["z?"] } } } }],
    entries: { b: { tools: { allow: ["w?"] } } },
  },
}"#;
    let paths: Vec<String> = issues(text)
        .into_iter()
        .map(|i| i.split(": ").next().unwrap_or("").to_owned())
        .collect();
    assert_eq!(
        paths,
        vec![
            "3:tools.allow[0]",
            "4:tools.byProvider.openai.deny[0]",
            "5:tools.groups[\"*\"].alsoAllow[0]",
            "5:tools.groups[\"*\"].toolsBySender.bob.deny[0]",
            "6:tools.toolsBySender[\"*\"].allow[0]",
            "7:tools.sandbox.tools.deny[0]",
            "8:tools.subagents.tools.allow[0]",
            "11:agents.list[0].tools.deny[0]",
            "11:agents.list[0].tools.byProvider.x.allow[0]",
            "11:agents.list[0].tools.sandbox.tools.alsoAllow[0]",
            "12:agents.entries.b.tools.allow[0]",
        ]
    );
}

#[test]
fn profiles_are_checked_everywhere() {
    let text = "{ tools: { profile: 'codng', byProvider: { p: { profile: 'x' } } }, agents: { entries: { a: { tools: { profile: 'FULL' } } }, list: [{ id: 'b', tools: { profile: 'mini' } }] } }";
    let got = issues(text);
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(got[0].contains("unknown tool profile `codng`"), "{got:?}");
}

#[test]
fn duplicate_agents_name_both_places() {
    let text = "{ agents: {\n list: [\n  { id: 'Main' },\n  { id: 'main' } ],\n entries: {\n  MAIN: {} } } }";
    assert_eq!(
        issues(text),
        vec![
            "4:agents.list[1].id: duplicate agent id `main`: defined by `agents.list[0].id` (line 3) and by the entry `agents.list[1].id` (line 4); ids are compared after lowercasing and must be unique across `agents.list` and `agents.entries`".to_owned(),
            "6:agents.entries.MAIN: duplicate agent id `main`: defined by `agents.list[0].id` (line 3) and by the key `agents.entries.MAIN` (line 6); ids are compared after lowercasing and must be unique across `agents.list` and `agents.entries`".to_owned(),
        ]
    );
}

#[test]
fn wrong_types_are_tolerated() {
    assert_eq!(
        issues(
            "{ tools: { allow: 'x', byProvider: [], groups: { a: 1 } }, agents: { list: {}, entries: [] } }"
        ),
        Vec::<String>::new()
    );
    assert_eq!(issues("{ tools: 1, agents: 'x' }"), Vec::<String>::new());
}
