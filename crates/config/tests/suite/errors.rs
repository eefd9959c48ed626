use pretty_assertions::assert_eq;
use talon_config::{ConfigError, Issue, load, load_str};

use super::{fixture, issues};

fn issue(key_path: &str, line: u32, column: u32, message: &str) -> Issue {
    Issue {
        key_path: key_path.to_owned(),
        line,
        column,
        message: message.to_owned(),
    }
}

#[test]
fn typo_in_tools_names_path_line_and_suggestion() {
    let text = "{\n  tools: {\n    profile: 'coding',\n    alow: ['read'],\n  },\n}";
    assert_eq!(
        issues(text),
        vec![issue(
            "tools.alow",
            4,
            5,
            "unknown key `alow` (did you mean `allow`?)"
        )]
    );
}

#[test]
fn typo_deep_inside_an_agent_sandbox_policy() {
    let text = "{\n  agents: {\n    list: [\n      { id: 'a' },\n      { id: 'b', tools: { sandbox: { tools: {\n        dney: ['exec'],\n      } } } },\n    ],\n  },\n}";
    assert_eq!(
        issues(text),
        vec![issue(
            "agents.list[1].tools.sandbox.tools.dney",
            6,
            9,
            "unknown key `dney` (did you mean `deny`?)"
        )]
    );
}

#[test]
fn wrong_type_points_at_the_value() {
    let text = "{\n  tools: {\n    deny: \"exec\",\n  },\n}";
    assert_eq!(
        issues(text),
        vec![issue(
            "tools.deny",
            3,
            11,
            "expected an array, found a string (\"exec\") (write [\"exec\"] for a list of one)"
        )]
    );
}

#[test]
fn bad_glob_uses_the_policy_fix_it() {
    let got = issues("{ tools: { deny: ['exec', 'web_?'] } }");
    assert_eq!(got.len(), 1);
    assert_eq!(
        (got[0].key_path.as_str(), got[0].line, got[0].column),
        ("tools.deny[1]", 1, 27)
    );
    assert_eq!(
        got[0].message,
        "`web_?` uses `?`, which is not a wildcard here: only `*` is (write e.g. `web_*`)"
    );
}

#[test]
fn bad_profile_lists_the_valid_ones() {
    let got = issues("{ agents: { list: [{ id: 'a', tools: { profile: 'admin' } }] } }");
    assert_eq!(
        got,
        vec![issue(
            "agents.list[0].tools.profile",
            1,
            49,
            "unknown tool profile `admin` (expected one of: minimal, coding, messaging, full)"
        )]
    );
}

#[test]
fn duplicate_keys_are_refused() {
    let text = "{\n  tools: {\n    deny: ['exec'],\n    deny: [],\n  },\n}";
    let got = issues(text);
    assert_eq!(got.len(), 1);
    assert_eq!(
        (got[0].key_path.as_str(), got[0].line, got[0].column),
        ("tools.deny", 4, 5)
    );
    assert!(
        got[0].message.contains("first defined at line 3")
            && got[0].message.contains("repeated at line 4"),
        "{}",
        got[0].message
    );
}

#[test]
fn duplicate_agent_ids_are_refused() {
    let text = "{ agents: {\n  list: [{ id: 'ops' }, { id: 'OPS' }],\n  entries: { ops: {} },\n} }";
    let got = issues(text);
    let where_: Vec<(&str, u32)> = got.iter().map(|i| (i.key_path.as_str(), i.line)).collect();
    assert_eq!(
        where_,
        vec![("agents.list[1].id", 2), ("agents.entries.ops", 3)]
    );
    assert!(
        got[1].message.contains("`agents.list[0].id` (line 2)"),
        "{}",
        got[1].message
    );
}

#[test]
fn bad_agent_ids_are_refused() {
    let got = issues("{ agents: { list: [{ id: '' }], entries: { 'Ops Team': {} } } }");
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].message, "agent id must not be empty (e.g. `main`)");
    assert!(
        got[1].message.contains("(e.g. `ops-team`)"),
        "{}",
        got[1].message
    );
}

