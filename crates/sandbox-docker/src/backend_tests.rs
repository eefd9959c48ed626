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

fn point(kind: &str, source: &str, dest: &str, rw: bool) -> MountPoint {
    MountPoint {
        typ: Some(kind.to_owned()),
        source: Some(source.to_owned()),
        destination: Some(dest.to_owned()),
        rw: Some(rw),
        ..Default::default()
    }
}

#[test]
fn engine_mounts_parse_back_into_the_mount_table() {
    let b = bind_of(&point("bind", "/srv/ws", "/workspace", false)).unwrap();
    assert_eq!(b.host, std::path::PathBuf::from("/srv/ws"));
    assert_eq!(b.container, "/workspace");
    assert!(b.read_only);
    assert!(
        !bind_of(&point("bind", "/srv/a", "/a", true))
            .unwrap()
            .read_only
    );
    assert!(bind_of(&point("volume", "/var/lib/docker/volumes/x", "/v", true)).is_none());
}

#[test]
fn a_created_container_must_carry_exactly_the_validated_binds() {
    let want = vec![
        BindMount::rw("/srv/ws", "/workspace"),
        BindMount::ro("/srv/data", "/data"),
    ];
    let good = vec![
        point("bind", "/srv/ws", "/workspace", true),
        point("bind", "/srv/data", "/data", false),
        point("volume", "/var/lib/docker/volumes/x", "/v", true),
    ];
    assert!(check_created_mounts("c", &want, &good).is_ok());
    let cases: Vec<(Vec<MountPoint>, &str)> = vec![
        (
            vec![
                point("bind", "/srv/ws", "/workspace", true),
                point("bind", "/etc", "/data", false),
            ],
            "from /etc instead of the validated /srv/data",
        ),
        (
            vec![
                point("bind", "/srv/ws", "/workspace", true),
                point("bind", "/srv/data", "/data", true),
            ],
            "read-only bind mount at /data writable",
        ),
        (
            vec![point("bind", "/srv/ws", "/workspace", true)],
            "1 bind mounts where 2 were asked for",
        ),
        (
            vec![
                point("bind", "/srv/ws", "/workspace", true),
                point("bind", "/srv/data", "/elsewhere", false),
            ],
            "no bind mount at /data",
        ),
    ];
    for (seen, expected) in cases {
        let err = check_created_mounts("c", &want, &seen)
            .unwrap_err()
            .to_string();
        assert!(err.contains(expected), "{expected}: {err}");
        assert!(err.contains("it was removed"), "{err}");
    }
}
