//! Each example config produces exactly its expected check ids above info.

use pretty_assertions::assert_eq;
use talon_audit::{AuditSeverity, CHECKS};

use super::util::{Setup, ids_above_info, severity_of};

fn expect(fixture: &str, config_mode: u32, expected: &[&str]) -> talon_audit::AuditReport {
    let report = Setup::from_fixture(fixture, config_mode).audit(false);
    assert_eq!(
        ids_above_info(&report),
        expected.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(),
        "{fixture}: {report:#?}"
    );
    for f in &report.findings {
        assert!(CHECKS.iter().any(|c| c.id == f.check_id), "{}", f.check_id);
    }
    report
}

#[test]
fn the_clean_example_has_nothing_above_info() {
    let report = expect("clean.json5", 0o600, &[]);
    assert_eq!(report.summary.critical + report.summary.warn, 0);
    // The effective tool table is always there, one finding per agent.
    let tables: Vec<&str> = report
        .findings
        .iter()
        .filter(|f| f.check_id == "talon.tools.effective")
        .map(|f| f.title.as_str())
        .collect();
    assert_eq!(tables.len(), 1, "{tables:?}");
    assert!(tables[0].contains("every session sandboxed"), "{tables:?}");
    let detail = &report
        .findings
        .iter()
        .find(|f| f.check_id == "talon.tools.effective")
        .unwrap()
        .detail;
    assert!(detail.contains("exec (execute)"), "{detail}");
    // The sandbox's default tool policy keeps the web tools out.
    assert!(!detail.contains("(network)"), "{detail}");
    assert!(detail.contains("write (write)"), "{detail}");
    assert!(
        !detail.contains("read ("),
        "read-only tools are not listed: {detail}"
    );
}

#[test]
fn dangerous_binds_are_critical() {
    let report = expect(
        "dangerous-bind.json5",
        0o600,
        &["sandbox.dangerous_bind_mount", "talon.sandbox.bind_refused"],
    );
    let binds: Vec<&talon_audit::AuditFinding> = report
        .findings
        .iter()
        .filter(|f| f.check_id == "sandbox.dangerous_bind_mount")
        .collect();
    // /etc, the engine socket and /home (the parent of every home).
    for key in [
        "agents.defaults.sandbox.docker.binds[0]",
        "agents.defaults.sandbox.docker.binds[1]",
        "agents.defaults.sandbox.docker.binds[2]",
    ] {
        assert!(
            binds.iter().any(|f| f.title.ends_with(key)),
            "{key}: {binds:#?}"
        );
    }
    assert!(binds.iter().all(|f| f.severity == AuditSeverity::Critical));
}

#[test]
fn a_bind_of_a_directory_holding_credentials_is_critical() {
    let setup = Setup::new("{}", 0o600);
    let creds = setup.dir.path().join("project");
    std::fs::create_dir_all(creds.join(".ssh")).unwrap();
    let text = format!(
        r#"{{ tools: {{ exec: {{ security: "allowlist" }} }},
             agents: {{ defaults: {{ sandbox: {{ mode: "all", docker: {{
               dangerouslyAllowExternalBindSources: true,
               binds: ["{}:/project"] }} }} }} }} }}"#,
        creds.display()
    );
    std::fs::write(&setup.config, text).unwrap();
    let report = setup.audit(false);
    assert_eq!(
        ids_above_info(&report),
        [
            "config.insecure_or_dangerous_flags",
            "sandbox.dangerous_bind_mount"
        ]
    );
    let f = report
        .findings
        .iter()
        .find(|f| f.check_id == "sandbox.dangerous_bind_mount")
        .unwrap();
    assert!(f.detail.contains("bind-holds-credentials"), "{f:#?}");
}

#[test]
fn host_network_through_the_dangerous_switch() {
    let report = expect(
        "host-network.json5",
        0o600,
        &[
            "config.insecure_or_dangerous_flags",
            "sandbox.dangerous_network_mode",
        ],
    );
    let network: Vec<&talon_audit::AuditFinding> = report
        .findings
        .iter()
        .filter(|f| f.check_id == "sandbox.dangerous_network_mode")
        .collect();
    // `host` for the defaults and `main` (one finding, both scopes), and
    // the join the switch lets through for `joiner`.
    assert_eq!(network.len(), 2, "{network:#?}");
    assert!(network.iter().any(|f| f.detail.contains("network-host")));
    assert!(network.iter().any(|f| f.detail.contains("container:db")));
}

#[test]
fn a_world_readable_config_warns_and_is_critical_with_secrets() {
    let report = expect("clean.json5", 0o644, &["fs.config.perms_world_readable"]);
    assert_eq!(
        severity_of(&report, "fs.config.perms_world_readable"),
        [AuditSeverity::Warn]
    );
    // The same mode on a file holding a token is critical.
    let report = Setup::from_fixture("non-loopback-bind.json5", 0o644).audit(false);
    assert_eq!(
        severity_of(&report, "fs.config.perms_world_readable"),
        [AuditSeverity::Critical]
    );
}

