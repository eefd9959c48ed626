use pretty_assertions::assert_eq;

use super::*;

fn hook(id: &str, matcher: Option<&[&str]>) -> CommandHookConfig {
    CommandHookConfig {
        id: id.into(),
        command: vec!["/bin/true".into()],
        matcher: matcher.map(|m| m.iter().map(|s| (*s).to_owned()).collect()),
        ..CommandHookConfig::default()
    }
}

fn problems(config: &HooksConfig) -> Vec<(String, String)> {
    config.validate()
}

#[test]
fn an_empty_matcher_is_an_error() {
    let config = HooksConfig {
        before_tool_call: vec![hook("a", Some(&[]))],
        ..HooksConfig::default()
    };
    assert_eq!(
        problems(&config),
        vec![(
            "beforeToolCall[0].matcher".to_owned(),
            "an empty matcher matches no tool; omit it to match every tool".to_owned()
        )]
    );
}

#[test]
fn bad_matcher_entries_name_the_entry_and_its_key_path() {
    let config = HooksConfig {
        after_tool_call: vec![
            hook(
                "ok",
                Some(&["exec", "*", "group:fs", "GROUP:Runtime", "mcp.srv:tool-1"]),
            ),
            hook(
                "bad",
                Some(&[
                    "exec",
                    "",
                    "web search",
                    " exec",
                    "exec*",
                    "ex/ec",
                    "group:nope",
                    "group:plugins",
                    "é",
                ]),
            ),
        ],
        ..HooksConfig::default()
    };
    let found = problems(&config);
    let keys: Vec<&str> = found.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        vec![
            "afterToolCall[1].matcher[1]",
            "afterToolCall[1].matcher[2]",
            "afterToolCall[1].matcher[3]",
            "afterToolCall[1].matcher[4]",
            "afterToolCall[1].matcher[5]",
            "afterToolCall[1].matcher[6]",
            "afterToolCall[1].matcher[7]",
            "afterToolCall[1].matcher[8]",
        ]
    );
    let message = |i: usize| found.get(i).map(|(_, m)| m.as_str()).unwrap_or("");
    assert!(message(0).contains("empty"), "{}", message(0));
    assert!(message(1).contains("`web search`"), "{}", message(1));
    assert!(message(1).contains("whitespace"), "{}", message(1));
    assert!(message(2).contains("whitespace"), "{}", message(2));
    assert!(message(3).contains("`exec*`"), "{}", message(3));
    assert!(message(4).contains("`ex/ec`"), "{}", message(4));
    assert!(message(5).contains("`group:nope`"), "{}", message(5));
    assert!(message(5).contains("group:fs"), "{}", message(5));
    assert!(message(6).contains("`group:plugins`"), "{}", message(6));
    assert!(message(7).contains('é'), "{}", message(7));
}

#[test]
fn matcher_problems_are_reported_for_every_list() {
    let config = HooksConfig {
        before_tool_call: vec![hook("a", Some(&["group:x"]))],
        after_tool_call: vec![hook("b", Some(&[]))],
        resolve_exec_env: vec![hook("c", Some(&["a b"]))],
    };
    let keys: Vec<String> = problems(&config).into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        vec![
            "beforeToolCall[0].matcher[0]",
            "afterToolCall[0].matcher",
            "resolveExecEnv[0].matcher[0]",
        ]
    );
}

#[test]
fn matcher_ids_expand_core_groups() {
    assert_eq!(hook("a", None).matcher_ids(), None);
    assert_eq!(
        hook("a", Some(&["bash", "group:runtime"])).matcher_ids(),
        Some(vec![
            "bash".to_owned(),
            "exec".to_owned(),
            "process".to_owned(),
            "code_execution".to_owned()
        ])
    );
    assert_eq!(
        hook("a", Some(&["GROUP:FS"])).matcher_ids(),
        Some(
            ["read", "write", "edit", "apply_patch"]
                .map(str::to_owned)
                .to_vec()
        )
    );
    assert_eq!(hook("a", Some(&["exec", "*"])).matcher_ids(), None);
}

#[test]
fn matcher_ids_of_an_invalid_matcher_match_every_tool() {
    // Only reachable without validation; a hook must never silently match
    // nothing.
    assert_eq!(hook("a", Some(&[])).matcher_ids(), None);
    assert_eq!(hook("a", Some(&["exec", "group:nope"])).matcher_ids(), None);
    assert_eq!(hook("a", Some(&["exec", "ex ec"])).matcher_ids(), None);
}
