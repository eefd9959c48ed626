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
    assert!(
        f.detail.contains("channels.telegram.direct.42.tools"),
        "{}",
        f.detail
    );
    // Exactly the two dropped keys (the plugin switches and the channel
    // group policies are enforced, so they are not among them).
    assert!(
        f.detail.contains(
            "drops 2 restriction(s) Talon cannot enforce: channels.telegram.direct.42.tools, tools.message."
        ),
        "{}",
        f.detail
    );
}

fn findings<'r>(
    report: &'r talon_audit::AuditReport,
    id: &str,
) -> Vec<&'r talon_audit::AuditFinding> {
    report
        .findings
        .iter()
        .filter(|f| f.check_id == id)
        .collect()
}

#[test]
fn the_clean_example_shows_its_env_policy_and_surfaces_as_info() {
    let report = Setup::from_fixture("clean.json5", 0o600).audit(false);
    let env = findings(&report, "talon.exec.env.policy");
    assert_eq!(env.len(), 1, "{env:#?}");
    assert_eq!(env[0].severity, AuditSeverity::Info);
    assert!(env[0].title.contains("inherits `core`"), "{env:#?}");
    let surfaces = findings(&report, "talon.tools.surfaces");
    assert_eq!(surfaces.len(), 1, "{surfaces:#?}");
    let d = &surfaces[0].detail;
    // `exec` is in the session's table (WebSocket, /mcp) and kept off
    // POST /tools/invoke by the default deny list.
    let (session, http) = d.split_once("POST /tools/invoke").unwrap();
    assert!(session.contains("exec (execute)"), "{d}");
    let served = http.split("it serves:").nth(1).unwrap();
    assert!(!served.contains("exec ("), "{d}");
    assert!(served.contains("write (write)"), "{d}");
    let kept_off = http.split("keeps off").nth(1).unwrap();
    assert!(kept_off.contains("exec,"), "{d}");
}

#[test]
fn a_widened_exec_environment() {
    let report = expect(
        "exec-env-risky.json5",
        0o600,
        &[
            "talon.exec.env.inherit_all",
            "talon.exec.env.literal_secret",
        ],
    );
    let literal = findings(&report, "talon.exec.env.literal_secret");
    // The global set and the agent's, each once (not once per agent).
    assert_eq!(literal.len(), 2, "{literal:#?}");
    assert!(
        literal
            .iter()
            .any(|f| f.detail.contains("tools.exec.env.set.GITHUB_TOKEN"))
    );
    assert!(literal.iter().any(|f| {
        f.detail
            .contains("agents.list[1].tools.exec.env.set.AWS_SECRET_ACCESS_KEY")
    }));
    // `EDITOR` is not credential-looking.
    assert!(literal.iter().all(|f| !f.detail.contains("EDITOR")));
    assert_eq!(findings(&report, "talon.exec.env.inherit_all").len(), 1);
    let include = findings(&report, "talon.exec.env.include_credentials");
    assert_eq!(include.len(), 1, "{include:#?}");
    assert!(
        include[0].detail.contains("includeOnly[1] = `*TOKEN*`"),
        "{include:#?}"
    );
    // Names only: no value anywhere in the report.
    let json = serde_json::to_string(&report).unwrap();
    for value in ["ghp_not_a_real_token", "not-a-real-secret", "\"vi\""] {
        assert!(!json.contains(value), "{value} leaked");
    }
    // The policy per agent names the set variables.
    let policy = findings(&report, "talon.exec.env.policy");
    assert_eq!(policy.len(), 2);
    let deploy = policy
        .iter()
        .find(|f| f.title.contains("`deploy`"))
        .unwrap();
    assert!(
        deploy
            .detail
            .contains("AWS_SECRET_ACCESS_KEY, EDITOR, GITHUB_TOKEN"),
        "{deploy:#?}"
    );
}

#[test]
fn every_private_network_opt_in_is_named() {
    let report = expect(
        "egress-opt-ins.json5",
        0o600,
        &[
            "talon.egress.private_network_opt_in",
            "talon.sandbox.network_egress",
        ],
    );
    let titles: Vec<&str> = findings(&report, "talon.egress.private_network_opt_in")
        .iter()
        .map(|f| f.title.as_str())
        .collect();
    assert_eq!(
        titles,
        [
            "tools.web.fetch.ssrfAllowlist opens private network targets",
            "tools.web.search.ssrfAllowlist opens private network targets",
            "cron.webhookSsrfAllowlist opens private network targets",
            "mcp.servers.intranet.allowPrivateNetwork is true",
        ]
    );
    let net = findings(&report, "talon.sandbox.network_egress");
    assert_eq!(net.len(), 1, "{net:#?}");
    assert!(
        net[0]
            .detail
            .contains("agents.defaults.sandbox.docker.network"),
        "{net:#?}"
    );
}

