#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn hints_name_the_scope_the_way_the_cli_takes_it() {
    assert_eq!(
        recreate_hint("main"),
        "talon sandbox recreate --session main"
    );
    assert_eq!(
        recreate_hint("agent:ops"),
        "talon sandbox recreate --agent ops"
    );
    assert_eq!(recreate_hint("shared"), "talon sandbox recreate --all");
    assert_eq!(
        recreate_hint("group chat's key"),
        "talon sandbox recreate --session 'group chat'\\''s key'"
    );
    assert_eq!(
        recreate_hint("evil\nkey"),
        "talon sandbox recreate --session 'evil\\nkey'"
    );
}

#[test]
fn engine_binds_parse_back_into_the_mount_table() {
    let b = parse_bind("/srv/ws:/workspace:ro,z").unwrap();
    assert_eq!(b.host, std::path::PathBuf::from("/srv/ws"));
    assert_eq!(b.container, "/workspace");
    assert!(b.read_only);
    let b = parse_bind("/srv/a:/a").unwrap();
    assert!(!b.read_only);
    assert_eq!(b.options, None);
    assert!(!parse_bind("/srv/a:/a:rw,z").unwrap().read_only);
    assert!(parse_bind("nocolon").is_none());
}