#[test]
fn non_finite_numbers_are_refused_where_they_appear() {
    let got = issues("{ sandbox: { limits: { max: Infinity } } }");
    assert_eq!(
        got,
        vec![issue(
            "sandbox.limits.max",
            1,
            29,
            "non-finite number `Infinity` is not allowed (numbers must be finite)"
        )]
    );
}

#[test]
fn several_errors_are_all_reported_in_file_order() {
    let err = load(&fixture("multi-error.json5")).unwrap_err();
    let got: Vec<(String, u32)> = err
        .issues()
        .iter()
        .map(|i| (i.key_path.clone(), i.line))
        .collect();
    assert_eq!(
        got,
        vec![
            ("tools.alow".to_owned(), 3),
            ("tools.deny".to_owned(), 4),
            ("tools.profile".to_owned(), 5),
            ("tools.byProvider[\"openai/gpt-5\"].allow[0]".to_owned(), 7),
            ("agents.defaults.sandbox.mode".to_owned(), 12),
            ("agents.list[1].id".to_owned(), 16),
            ("agents.list[1].tools.sandbox.tools.dney".to_owned(), 16),
            ("agents.list[2].id".to_owned(), 17),
            ("tools2".to_owned(), 20),
        ]
    );
    let display = err
        .to_string()
        .replace(env!("CARGO_MANIFEST_DIR"), "<crate>");
    insta::assert_snapshot!("multi_error_display", display);
}

#[test]
fn syntax_errors_give_line_and_column() {
    let err = load_str(
        "{\n  tools: {\n    deny: ['exec']\n    allow: [],\n  },\n}",
        "talon.json",
    )
    .unwrap_err();
    match &err {
        ConfigError::Syntax {
            origin,
            line,
            column,
            message,
        } => {
            assert_eq!((origin.as_str(), *line, *column), ("talon.json", 4, 5));
            assert_eq!(
                message,
                "expected `,` or `}` after the value of \"deny\", found `a`"
            );
        }
        other => panic!("expected a syntax error, got {other:?}"),
    }
    assert_eq!(
        err.to_string(),
        "talon.json:4:5: expected `,` or `}` after the value of \"deny\", found `a`"
    );
    assert_eq!(err.issues(), &[]);
}

#[test]
fn refused_openclaw_restrictions_are_listed_with_other_problems() {
    let got = issues("{ tools: { message: { crossContext: {} }, alow: [] } }");
    let paths: Vec<&str> = got.iter().map(|i| i.key_path.as_str()).collect();
    assert_eq!(paths, vec!["tools.message", "tools.alow"]);
}

#[test]
fn session_visibility_is_typed_and_a_bad_value_is_named() {
    let got = issues(
        "{ tools: { sessions: { visibility: \"everyone\" }, agentToAgent: { enabled: true, alow: [] } } }",
    );
    let paths: Vec<&str> = got.iter().map(|i| i.key_path.as_str()).collect();
    assert_eq!(
        paths,
        vec!["tools.sessions.visibility", "tools.agentToAgent.alow"]
    );
}

#[test]
fn subagent_limits_out_of_range_are_named_with_their_keys() {
    let got = issues(
        "{ agents: { defaults: { subagents: { maxSpawnDepth: 9, maxChildrenPerAgent: 0, runTimeoutSeconds: 0, maxConcurrent: 0 } }, list: [ { id: \"a\", subagents: { allowAgents: [\"b\"], maxDepth: 2 } } ] } }",
    );
    let mut paths: Vec<&str> = got.iter().map(|i| i.key_path.as_str()).collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        vec![
            "agents.defaults.subagents.maxChildrenPerAgent",
            "agents.defaults.subagents.maxConcurrent",
            "agents.defaults.subagents.maxSpawnDepth",
            "agents.defaults.subagents.runTimeoutSeconds",
            "agents.list[0].subagents.maxDepth",
        ],
        "{got:?}"
    );
    let timeout = got
        .iter()
        .find(|i| i.key_path.ends_with("runTimeoutSeconds"))
        .unwrap();
    assert!(timeout.message.contains("deadline"), "{timeout:?}");
}

