//! `--fix` tightens real modes, never widens them, and is idempotent.

use pretty_assertions::assert_eq;
use talon_audit::fix_permissions;

use super::util::{Setup, chmod, ids_above_info, mode};

#[test]
fn fix_tightens_and_a_second_run_changes_nothing() {
    let setup = Setup::from_fixture("clean.json5", 0o666);
    chmod(&setup.state, 0o777);
    let token = setup.state.join("gateway.token");
    std::fs::write(&token, "0123456789abcdef0123\n").unwrap();
    chmod(&token, 0o644);
    assert!(!ids_above_info(&setup.audit(false)).is_empty());

    let changes = fix_permissions(Some(&setup.config), &setup.state).unwrap();
    let summary: Vec<(std::path::PathBuf, u32, u32)> = changes
        .iter()
        .map(|c| (c.path.clone(), c.from_mode, c.to_mode))
        .collect();
    assert_eq!(
        summary,
        [
            (setup.config.clone(), 0o666, 0o600),
            (setup.state.clone(), 0o777, 0o700),
            (token.clone(), 0o644, 0o600),
        ]
    );
    assert_eq!(mode(&setup.config), 0o600);
    assert_eq!(mode(&setup.state), 0o700);
    assert_eq!(mode(&token), 0o600);
    assert_eq!(ids_above_info(&setup.audit(false)), Vec::<String>::new());

    assert_eq!(
        fix_permissions(Some(&setup.config), &setup.state).unwrap(),
        []
    );
}

#[test]
fn fix_never_widens_and_leaves_symlinks_alone() {
    let setup = Setup::from_fixture("clean.json5", 0o400);
    let changes = fix_permissions(Some(&setup.config), &setup.state).unwrap();
    assert_eq!(changes, []);
    assert_eq!(mode(&setup.config), 0o400, "read-only stays read-only");

    let target = setup.dir.path().join("real.json");
    std::fs::write(&target, "{}").unwrap();
    chmod(&target, 0o644);
    let link = setup.dir.path().join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert_eq!(fix_permissions(Some(&link), &setup.state).unwrap(), []);
    assert_eq!(mode(&target), 0o644, "the link's target is not touched");
}

/// `fix_secrets` moves MCP servers' plain-text secrets into the state
/// directory's secrets file (mode 0600, existing entries kept), rewrites
/// only those string literals to `${secret:NAME}` (comments and layout
/// stay), the audit no longer reports them, and a second run changes
/// nothing.
#[test]
fn fix_moves_literal_secrets_into_the_secrets_file_once() {
    let text = r#"// operator notes: keep this comment
{
  mcp: { servers: {
    gh: { url: "https://mcp.example.com/mcp", headers: { Authorization: 'Bearer ghp_LITERAL' /* old */ } },
    local: { command: "srv", env: { API_TOKEN: "tok-LITERAL", MODE: "fast", OTHER_KEY: "${FROM_ENV}" } },
  } },
}
"#;
    let setup = Setup::new(text, 0o600);
    let secrets = setup.state.join("secrets.json");
    std::fs::write(&secrets, r#"{"kept": "already-here"}"#).unwrap();
    chmod(&secrets, 0o600);
    let before = setup.audit(false);
    assert!(
        before
            .findings
            .iter()
            .any(|f| f.check_id == "talon.mcp.literal_secret")
    );

    let loaded = talon_config::load(&setup.config).unwrap();
    let fix = talon_audit::fix_secrets(&setup.config, &loaded.config, &setup.state).unwrap();
    let moved: Vec<(&str, &str)> = fix
        .moved
        .iter()
        .map(|m| (m.key.as_str(), m.secret.as_str()))
        .collect();
    assert_eq!(
        moved,
        [
            ("mcp.servers.gh.headers.Authorization", "gh_Authorization"),
            ("mcp.servers.local.env.API_TOKEN", "local_API_TOKEN"),
        ]
    );
    assert!(fix.left.is_empty(), "{:?}", fix.left);

    let new_text = std::fs::read_to_string(&setup.config).unwrap();
    let want = text
        .replace("'Bearer ghp_LITERAL'", "\"${secret:gh_Authorization}\"")
        .replace("\"tok-LITERAL\"", "\"${secret:local_API_TOKEN}\"");
    assert_eq!(new_text, want);
    assert_eq!(mode(&setup.config), 0o600);
    assert_eq!(mode(&secrets), 0o600);
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&secrets).unwrap()).unwrap();
    assert_eq!(
        stored,
        serde_json::json!({"kept": "already-here", "gh_Authorization": "Bearer ghp_LITERAL", "local_API_TOKEN": "tok-LITERAL"})
    );
    let after = setup.audit(false);
    assert!(
        !after
            .findings
            .iter()
            .any(|f| f.check_id == "talon.mcp.literal_secret"),
        "{:#?}",
        after.findings
    );

    let loaded = talon_config::load(&setup.config).unwrap();
    let again = talon_audit::fix_secrets(&setup.config, &loaded.config, &setup.state).unwrap();
    assert_eq!(again, talon_audit::SecretsFix::default());
    assert_eq!(std::fs::read_to_string(&setup.config).unwrap(), want);
}

