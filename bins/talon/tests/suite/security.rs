//! `talon security audit` on the example configs of `talon-audit`, in a
//! real temp dir: check ids, exit codes, `--fix`.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::util::{Run, cli};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../crates/audit/tests/fixtures")
        .join(name)
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

/// A temp dir with the config (`mode`), a 0700 state dir and a home.
struct Dir {
    dir: tempfile::TempDir,
    config: PathBuf,
    state: PathBuf,
}

impl Dir {
    fn new(text: &str, config_mode: u32) -> Dir {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("talon.json");
        std::fs::write(&config, text).unwrap();
        chmod(&config, config_mode);
        let state = dir.path().join("state");
        std::fs::create_dir(&state).unwrap();
        chmod(&state, 0o700);
        std::fs::create_dir(dir.path().join("home")).unwrap();
        Dir { dir, config, state }
    }

    fn example(name: &str, config_mode: u32) -> Dir {
        Dir::new(
            &std::fs::read_to_string(example(name)).unwrap(),
            config_mode,
        )
    }

    fn audit(&self, args: &[&str]) -> Run {
        cli()
            .home(self.dir.path().join("home"))
            .state_dir(&self.state)
            .config(&self.config)
            .args(["security", "audit"])
            .args(args)
            .run()
    }
}

fn ids_above_info(v: &Value) -> Vec<String> {
    let mut ids: Vec<String> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] != "info")
        .map(|f| f["checkId"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

#[test]
fn each_example_gives_its_check_ids_and_exit_code() {
    let cases: &[(&str, u32, &[&str])] = &[
        ("clean.json5", 0o600, &[]),
        (
            "dangerous-bind.json5",
            0o600,
            &["sandbox.dangerous_bind_mount", "talon.sandbox.bind_refused"],
        ),
        (
            "host-network.json5",
            0o600,
            &[
                "config.insecure_or_dangerous_flags",
                "sandbox.dangerous_network_mode",
            ],
        ),
        ("clean.json5", 0o644, &["fs.config.perms_world_readable"]),
        (
            "exec-without-fs-tools.json5",
            0o600,
            &[
                "talon.sandbox.mode_off",
                "tools.exec.fs_tools_disabled_but_exec_enabled",
                "tools.exec.security_full_configured",
            ],
        ),
        (
            "non-loopback-no-auth.json5",
            0o600,
            &["gateway.bind_no_auth"],
        ),
        (
            "non-loopback-bind.json5",
            0o600,
            &[
                "gateway.tools_invoke_http.dangerous_allow",
                "talon.gateway.bind_beyond_loopback",
                "talon.secrets.gateway_token_in_config",
            ],
        ),
        (
            "mcp-literal-secret.json5",
            0o600,
            &["talon.mcp.literal_secret"],
        ),
        (
            "exec-env-risky.json5",
            0o600,
            &[
                "talon.exec.env.inherit_all",
                "talon.exec.env.literal_secret",
            ],
        ),
        (
            "egress-opt-ins.json5",
            0o600,
            &[
                "talon.egress.private_network_opt_in",
                "talon.sandbox.network_egress",
            ],
        ),
        ("hook-cannot-run.json5", 0o600, &["talon.hooks.cannot_run"]),
        (
            "owner-wildcard.json5",
            0o600,
            &["talon.gateway.owner_allow_wildcard"],
        ),
        (
            "sessions-visibility.json5",
            0o600,
            &[
                "talon.sessions.agent_to_agent_wildcard",
                "talon.sessions.visibility",
            ],
        ),
    ];
    for (name, config_mode, expected) in cases {
        let dir = Dir::example(name, *config_mode);
        let r = dir.audit(&["--json"]);
        let v = r.json();
        assert_eq!(
            ids_above_info(&v),
            expected.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(),
            "{name} {config_mode:o}: {}",
            r.stdout
        );
        let want = if expected.is_empty() { 0 } else { 1 };
        assert_eq!(r.code, want, "{name}: {}{}", r.stdout, r.stderr);
        // The summary counts what is listed.
        let listed = v["findings"].as_array().unwrap().len() as u64;
        let counted: u64 = ["critical", "warn", "info"]
            .iter()
            .map(|s| v["summary"][s].as_u64().unwrap())
            .sum();
        assert_eq!(listed, counted, "{name}");
    }
}

#[test]
fn text_output_names_each_finding_and_the_summary() {
    let dir = Dir::example("dangerous-bind.json5", 0o600);
    let r = dir.audit(&[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("CRITICAL sandbox.dangerous_bind_mount: a sandbox bind mounts"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("  fix: "), "{}", r.stdout);
    assert!(r.stdout.contains("summary: 3 critical"), "{}", r.stdout);
}

#[test]
fn an_invalid_config_exits_1_with_the_config_error_only() {
    let dir = Dir::new("{ tools: { alow: [] } }", 0o600);
    let r = dir.audit(&[]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        r.stdout.trim(),
        format!(
            "{}:1:12: tools.alow: unknown key `alow` (did you mean `allow`?)",
            dir.config.display()
        )
    );
    let r = dir.audit(&["--json"]);
    assert_eq!(r.code, 1);
    let v = r.json();
    assert_eq!(v["valid"], false);
    assert!(v.get("findings").is_none(), "{v}");
    // An unreadable config cannot be audited: exit 2, never a clean report.
    chmod(&dir.config, 0o000);
    if std::fs::read(&dir.config).is_err() {
        let r = dir.audit(&["--json"]);
        assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
        // The error, as JSON on stdout (--json), never a report.
        assert!(r.json().get("findings").is_none(), "{}", r.stdout);
        assert!(r.json()["error"]["message"].is_string(), "{}", r.stdout);
        assert!(r.stderr.contains("cannot read config file"), "{}", r.stderr);
    }
}

#[test]
fn fix_tightens_modes_says_so_and_is_idempotent() {
    let dir = Dir::example("clean.json5", 0o664);
    chmod(&dir.state, 0o775);
    let r = dir.audit(&[]);
    assert_eq!(r.code, 1, "{}", r.stdout);

    let r = dir.audit(&["--fix"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains(&format!(
            "fixed: {}: mode 0664 -> 0600",
            dir.config.display()
        )),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(&format!(
            "fixed: {}: mode 0775 -> 0700",
            dir.state.display()
        )),
        "{}",
        r.stdout
    );
    assert_eq!(mode(&dir.config), 0o600);
    assert_eq!(mode(&dir.state), 0o700);

    let r = dir.audit(&["--fix", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let v = r.json();
    assert_eq!(
        v["fixed"],
        serde_json::json!([]),
        "second run changes nothing"
    );
    assert_eq!(ids_above_info(&v), Vec::<String>::new());
}

/// The findings with `id`.
fn with_id<'v>(v: &'v Value, id: &str) -> Vec<&'v Value> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["checkId"] == id)
        .collect()
}

/// `--deep` against the real daemon: reachable, `ok`, auth required,
/// `health` answered with the state dir's token (the daemon's own), and
/// no finding above info from the probe.
#[test]
fn deep_probes_a_running_gateway() {
    let gw = talon_test_support::gateway::GatewayProcess::launch(
        super::gateway::gateway_bin(),
        &std::fs::read_to_string(example("clean.json5")).unwrap(),
    )
    .unwrap_or_else(|e| panic!("{e:#}"));
    let addr = gw.addr.to_string();
    let r = cli()
        .home(gw.dir.path())
        .state_dir(gw.state())
        .config(&gw.config)
        .args(["security", "audit", "--deep", "--json", "--gateway", &addr])
        .run();
    let v = r.json();
    let probe = with_id(&v, "talon.gateway.probe");
    assert_eq!(probe.len(), 1, "{}", r.stdout);
    assert_eq!(probe[0]["severity"], "info");
    let title = probe[0]["title"].as_str().unwrap();
    assert_eq!(title, format!("a gateway answers at {addr} (status `ok`)"));
    let detail = probe[0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("refused (401): auth is required"),
        "{detail}"
    );
    assert!(
        detail.contains("`health` with the token from")
            && detail.contains("gateway.token answered: status `ok`"),
        "{detail}"
    );
    // The token never appears in the report.
    assert!(!r.stdout.contains(&gw.token));
    assert!(with_id(&v, "talon.gateway.degraded").is_empty());
    assert!(with_id(&v, "talon.gateway.probe_no_auth").is_empty());
    // A wrong token is refused by the daemon, and said so.
    let r = cli()
        .home(gw.dir.path())
        .state_dir(gw.state())
        .config(&gw.config)
        .args(["security", "audit", "--deep", "--json", "--gateway", &addr])
        .args(["--token", "not-the-token-of-this-gateway"])
        .run();
    let v = r.json();
    let detail = with_id(&v, "talon.gateway.probe")[0]["detail"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(detail.contains("was refused (401)"), "{detail}");
}

/// A daemon whose `before_tool_call` hook cannot run answers `degraded`;
/// `--deep` names the hook from `health` (warn, exit 1).
#[test]
fn deep_reports_a_degraded_gateway_and_its_hook() {
    let gw = talon_test_support::gateway::GatewayProcess::launch(
        super::gateway::gateway_bin(),
        &std::fs::read_to_string(example("hook-cannot-run.json5")).unwrap(),
    )
    .unwrap_or_else(|e| panic!("{e:#}"));
    let addr = gw.addr.to_string();
    let r = cli()
        .home(gw.dir.path())
        .state_dir(gw.state())
        .config(&gw.config)
        .args(["security", "audit", "--deep", "--json", "--gateway", &addr])
        .run();
    let v = r.json();
    assert_eq!(r.code, 1, "{}", r.stdout);
    let degraded = with_id(&v, "talon.gateway.degraded");
    assert_eq!(degraded.len(), 1, "{}", r.stdout);
    assert_eq!(degraded[0]["severity"], "warn");
    let detail = degraded[0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("`gate` (tools.hooks.beforeToolCall[0].command: hook.missing_program)"),
        "{detail}"
    );
    assert_eq!(with_id(&v, "talon.hooks.cannot_run").len(), 1);
}

/// Nothing listening: one info finding, and a clean config still exits 0.
#[test]
fn deep_with_no_gateway_is_info() {
    let dir = Dir::example("clean.json5", 0o600);
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string();
    let r = dir.audit(&["--deep", "--json", "--gateway", &closed]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v = r.json();
    let probe = with_id(&v, "talon.gateway.probe");
    assert_eq!(probe.len(), 1, "{}", r.stdout);
    assert_eq!(probe[0]["severity"], "info");
    assert!(
        probe[0]["title"]
            .as_str()
            .unwrap()
            .starts_with("no gateway answers at"),
        "{}",
        r.stdout
    );
}

/// `--fix` moves an MCP server's plain-text secret into the state dir's
/// secrets file, keeps the config's comments, says what it moved, and the
/// second run moves nothing.
#[test]
fn fix_moves_plain_text_mcp_secrets_and_is_idempotent() {
    let text = "// notes\n{ mcp: { servers: { local: { command: \"srv\", env: { API_TOKEN: \"tok-LITERAL\" } } } } }\n";
    let dir = Dir::new(text, 0o600);
    let r = dir.audit(&[]);
    assert!(
        r.stdout.contains("talon.mcp.literal_secret"),
        "{}",
        r.stdout
    );

    let r = dir.audit(&["--fix"]);
    assert!(
        r.stdout.contains(
            "fixed: mcp.servers.local.env.API_TOKEN moved to the secrets file (now ${secret:local_API_TOKEN})"
        ),
        "{}{}",
        r.stdout,
        r.stderr
    );
    assert!(
        !r.stdout.contains("talon.mcp.literal_secret"),
        "{}",
        r.stdout
    );
    let config = std::fs::read_to_string(&dir.config).unwrap();
    assert_eq!(
        config,
        text.replace("tok-LITERAL", "${secret:local_API_TOKEN}")
    );
    let secrets = dir.state.join("secrets.json");
    assert_eq!(mode(&secrets), 0o600);
    assert!(
        std::fs::read_to_string(&secrets)
            .unwrap()
            .contains("tok-LITERAL")
    );

    let r = dir.audit(&["--fix", "--json"]);
    assert_eq!(
        r.json()["secretsFixed"],
        serde_json::json!({"moved": [], "hashed": [], "left": []})
    );
}

/// `--fix` replaces each plain-text `gateway.auth.tokens[].token` by its
/// SHA-256 in place (comments and the other entries kept), leaves
/// `gateway.auth.token` with the reason, and a second run changes nothing.
#[test]
fn fix_hashes_plain_text_gateway_tokens_and_is_idempotent() {
    let token = "plain-token-0123456789abcdef";
    let text = format!(
        "// gw\n{{ gateway: {{ auth: {{\n  token: 'operator-token-0123456789',\n  tokens: [\n    {{ id: 'bot', token: '{token}', scope: 'runner' }}, // keep\n    {{ id: 'ro', tokenSha256: '{}', scope: 'read-only' }},\n  ] }} }} }}\n",
        "ab".repeat(32)
    );
    let dir = Dir::new(&text, 0o600);
    let r = dir.audit(&["--json"]);
    assert!(
        r.stdout.contains("gateway.auth.tokens[0].token"),
        "{}",
        r.stdout
    );
    let r = dir.audit(&["--fix"]);
    assert!(
        r.stdout.contains(
            "fixed: gateway.auth.tokens[0].token replaced by its tokenSha256 (the same token still works)"
        ),
        "{}{}",
        r.stdout,
        r.stderr
    );
    assert!(
        r.stdout
            .contains("not fixed: gateway.auth.token: not hashed"),
        "{}",
        r.stdout
    );
    let hash = {
        use sha2::Digest;
        sha2::Sha256::digest(token.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let config = std::fs::read_to_string(&dir.config).unwrap();
    assert_eq!(
        config,
        text.replace(
            &format!("token: '{token}'"),
            &format!("tokenSha256: \"{hash}\"")
        )
    );
    // The finding now names only the single token.
    let finding = r
        .stdout
        .split("talon.secrets.gateway_token_in_config")
        .nth(1);
    assert!(
        finding.is_some_and(|f| !f.contains("tokens[0]")),
        "{}",
        r.stdout
    );
    let r = dir.audit(&["--fix", "--json"]);
    assert_eq!(r.json()["secretsFixed"]["hashed"], serde_json::json!([]));
    assert_eq!(std::fs::read_to_string(&dir.config).unwrap(), config);
}
