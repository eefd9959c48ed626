use std::collections::BTreeMap;
use talon_config::secrets::SecretStore;

use super::*;

fn host() -> Vec<(String, String)> {
    [
        ("PATH", "/usr/bin"),
        ("HOME", "/home/op"),
        ("OPENAI_API_KEY", "sk-fake"),
        ("TALON_GATEWAY_TOKEN", "gw"),
        ("EXTRA", "x"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect()
}

#[test]
fn a_server_gets_the_core_base_and_its_own_env() {
    let config = McpServerConfig {
        command: Some("srv".into()),
        env: BTreeMap::from([("SERVER_MODE".to_owned(), "ro".to_owned())]),
        ..McpServerConfig::default()
    };
    let env = server_env_from(
        "s",
        &config,
        &EnvPolicy::default(),
        &SecretStore::default(),
        host(),
    )
    .unwrap();
    assert_eq!(
        env.keys().map(String::as_str).collect::<Vec<_>>(),
        ["HOME", "PATH", "SERVER_MODE"]
    );
}

#[test]
fn a_blocked_configured_key_stops_the_server() {
    let config = McpServerConfig {
        command: Some("srv".into()),
        env: BTreeMap::from([("LD_PRELOAD".to_owned(), "/x.so".to_owned())]),
        ..McpServerConfig::default()
    };
    let err = server_env_from(
        "s",
        &config,
        &EnvPolicy::default(),
        &SecretStore::default(),
        host(),
    )
    .unwrap_err();
    assert_eq!(err.kind(), StartErrorKind::Config);
    assert_eq!(
        err.to_string(),
        "env keys LD_PRELOAD of mcp.servers.s.env are refused by the exec env policy; remove them"
    );
}

#[test]
fn the_agents_env_policy_builds_the_base() {
    let config = McpServerConfig {
        command: Some("srv".into()),
        env: BTreeMap::from([("SERVER_MODE".to_owned(), "ro".to_owned())]),
        ..McpServerConfig::default()
    };
    let policy = EnvPolicy::from_config(
        &talon_exec_env::ExecEnvConfig {
            inherit: talon_exec_env::InheritMode::None,
            set: BTreeMap::from([("CORP_MIRROR".to_owned(), "m".to_owned())]),
            ..talon_exec_env::ExecEnvConfig::default()
        },
        None,
    )
    .unwrap();
    let env = server_env_from("s", &config, &policy, &SecretStore::default(), host()).unwrap();
    assert_eq!(
        env.keys().map(String::as_str).collect::<Vec<_>>(),
        ["CORP_MIRROR", "SERVER_MODE"],
        "inherit none keeps no host variable; the policy's set and the server's env remain"
    );
}

#[test]
fn secret_references_resolve_from_the_secrets_file_and_name_the_key_when_missing() {
    let config: McpServerConfig = serde_json::from_value(serde_json::json!({
        "command": "x", "env": {"API_TOKEN": "${secret:svc}"}
    }))
    .unwrap();
    let store = SecretStore::from_map([("svc".to_owned(), "s3cret".to_owned())].into());
    let env = server_env_from("s", &config, &EnvPolicy::default(), &store, host()).unwrap();
    assert_eq!(env.get("API_TOKEN").map(String::as_str), Some("s3cret"));
    let err = server_env_from(
        "s",
        &config,
        &EnvPolicy::default(),
        &SecretStore::default(),
        host(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("mcp.servers.s.env.API_TOKEN"), "{err}");
    assert!(
        err.contains("secret `svc` is not in the secrets file"),
        "{err}"
    );
}