/// The same move for `tools.exec.env.set` (global and an agent's): the
/// runtime expands `${secret:NAME}` there, so the fixed config gives exec
/// children the same values; a second run changes nothing.
#[test]
fn fix_moves_exec_env_set_literals_into_the_secrets_file() {
    let text = r#"{
  tools: { exec: { env: { set: { GH_TOKEN: "ghp-GLOBAL", EDITOR: "vi" } } } },
  agents: { list: [
    { id: "main", default: true },
    { id: "ops", tools: { exec: { env: { set: { DEPLOY_PASSWORD: "pw-OPS", REF_TOKEN: "${secret:kept}" } } } } },
  ] },
}
"#;
    let setup = Setup::new(text, 0o600);
    let before = setup.audit(false);
    assert!(
        before
            .findings
            .iter()
            .any(|f| f.check_id == "talon.exec.env.literal_secret")
    );
    let loaded = talon_config::load(&setup.config).unwrap();
    let fix = talon_audit::fix_secrets(&setup.config, &loaded.config, &setup.state).unwrap();
    let moved: Vec<(&str, &str)> = fix
        .moved
        .iter()
        .map(|m| (m.key.as_str(), m.secret.as_str()))
        .collect();
    assert_eq!(
        moved,
        [
            ("tools.exec.env.set.GH_TOKEN", "exec_GH_TOKEN"),
            (
                "agents.list[1].tools.exec.env.set.DEPLOY_PASSWORD",
                "exec-ops_DEPLOY_PASSWORD"
            ),
        ]
    );
    assert!(fix.left.is_empty(), "{:?}", fix.left);
    let want = text
        .replace("\"ghp-GLOBAL\"", "\"${secret:exec_GH_TOKEN}\"")
        .replace("\"pw-OPS\"", "\"${secret:exec-ops_DEPLOY_PASSWORD}\"");
    assert_eq!(std::fs::read_to_string(&setup.config).unwrap(), want);
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(setup.state.join("secrets.json")).unwrap())
            .unwrap();
    assert_eq!(
        stored,
        serde_json::json!({"exec_GH_TOKEN": "ghp-GLOBAL", "exec-ops_DEPLOY_PASSWORD": "pw-OPS"})
    );
    assert!(
        !setup
            .audit(false)
            .findings
            .iter()
            .any(|f| f.check_id == "talon.exec.env.literal_secret")
    );
    let loaded = talon_config::load(&setup.config).unwrap();
    let again = talon_audit::fix_secrets(&setup.config, &loaded.config, &setup.state).unwrap();
    assert_eq!(again, talon_audit::SecretsFix::default());
}
