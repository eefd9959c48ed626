use std::collections::BTreeMap;

use pretty_assertions::assert_eq;

use super::*;

fn vars(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn host() -> Vec<(String, String)> {
    vars(&[
        ("PATH", "/usr/bin:/bin"),
        ("HOME", "/home/op"),
        ("LANG", "C.UTF-8"),
        ("LC_ALL", "C"),
        ("MY_SETTING", "vi"),
        ("OPENAI_API_KEY", "sk-fake"),
        ("anthropic_api_key", "fake"),
        ("AWS_SECRET_ACCESS_KEY", "fake"),
        ("GITHUB_TOKEN", "fake"),
        ("DB_PASSWORD", "fake"),
        ("TALON_GATEWAY_TOKEN", "fake"),
        ("TALON_CONFIG", "/etc/talon.json"),
        ("DOCKER_HOST", "unix:///x"),
        ("SSH_AUTH_SOCK", "/tmp/agent"),
        ("LD_PRELOAD", "/x.so"),
        ("GIT_AUTHOR_NAME", "Op"),
    ])
}

fn names(env: &BTreeMap<String, String>) -> Vec<&str> {
    env.keys().map(String::as_str).collect()
}

fn config(json: serde_json::Value) -> ExecEnvConfig {
    serde_json::from_value(json).unwrap()
}

#[test]
fn core_keeps_only_the_core_names() {
    let env = EnvPolicy::default().inherited(host());
    assert_eq!(names(&env), ["HOME", "LANG", "LC_ALL", "PATH"]);
}

#[test]
fn all_keeps_everything_but_the_excludes() {
    let policy =
        EnvPolicy::from_config(&config(serde_json::json!({"inherit": "all"})), None).unwrap();
    let env = policy.inherited(host());
    assert_eq!(
        names(&env),
        [
            "GIT_AUTHOR_NAME",
            "HOME",
            "LANG",
            "LC_ALL",
            "MY_SETTING",
            "PATH"
        ]
    );
    assert_eq!(
        policy.withheld("anthropic_api_key"),
        Some(Withheld::DefaultExclude)
    );
    assert_eq!(
        policy.withheld("TALON_GATEWAY_TOKEN"),
        Some(Withheld::TalonRead)
    );
    assert_eq!(policy.withheld("DOCKER_HOST"), Some(Withheld::TalonRead));
    assert_eq!(policy.withheld("MY_SETTING"), None);
}

#[test]
fn none_inherits_nothing_but_set_still_applies() {
    let policy = EnvPolicy::from_config(
        &config(serde_json::json!({"inherit": "none", "set": {"FOO": "bar"}})),
        None,
    )
    .unwrap();
    assert!(policy.inherited(host()).is_empty());
    let env = policy.host_env(host());
    assert_eq!(env, BTreeMap::from([("FOO".to_owned(), "bar".to_owned())]));
}

#[test]
fn configured_excludes_and_include_only_restrict_further() {
    let policy = EnvPolicy::from_config(
        &config(serde_json::json!({"inherit": "all", "exclude": ["my_*"], "includeOnly": ["*"]})),
        Some(&AgentExecEnvConfig {
            include_only: Some(vec!["PATH".into(), "HOME".into(), "MY_SETTING".into()]),
            ..AgentExecEnvConfig::default()
        }),
    )
    .unwrap();
    assert_eq!(names(&policy.inherited(host())), ["HOME", "PATH"]);
    assert_eq!(policy.withheld("MY_SETTING"), Some(Withheld::Exclude));
    assert_eq!(policy.withheld("LANG"), Some(Withheld::NotIncluded));
}

#[test]
fn the_agent_section_layers_over_the_global_one() {
    let global = config(serde_json::json!({
        "inherit": "all", "exclude": ["MY_SETTING"], "set": {"A": "1", "B": "1"}
    }));
    let agent = AgentExecEnvConfig {
        inherit: Some(InheritMode::Core),
        exclude: vec!["LANG".into()],
        set: BTreeMap::from([("B".to_owned(), "2".to_owned())]),
        ..AgentExecEnvConfig::default()
    };
    let policy = EnvPolicy::from_config(&global, Some(&agent)).unwrap();
    assert_eq!(policy.inherit(), InheritMode::Core);
    assert_eq!(policy.withheld("LANG"), Some(Withheld::Exclude));
    assert_eq!(policy.withheld("MY_SETTING"), Some(Withheld::NotInherited));
    assert_eq!(
        policy.set_vars(),
        &BTreeMap::from([
            ("A".to_owned(), "1".to_owned()),
            ("B".to_owned(), "2".to_owned())
        ])
    );
}

#[test]
fn openclaw_lists_still_apply_under_all() {
    let policy =
        EnvPolicy::from_config(&config(serde_json::json!({"inherit": "all"})), None).unwrap();
    let env = policy.inherited(vars(&[
        ("BASH_FUNC_x%%", "() { :; }"),
        ("NODE_OPTIONS", "-r x"),
    ]));
    assert!(env.is_empty(), "{env:?}");
}

#[test]
fn explain_lists_names_never_values() {
    let policy = EnvPolicy::from_config(
        &config(serde_json::json!({"set": {"MY_SETTING": "s3cr3t-value"}})),
        None,
    )
    .unwrap();
    let explain = policy.explain(host());
    assert_eq!(explain.inherited_names, ["HOME", "LANG", "LC_ALL", "PATH"]);
    assert_eq!(explain.set_names, ["MY_SETTING"]);
    let json = serde_json::to_string(&explain).unwrap();
    for value in ["s3cr3t-value", "sk-fake", "/usr/bin", "/home/op"] {
        assert!(!json.contains(value), "{value} leaked: {json}");
    }
    assert_eq!(
        serde_json::to_value(&explain).unwrap()["inherit"],
        serde_json::json!("core")
    );
}

#[test]
fn config_problems_are_reported_with_their_key() {
    let bad = config(serde_json::json!({
        "exclude": ["OK_*", "BAD?"],
        "includeOnly": ["[x]"],
        "set": {"LD_PRELOAD": "/x.so", "TALON_X": "1", "1BAD": "x", "NUL": "a\u{0}b", "FINE": "1"}
    }));
    let keys: Vec<String> = bad.validate().into_iter().map(|e| e.key).collect();
    assert_eq!(
        keys,
        [
            "exclude[1]",
            "includeOnly[0]",
            "set.1BAD",
            "set.LD_PRELOAD",
            "set.NUL",
            "set.TALON_X"
        ]
    );
    let err = EnvPolicy::from_config(&bad, None).unwrap_err();
    assert_eq!(err.key, "exclude[1]");
    assert!(err.message.contains("only wildcard"), "{err}");
}

#[test]
fn unknown_keys_and_modes_do_not_deserialize() {
    assert!(
        serde_json::from_value::<ExecEnvConfig>(serde_json::json!({"inherit": "some"})).is_err()
    );
    assert!(serde_json::from_value::<ExecEnvConfig>(serde_json::json!({"exlude": []})).is_err());
}
