use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::json5_spanned::parse;

fn issues(text: &str) -> Vec<String> {
    let parsed = parse(text).unwrap();
    let mut findings = Findings::default();
    check(
        crate::load::validation_schema(),
        &parsed.value,
        &parsed.spans,
        &mut findings,
    );
    findings
        .sorted_issues()
        .into_iter()
        .map(|i| format!("{}:{}: {}: {}", i.line, i.column, i.key_path, i.message))
        .collect()
}

#[test]
fn valid_documents_have_no_issues() {
    assert_eq!(issues("{}"), Vec::<String>::new());
    assert_eq!(
        issues(
            r#"{ "$schema": "x", tools: { profile: "coding", deny: null, byProvider: { "openai/gpt-5": { allow: ["read"] } }, exec: { timeoutSec: 5 } },
                 agents: { defaults: { sandbox: { mode: "non-main", docker: { image: "x" } } }, list: [{ id: "a", sandbox: null }], entries: {} },
                 skills: { allowBundled: [] }, gateway: null }"#
        ),
        Vec::<String>::new()
    );
}

#[test]
fn sections_the_tools_read_are_checked_structurally() {
    // These used to be free-form JSON, checked (if at all) by whoever read
    // them; now they are part of the schema.
    assert_eq!(
        issues(r#"{ tools: { exec: { anything: [1] } }, skills: 5 }"#),
        vec![
            "1:20: tools.exec.anything: unknown key `anything`; expected one of `backgroundMs`, `timeoutSec`, `maxTimeoutSec`, `cleanupMs`, `maxOutputBytes`, `security`, `ask`, `env`",
            "1:47: skills: expected an object, found a number (`5`)",
        ]
    );
}

#[test]
fn unknown_keys_with_suggestions() {
    assert_eq!(
        issues("{\n tools: {\n  alow: [],\n  zzz: 1 } }"),
        vec![
            "3:3: tools.alow: unknown key `alow` (did you mean `allow`?)".to_owned(),
            "4:3: tools.zzz: unknown key `zzz`; expected one of `profile`, `allow`, `alsoAllow`, `deny`, `byProvider`, `groups`, `toolsBySender`, `sandbox`, `subagents`, `fs`, `exec`, `web`, `imageProvider`, `loopDetection`, `hooks`, `sessions`, `agentToAgent`".to_owned(),
        ]
    );
    assert_eq!(
        issues(r#"{ tools: { byProvider: { "openai/gpt-5": { dney: [] } } } }"#),
        vec![r#"1:44: tools.byProvider["openai/gpt-5"].dney: unknown key `dney` (did you mean `deny`?)"#.to_owned()]
    );
}

#[test]
fn wrong_types_point_at_the_value() {
    assert_eq!(
        issues("{ tools: {\n deny: \"exec\" } }"),
        vec![r#"2:8: tools.deny: expected an array, found a string ("exec") (write ["exec"] for a list of one)"#.to_owned()]
    );
    assert_eq!(
        issues("{ tools: { allow: [1, 'ok', true] } }"),
        vec![
            "1:20: tools.allow[0]: expected a string, found a number (`1`)".to_owned(),
            "1:29: tools.allow[2]: expected a string, found a boolean (`true`)".to_owned(),
        ]
    );
    assert_eq!(
        issues("{ agents: { list: [{ id: 'a', default: 'true' }] } }"),
        vec![r#"1:40: agents.list[0].default: expected a boolean (`true` or `false`), found a string ("true") (write true without quotes)"#.to_owned()]
    );
    assert_eq!(
        issues("{ tools: [] }"),
        vec!["1:10: tools: expected an object, found an array".to_owned()]
    );
}

#[test]
fn bad_enum_values() {
    assert_eq!(
        issues("{ agents: { defaults: { sandbox: { mode: 'nonmain', scope: 3 } } } }"),
        vec![
            "1:42: agents.defaults.sandbox.mode: invalid value \"nonmain\": expected one of `off`, `non-main`, `all` (did you mean `non-main`?)".to_owned(),
            "1:60: agents.defaults.sandbox.scope: invalid value a number (`3`): expected one of `session`, `agent`, `shared`".to_owned(),
        ]
    );
}

#[test]
fn missing_required_keys() {
    assert_eq!(
        issues("{ agents: { list: [{ name: 'x' }] } }"),
        vec!["1:20: agents.list[0]: missing required key `id`".to_owned()]
    );
}

#[test]
fn messages() {
    assert_eq!(describe_value(&json!("x".repeat(100))).chars().count(), 54);
    assert_eq!(
        unknown_key_message("a\u{0}b", &["allow"]),
        r#"unknown key "a\u0000b"; expected one of `allow`"#
    );
    assert_eq!(
        type_message(&["integer".to_owned(), "null".to_owned()], &json!(1.5)),
        "expected an integer, found a number (`1.5`)"
    );
}

#[test]
fn numeric_bounds_and_integers() {
    let schema = json!({
        "type": "object",
        "properties": { "n": { "type": "integer", "minimum": 0, "maximum": 10 } }
    });
    let check_one = |text: &str| {
        let parsed = parse(text).unwrap();
        let mut findings = Findings::default();
        check(&schema, &parsed.value, &parsed.spans, &mut findings);
        findings
            .issues
            .into_iter()
            .map(|i| i.message)
            .collect::<Vec<_>>()
    };
    assert_eq!(check_one("{n: 5}"), Vec::<String>::new());
    assert_eq!(
        check_one("{n: -1}"),
        vec!["must be at least 0, found -1".to_owned()]
    );
    assert_eq!(
        check_one("{n: 11}"),
        vec!["must be at most 10, found 11".to_owned()]
    );
    assert_eq!(
        check_one("{n: 1.5}"),
        vec!["expected an integer, found a number (`1.5`)".to_owned()]
    );
}