#[test]
fn tools_fs_is_typed_and_a_bad_key_is_named() {
    let got = issues("{ tools: { fs: { workspaceOnly: \"yes\", extra: 1 } } }");
    let paths: Vec<&str> = got.iter().map(|i| i.key_path.as_str()).collect();
    assert!(paths.iter().all(|p| p.starts_with("tools.fs")), "{paths:?}");
    assert!(!paths.is_empty());
}

#[test]
fn an_empty_allow_list_is_refused_wherever_it_is_written() {
    let text = "{\n  tools: {\n    allow: [],\n    sandbox: { tools: { allow: [''] } },\n  },\n  agents: { list: [{ id: 'a', tools: { allow: [], alsoAllow: ['read'] } }] },\n}";
    let reason = talon_tool_policy::EMPTY_ALLOW_REASON;
    let found = issues(text);
    let keys: Vec<(&str, u32)> = found
        .iter()
        .filter(|i| i.message == reason)
        .map(|i| (i.key_path.as_str(), i.line))
        .collect();
    assert_eq!(
        keys,
        vec![
            ("tools.allow", 3),
            ("tools.sandbox.tools.allow", 4),
            ("agents.list[0].tools.allow", 6),
        ],
        "{found:#?}"
    );
    assert!(reason.contains("Remove the key") && reason.contains("deny: [\"*\"]"));
}

#[test]
fn a_non_empty_allow_list_and_an_empty_deny_list_load() {
    load_str(
        "{ tools: { allow: ['read'], deny: [], alsoAllow: [] } }",
        "t.json",
    )
    .unwrap();
}

#[test]
fn egress_opt_ins_are_known_keys_and_their_misspellings_are_refused() {
    // The opt-ins load.
    let ok = "{ tools: { web: { search: { ssrfAllowlist: { hosts: ['search.internal'], cidrs: ['127.0.0.1/32'] } } } },\n  mcp: { servers: { local: { url: 'http://127.0.0.1:9000/mcp', allowPrivateNetwork: true } } } }";
    let loaded = load_str(ok, "talon.json").unwrap();
    let search = loaded.config.tools.unwrap().web.unwrap().search.unwrap();
    assert_eq!(search.ssrf_allowlist.unwrap().cidrs, vec!["127.0.0.1/32"]);
    let mcp = loaded.config.mcp.unwrap();
    assert!(mcp.servers.0[0].1.allows_private_network());
    // A misspelt key is refused at its place, never ignored.
    let got =
        issues("{ tools: { web: { search: { ssrfAllowList: { cidrs: ['127.0.0.1/32'] } } } } }");
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].key_path, "tools.web.search.ssrfAllowList");
    assert!(got[0].message.contains("ssrfAllowlist"), "{got:?}");
    let got = issues(
        "{ mcp: { servers: { local: { url: 'http://127.0.0.1/', allowPrivateNetworks: true } } } }",
    );
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].key_path, "mcp.servers.local.allowPrivateNetworks");
    // The opt-in means nothing on a stdio server: refused naming the key.
    let got = issues("{ mcp: { servers: { s: { command: 'srv', allowPrivateNetwork: true } } } }");
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].key_path, "mcp.servers.s.allowPrivateNetwork");
}

#[test]
fn the_image_provider_block_is_typed() {
    let loaded = load_str(
        r#"{ tools: { imageProvider: { baseUrl: "https://vision.example/v1", model: "m", apiKey: "${secret:VISION}" } } }"#,
        "talon.json",
    )
    .expect("loads");
    let p = loaded
        .config
        .tools
        .as_ref()
        .and_then(|t| t.image_provider.as_ref())
        .expect("imageProvider");
    assert_eq!(p.base_url, "https://vision.example/v1");
    assert_eq!(p.api_key.as_deref(), Some("${secret:VISION}"));
    // A misspelt key and a missing model are refused at their place.
    let text = "{\n  tools: {\n    imageProvider: {\n      baseUrl: 'http://x/v1',\n      modle: 'm',\n    },\n  },\n}";
    let found = issues(text);
    assert_eq!(
        found,
        vec![
            issue("tools.imageProvider", 3, 20, "missing required key `model`"),
            issue(
                "tools.imageProvider.modle",
                5,
                7,
                "unknown key `modle` (did you mean `model`?)"
            ),
        ]
    );
}
