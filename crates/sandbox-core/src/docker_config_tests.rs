#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn cfg(v: serde_json::Value) -> DockerConfig {
    serde_json::from_value(v).unwrap()
}

#[test]
fn built_in_defaults() {
    let s = DockerSettings::resolve(None, None);
    assert_eq!(s.image, "openclaw-sandbox:bookworm-slim");
    assert_eq!(s.container_prefix, "talon-sbx-");
    assert_eq!(s.workdir, "/workspace");
    assert!(s.read_only_root);
    assert_eq!(s.tmpfs, vec!["/tmp", "/var/tmp", "/run"]);
    assert_eq!(s.network, "none");
    assert_eq!(s.cap_drop, vec!["ALL"]);
    assert_eq!(
        s.env,
        BTreeMap::from([("LANG".to_owned(), "C.UTF-8".to_owned())])
    );
    assert_eq!(s.user, None);
    assert!(s.binds.is_empty());
    assert!(!s.privileged);
    assert!(!s.dangerously_allow_external_bind_sources);
    assert_eq!(s, DockerSettings::default());
}

#[test]
fn agent_over_defaults() {
    let defaults = cfg(json!({
        "image": "img:global",
        "network": "bridge",
        "tmpfs": ["/tmp"],
        "env": { "A": "1", "B": "2" },
        "binds": ["/g1:/g1", "/g2:/g2"],
        "ulimits": { "nofile": 1024, "nproc": "64:128" },
        "pidsLimit": 100,
        "dangerouslyAllowExternalBindSources": true,
    }));
    let agent = cfg(json!({
        "image": "img:agent",
        "tmpfs": ["/scratch"],
        "env": { "B": "agent", "C": "3" },
        "binds": ["/a1:/a1"],
        "ulimits": { "nofile": { "soft": 10, "hard": 20 } },
        "dangerouslyAllowExternalBindSources": false,
        "memory": "512m",
        "cpus": 1.5,
    }));
    let s = DockerSettings::resolve(Some(&defaults), Some(&agent));
    assert_eq!(s.image, "img:agent");
    assert_eq!(s.network, "bridge");
    // Lists are taken whole, never concatenated ...
    assert_eq!(s.tmpfs, vec!["/scratch"]);
    // ... except binds: the defaults' first.
    assert_eq!(s.binds, vec!["/g1:/g1", "/g2:/g2", "/a1:/a1"]);
    // Env: the defaults' env is the base (no LANG added), agent on top.
    assert_eq!(
        s.env,
        BTreeMap::from([
            ("A".to_owned(), "1".to_owned()),
            ("B".to_owned(), "agent".to_owned()),
            ("C".to_owned(), "3".to_owned()),
        ])
    );
    assert_eq!(
        s.ulimits.get("nofile"),
        Some(&UlimitValue::Range(UlimitRange {
            soft: Some(10),
            hard: Some(20)
        }))
    );
    assert_eq!(
        s.ulimits.get("nproc"),
        Some(&UlimitValue::Text("64:128".to_owned()))
    );
    assert_eq!(s.pids_limit, Some(100));
    assert_eq!(s.memory, Some(SizeValue::Text("512m".to_owned())));
    assert_eq!(s.cpus.as_ref().and_then(Number::as_f64), Some(1.5));
    // An agent's explicit `false` wins over the defaults' `true`.
    assert!(!s.dangerously_allow_external_bind_sources);
}

#[test]
fn agent_env_without_global_env_keeps_lang() {
    let agent = cfg(json!({ "env": { "X": "1" } }));
    let s = DockerSettings::resolve(None, Some(&agent));
    assert_eq!(s.env.get("LANG").map(String::as_str), Some("C.UTF-8"));
    assert_eq!(s.env.get("X").map(String::as_str), Some("1"));
}

#[test]
fn unknown_keys_are_refused_and_keys_are_camel_case() {
    let err = serde_json::from_value::<DockerConfig>(json!({ "imgae": "x" })).unwrap_err();
    assert!(err.to_string().contains("imgae"), "{err}");
    assert!(serde_json::from_value::<DockerConfig>(json!({ "read_only_root": true })).is_err());
    let c =
        cfg(json!({ "readOnlyRoot": false, "seccompProfile": "p", "extraHosts": ["h:1.2.3.4"] }));
    assert_eq!(c.read_only_root, Some(false));
    let back = serde_json::to_value(&c).unwrap();
    assert_eq!(
        back,
        json!({ "readOnlyRoot": false, "seccompProfile": "p", "extraHosts": ["h:1.2.3.4"] })
    );
    let err = serde_json::from_value::<DockerConfig>(json!({ "ulimits": { "n": { "sotf": 1 } } }));
    assert!(err.is_err());
}

#[test]
fn json_schema_is_strict() {
    let schema = schemars::schema_for!(DockerConfig).to_value();
    assert_eq!(schema["additionalProperties"], json!(false));
    assert!(schema["properties"]["dangerouslyAllowContainerNamespaceJoin"].is_object());
    assert!(schema["properties"]["binds"].is_object());
}

#[test]
fn origins_name_the_key_that_set_each_value() {
    let defaults = cfg(json!({ "binds": ["/g:/g"], "network": "bridge" }));
    let agent =
        cfg(json!({ "binds": ["/a:/a", "/b:/b"], "seccompProfile": "x", "capAdd": ["NET_ADMIN"] }));
    let o = DockerOrigins::new(
        "agents.defaults.sandbox.docker",
        Some(&defaults),
        Some("agents.list[2].sandbox.docker"),
        Some(&agent),
    );
    assert_eq!(o.bind_key(0), "agents.defaults.sandbox.docker.binds[0]");
    assert_eq!(o.bind_key(1), "agents.list[2].sandbox.docker.binds[0]");
    assert_eq!(o.bind_key(2), "agents.list[2].sandbox.docker.binds[1]");
    assert_eq!(o.key("network"), "agents.defaults.sandbox.docker.network");
    assert_eq!(
        o.key("seccompProfile"),
        "agents.list[2].sandbox.docker.seccompProfile"
    );
    assert_eq!(o.cap_add_key(0), "agents.list[2].sandbox.docker.capAdd[0]");
    // No agent block applied: everything is the defaults'.
    let o = DockerOrigins::new("d", Some(&defaults), Some("a"), None);
    assert_eq!(o.agent_key, None);
    assert_eq!(o.key("seccompProfile"), "d.seccompProfile");
    assert_eq!(o.bind_key(1), "d.binds[1]");
}