#[test]
fn writable_config_and_state_dir_are_critical() {
    let setup = Setup::from_fixture("clean.json5", 0o620);
    super::util::chmod(&setup.state, 0o777);
    let report = setup.audit(false);
    assert_eq!(
        ids_above_info(&report),
        [
            "fs.config.perms_writable",
            "fs.state_dir.perms_group_writable",
            "fs.state_dir.perms_readable",
            "fs.state_dir.perms_world_writable",
        ]
    );
    for id in [
        "fs.config.perms_writable",
        "fs.state_dir.perms_group_writable",
        "fs.state_dir.perms_world_writable",
    ] {
        assert_eq!(severity_of(&report, id), [AuditSeverity::Critical], "{id}");
    }
}

#[test]
fn exec_without_the_file_tools() {
    let report = expect(
        "exec-without-fs-tools.json5",
        0o600,
        &[
            "talon.sandbox.mode_off",
            "tools.exec.fs_tools_disabled_but_exec_enabled",
            "tools.exec.security_full_configured",
        ],
    );
    let f = report
        .findings
        .iter()
        .find(|f| f.check_id == "tools.exec.fs_tools_disabled_but_exec_enabled")
        .unwrap();
    for tool in ["write", "edit", "apply_patch"] {
        assert!(f.detail.contains(tool), "{tool}: {f:#?}");
    }
    assert!(f.detail.contains("tools.deny"), "{f:#?}");
    // Unsandboxed and unrestricted: exec is critical.
    assert_eq!(
        severity_of(&report, "tools.exec.security_full_configured"),
        [AuditSeverity::Critical]
    );
}

#[test]
fn non_loopback_bind_and_plain_text_token() {
    let report = expect(
        "non-loopback-bind.json5",
        0o600,
        &[
            "gateway.tools_invoke_http.dangerous_allow",
            "talon.gateway.bind_beyond_loopback",
            "talon.secrets.gateway_token_in_config",
        ],
    );
    assert_eq!(
        severity_of(&report, "gateway.tools_invoke_http.dangerous_allow"),
        [AuditSeverity::Critical]
    );
    let token = report
        .findings
        .iter()
        .find(|f| f.check_id == "talon.secrets.gateway_token_in_config")
        .unwrap();
    assert!(token.detail.contains("gateway.auth.token"));
    assert!(
        !serde_json::to_string(&report)
            .unwrap()
            .contains("0123456789abcdef"),
        "the token's value is never shown"
    );
}

#[test]
fn mcp_literal_secrets_are_named_never_shown() {
    let report = expect(
        "mcp-literal-secret.json5",
        0o600,
        &["talon.mcp.literal_secret"],
    );
    let secrets: Vec<&talon_audit::AuditFinding> = report
        .findings
        .iter()
        .filter(|f| f.check_id == "talon.mcp.literal_secret")
        .collect();
    assert_eq!(
        secrets.len(),
        2,
        "leaky and remote, not careful: {secrets:#?}"
    );
    let text = serde_json::to_string(&report).unwrap();
    assert!(
        text.contains("mcp.servers.leaky.env.OPENAI_API_KEY"),
        "{text}"
    );
    assert!(
        text.contains("mcp.servers.remote.headers.Authorization"),
        "{text}"
    );
    assert!(!text.contains("LOG_LEVEL"), "{text}");
    assert!(!text.contains("careful.env"), "{text}");
    assert!(!text.contains("sk-live"), "values are never shown");
    assert!(
        !text.contains("literal-token-value"),
        "values are never shown"
    );
}

#[test]
fn an_invalid_policy_is_the_only_answer() {
    let config = talon_config::TalonConfig {
        tools: Some(talon_config::ToolsSection {
            allow: Some(Vec::new()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let state = tempfile::tempdir().unwrap();
    let input = talon_audit::AuditInput::new(&config, "inline", state.path());
    let err = talon_audit::audit(&input).unwrap_err();
    assert!(
        matches!(err, talon_audit::AuditError::InvalidConfig { .. }),
        "{err}"
    );
}

#[test]
fn an_unreadable_state_dir_is_never_clean() {
    let setup = Setup::from_fixture("clean.json5", 0o600);
    // A state dir path under a regular file cannot be stat'ed.
    let blocker = setup.dir.path().join("blocker");
    std::fs::write(&blocker, "x").unwrap();
    let loaded = talon_config::load(&setup.config).unwrap();
    let state = blocker.join("state");
    let mut input = talon_audit::AuditInput::new(&loaded.config, &loaded.origin, &state);
    input.config_file = Some(&setup.config);
    input.home = Some(&setup.home);
    let report = talon_audit::audit(&input).unwrap();
    assert!(
        ids_above_info(&report).contains(&"talon.audit.incomplete".to_owned()),
        "{report:#?}"
    );
}

#[test]
fn non_loopback_bind_without_a_token() {
    let report = expect(
        "non-loopback-no-auth.json5",
        0o600,
        &["gateway.bind_no_auth"],
    );
    let f = report
        .findings
        .iter()
        .find(|f| f.check_id == "gateway.bind_no_auth")
        .unwrap();
    assert!(f.detail.contains("refuses"), "{f:#?}");
}

#[test]
fn restrictions_dropped_knowingly_are_reported() {
    let report = expect(
        "unenforced-restrictions.json5",
        0o600,
        &["talon.config.unenforced_restrictions"],
    );
    let f = report
        .findings
        .iter()
        .find(|f| f.check_id == "talon.config.unenforced_restrictions")
        .unwrap();
    assert_eq!(f.severity, AuditSeverity::Warn);
    assert!(f.detail.contains("channels"), "{}", f.detail);
    assert!(f.detail.contains("commands"), "{}", f.detail);
}
