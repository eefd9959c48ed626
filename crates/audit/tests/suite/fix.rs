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