#[test]
fn a_hook_that_cannot_run_is_named() {
    let report = expect("hook-cannot-run.json5", 0o600, &["talon.hooks.cannot_run"]);
    let f = findings(&report, "talon.hooks.cannot_run");
    assert_eq!(f.len(), 1, "{f:#?}");
    assert!(f[0].title.contains("`gate`"), "{f:#?}");
    assert!(
        f[0].detail.contains("tools.hooks.beforeToolCall[0]"),
        "{f:#?}"
    );
    assert!(f[0].detail.contains("hook.missing_program"), "{f:#?}");
}

#[test]
fn a_hook_that_can_run_is_not_a_finding() {
    let setup = Setup::new("{}", 0o600);
    let hook = setup.dir.path().join("hook.sh");
    std::fs::write(&hook, "#!/bin/sh\necho '{}'\n").unwrap();
    super::util::chmod(&hook, 0o700);
    std::fs::write(
        &setup.config,
        format!(
            r#"{{ tools: {{ exec: {{ security: "allowlist" }}, hooks: {{ beforeToolCall: [{{ id: "ok", command: ["{}"] }}] }} }},
                 agents: {{ defaults: {{ sandbox: {{ mode: "all" }} }} }} }}"#,
            hook.display()
        ),
    )
    .unwrap();
    let report = setup.audit(false);
    assert_eq!(ids_above_info(&report), Vec::<String>::new(), "{report:#?}");
}

#[test]
fn gateway_tools_deny_shows_on_the_http_surface() {
    let setup = Setup::new(
        r#"{ tools: { exec: { security: "allowlist" } },
             agents: { defaults: { sandbox: { mode: "all", workspaceAccess: "rw" } } },
             gateway: { tools: { deny: ["write"] } } }"#,
        0o600,
    );
    let report = setup.audit(false);
    let f = findings(&report, "talon.tools.surfaces");
    let http = f[0].detail.split_once("POST /tools/invoke").unwrap().1;
    let kept_off = http.split("keeps off").nth(1).unwrap();
    assert!(kept_off.starts_with(" write,"), "{http}");
    let served = http.split("it serves:").nth(1).unwrap();
    assert!(!served.contains("write (write)"), "{http}");
}

#[test]
fn wide_session_visibility_and_a_wildcard_agent_list() {
    let report = expect(
        "sessions-visibility.json5",
        0o600,
        &[
            "talon.sessions.agent_to_agent_wildcard",
            "talon.sessions.visibility",
        ],
    );
    let v = findings(&report, "talon.sessions.visibility");
    assert_eq!(v.len(), 1, "{v:#?}");
    assert_eq!(v[0].severity, AuditSeverity::Warn);
    assert!(v[0].detail.contains("agents main, ops"), "{v:#?}");
    assert!(
        v[0].detail.contains("sandboxed sessions see `tree`"),
        "{v:#?}"
    );
}

#[test]
fn the_default_visibility_is_info() {
    let report = Setup::from_fixture("clean.json5", 0o600).audit(false);
    let v = findings(&report, "talon.sessions.visibility");
    assert_eq!(v.len(), 1, "{v:#?}");
    assert_eq!(v[0].severity, AuditSeverity::Info);
    assert!(v[0].detail.contains("`tree` (the default)"), "{v:#?}");
    assert!(v[0].detail.contains("agents none"), "{v:#?}");
}

#[test]
fn a_wildcard_owner_list_is_critical_and_names_each_key() {
    let report = expect(
        "owner-wildcard.json5",
        0o600,
        &["talon.gateway.owner_allow_wildcard"],
    );
    let f = findings(&report, "talon.gateway.owner_allow_wildcard");
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].severity, AuditSeverity::Critical);
    assert!(
        f[0].detail.contains("gateway.auth.ownerAllowFrom[1]")
            && f[0].detail.contains("commands.ownerAllowFrom[0]"),
        "{f:#?}"
    );
}
