#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;

/// The gateway settings of a config whose `gateway` section is `v`, loaded
/// the way the daemon loads its file.
fn section(v: serde_json::Value) -> Result<GatewaySection, talon_config::ConfigError> {
    let text = json!({ "gateway": v }).to_string();
    let loaded = talon_config::load_str(&text, "talon.json")?;
    Ok(GatewaySection::from_config(&loaded.config.gateway_config()))
}

fn defaults() -> GatewaySection {
    GatewaySection::from_config(&talon_config::GatewayConfig::default())
}

#[test]
fn defaults_to_loopback_18789() {
    let s = defaults();
    assert_eq!(s.listen_addr(None), "127.0.0.1:18789".parse().unwrap());
    assert!(s.tokens.is_empty());
}

#[test]
fn reads_port_bind_tokens_and_limits_and_ignores_other_openclaw_keys() {
    let v = json!({
        "port": 19000, "bind": "lan", "controlUi": {"enabled": true},
        "auth": {"token": "0123456789abcdef0", "tokens": [{"token": "reader-0123456789", "scope": "read-only"}]},
        "limits": {"outboundFrames": 8, "drainTimeoutMs": 50}
    });
    let s = section(v).unwrap();
    assert_eq!(s.listen_addr(None), "0.0.0.0:19000".parse().unwrap());
    assert_eq!(
        s.tokens.scope_of("0123456789abcdef0"),
        Some(Scope::Operator)
    );
    assert_eq!(
        s.tokens.scope_of("reader-0123456789"),
        Some(Scope::ReadOnly)
    );
    assert_eq!(s.limits.outbound_frames, 8);
    assert_eq!(s.limits.drain_timeout, Duration::from_millis(50));
    assert_eq!(
        s.listen_addr(Some("127.0.0.1:1".parse().unwrap())),
        "127.0.0.1:1".parse().unwrap()
    );
}

#[test]
fn bad_values_name_the_key() {
    let cases = [
        (json!({"bind": "moon"}), "gateway.bind"),
        (json!({"auth": {"token": "short"}}), "gateway.auth.token"),
        (
            json!({"auth": {"tokens": [{"token": "0123456789abcdef0", "scope": "root"}]}}),
            "gateway.auth.tokens[0].scope",
        ),
        (
            json!({"limits": {"outboundFrames": 0}}),
            "gateway.limits.outboundFrames",
        ),
        (json!({"limits": {"bogus": 1}}), "gateway.limits.bogus"),
        (json!({"port": "x"}), "gateway.port"),
        (
            json!({"journal": {"durability": "maybe"}}),
            "gateway.journal.durability",
        ),
        (
            json!({"journal": {"maxBytes": 4096}}),
            "gateway.journal.maxBytes",
        ),
        (
            json!({"journal": {"retentionDays": -1}}),
            "gateway.journal.retentionDays",
        ),
        (
            json!({"journal": {"retentionDay": 7}}),
            "gateway.journal.retentionDay",
        ),
    ];
    for (v, key) in cases {
        let err = section(v).unwrap_err().to_string();
        assert!(err.contains(key), "{err} should name {key}");
    }
}

#[test]
fn bind_flag_forms() {
    assert_eq!(
        parse_bind("127.0.0.1:5").unwrap(),
        "127.0.0.1:5".parse().unwrap()
    );
    assert_eq!(parse_bind("0").unwrap(), "127.0.0.1:0".parse().unwrap());
    assert_eq!(parse_bind("::1").unwrap(), "[::1]:18789".parse().unwrap());
    assert_eq!(
        parse_bind("localhost:7").unwrap(),
        "127.0.0.1:7".parse().unwrap()
    );
    let err = parse_bind(" nowhere ").unwrap_err();
    assert_eq!(err.value, "nowhere");
    assert_eq!(
        err.to_string(),
        "--bind `nowhere`: expected HOST:PORT (e.g. 127.0.0.1:18789), a port, or an IP address"
    );
}

#[test]
fn journal_durability() {
    let s = defaults();
    assert_eq!(s.journal_durability, talon_journal::Durability::Full);
    let v = json!({"journal": {"durability": "process-crash"}});
    let s = section(v).unwrap();
    assert_eq!(
        s.journal_durability,
        talon_journal::Durability::ProcessCrash
    );
}

#[test]
fn journal_retention() {
    use std::time::Duration;
    let s = defaults();
    assert_eq!(
        s.journal_retention,
        talon_journal::Retention::new(
            Some(Duration::from_secs(30 * 86_400)),
            Some(256 * 1024 * 1024)
        )
    );
    let s = section(json!({"journal": {"retentionDays": 7, "maxBytes": 2097152}})).unwrap();
    assert_eq!(
        s.journal_retention,
        talon_journal::Retention::new(Some(Duration::from_secs(7 * 86_400)), Some(2_097_152))
    );
    let s = section(json!({"journal": {"retentionDays": 0, "maxBytes": 0}})).unwrap();
    assert_eq!(
        s.journal_retention,
        talon_journal::Retention::new(None, None)
    );
}

#[test]
fn the_http_surface_denies_pivot_tools_by_default_and_config_adjusts_it() {
    let d = defaults();
    assert!(d.http_denies("cron"));
    assert!(d.http_denies("Sessions_Spawn"));
    assert!(!d.http_denies("session_status"));
    let s = section(json!({
        "tools": {"allow": ["cron"], "deny": ["Exec"]}
    }))
    .unwrap();
    assert!(!s.http_denies("cron"));
    assert!(s.http_denies("exec"));
    assert!(s.http_denies("gateway"));
    let err = section(json!({"tools": {"deny": [" "]}}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("gateway.tools.deny[0]"), "{err}");
    let err = section(json!({"tools": {"alow": []}}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("alow"), "{err}");
}
