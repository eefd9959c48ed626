#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::spec::{BindMount, Limits, Ulimit};
use bollard::models::{MountBindOptionsPropagationEnum, MountType};
use talon_sandbox_core::SandboxErrorKind;

fn base(ws: &std::path::Path) -> ContainerSpec {
    ContainerSpec::new("talon-sbx-unit", "agent:unit", ws, "hash-1")
}

#[test]
fn defaults_are_openclaws_hardened_create_arguments() {
    let ws = tempfile::tempdir().unwrap();
    let body = create_body(
        &base(ws.path()),
        "1000:1000".to_owned(),
        ReadOnlyDepth::ForceRecursive,
    )
    .unwrap();
    assert_eq!(body.image.as_deref(), Some(crate::spec::DEFAULT_IMAGE));
    assert_eq!(
        body.cmd,
        Some(vec!["sleep".to_owned(), "infinity".to_owned()])
    );
    assert_eq!(body.user.as_deref(), Some("1000:1000"));
    assert_eq!(body.working_dir.as_deref(), Some("/workspace"));
    let env = body.env.unwrap();
    assert!(env.contains(&"LANG=C.UTF-8".to_owned()));
    assert!(env.contains(&"TALON_CLI=1".to_owned()));
    let host = body.host_config.unwrap();
    assert_eq!(host.init, Some(true));
    assert_eq!(host.readonly_rootfs, Some(true));
    assert_eq!(host.network_mode.as_deref(), Some("none"));
    assert_eq!(host.cap_drop, Some(vec!["ALL".to_owned()]));
    assert_eq!(host.cap_add, None);
    assert_eq!(host.privileged, None);
    assert_eq!(
        host.security_opt,
        Some(vec!["no-new-privileges".to_owned()])
    );
    let tmpfs = host.tmpfs.unwrap();
    let mut dirs: Vec<_> = tmpfs.keys().cloned().collect();
    dirs.sort();
    assert_eq!(dirs, vec!["/run", "/tmp", "/var/tmp"]);
    // Every default tmpfs is size-limited (64 MiB), so a filled /tmp is
    // ENOSPC inside, not memory the container's cgroup is charged for.
    for dir in &dirs {
        assert_eq!(tmpfs[dir], "size=67108864", "{dir}");
    }
    assert_eq!(host.binds, None, "only Engine API mounts");
    let mounts = host.mounts.unwrap();
    assert_eq!(mounts.len(), 1);
    assert_eq!(mounts[0].typ, Some(MountType::BIND));
    assert_eq!(mounts[0].source.as_deref(), ws.path().to_str());
    assert_eq!(mounts[0].target.as_deref(), Some("/workspace"));
    assert_eq!(mounts[0].read_only, Some(false));
    let labels = body.labels.unwrap();
    assert_eq!(labels["talon.sandbox"], "1");
    assert_eq!(labels["talon.sessionKey"], "agent:unit");
    assert_eq!(labels["talon.configHash"], "hash-1");
    assert_eq!(labels["talon.mountFormatVersion"], "4");
    assert_eq!(labels["talon.createArgsEpoch"], "2026-12-05-tmpfs-size");
}

#[test]
fn limits_binds_and_extra_labels_are_carried_but_cannot_override_talons_own() {
    let ws = tempfile::tempdir().unwrap();
    let mut spec = base(ws.path());
    spec.binds.push(BindMount::ro("/srv/data", "/data"));
    spec.binds.push(BindMount {
        options: Some("rw,private".to_owned()),
        ..BindMount::rw("/srv/cache", "/cache")
    });
    spec.tmpfs = vec!["/tmp:size=64m".to_owned()];
    spec.limits = Limits {
        pids_limit: Some(0),
        memory_bytes: Some(1 << 30),
        memory_swap_bytes: Some(-1),
        cpus: Some(1.5),
        ulimits: vec![Ulimit {
            name: "nofile".to_owned(),
            soft: 1024,
            hard: 2048,
        }],
    };
    spec.extra_labels
        .insert("talon.configHash".to_owned(), "forged".to_owned());
    spec.extra_labels
        .insert("team".to_owned(), "ops".to_owned());
    let body = create_body(&spec, "0:0".to_owned(), ReadOnlyDepth::ForceRecursive).unwrap();
    let host = body.host_config.unwrap();
    let mounts = host.mounts.unwrap();
    assert_eq!(mounts[1].source.as_deref(), Some("/srv/data"));
    assert_eq!(mounts[1].read_only, Some(true));
    let ro = mounts[1].bind_options.clone().unwrap();
    assert_eq!(ro.read_only_force_recursive, Some(true));
    assert_eq!(ro.non_recursive, None);
    assert_eq!(
        ro.propagation,
        Some(MountBindOptionsPropagationEnum::RPRIVATE)
    );
    let rw = mounts[2].bind_options.clone().unwrap();
    assert_eq!(mounts[2].read_only, Some(false));
    assert_eq!(rw.read_only_force_recursive, None);
    assert_eq!(
        rw.propagation,
        Some(MountBindOptionsPropagationEnum::PRIVATE)
    );
    assert_eq!(host.tmpfs.unwrap()["/tmp"], "size=64m");
    assert_eq!(host.pids_limit, None, "0 means no limit");
    assert_eq!(host.memory, Some(1 << 30));
    assert_eq!(host.memory_swap, Some(-1));
    assert_eq!(host.nano_cpus, Some(1_500_000_000));
    assert_eq!(host.ulimits.unwrap()[0].hard, Some(2048));
    let labels = body.labels.unwrap();
    assert_eq!(labels["talon.configHash"], "hash-1");
    assert_eq!(labels["team"], "ops");
}

#[test]
fn hostile_specs_are_refused_with_the_reason() {
    let ws = tempfile::tempdir().unwrap();
    type Mutate = Box<dyn Fn(&mut ContainerSpec)>;
    let cases: Vec<(Mutate, &str)> = vec![
        (
            Box::new(|s| {
                s.env.insert("PATH".to_owned(), "/evil".to_owned());
            }),
            "must not set PATH",
        ),
        (
            Box::new(|s| {
                s.env.insert("A=B".to_owned(), "x".to_owned());
            }),
            "is invalid",
        ),
        (
            Box::new(|s| s.binds.push(BindMount::rw("relative/dir", "/x"))),
            "absolute host path",
        ),
        (
            Box::new(|s| s.binds.push(BindMount::rw("/srv/a", "x"))),
            "absolute container path",
        ),
        (
            Box::new(|s| {
                s.binds.push(BindMount {
                    options: Some("ro,rshared".to_owned()),
                    ..BindMount::rw("/srv/a", "/x")
                })
            }),
            "\"rshared\", which Talon does not accept",
        ),
        (
            Box::new(|s| {
                s.binds.push(BindMount {
                    options: Some("z".to_owned()),
                    ..BindMount::rw("/srv/a", "/x")
                })
            }),
            "\"z\", which Talon does not accept",
        ),
    ];
    for (mutate, expected) in cases {
        let mut spec = base(ws.path());
        mutate(&mut spec);
        let err = create_body(&spec, "1:1".to_owned(), ReadOnlyDepth::NonRecursive).unwrap_err();
        assert!(
            err.kind() == SandboxErrorKind::Config && err.message().contains(expected),
            "{expected}: {err}"
        );
    }
}

#[test]
fn the_user_defaults_to_the_workspace_owner() {
    let ws = tempfile::tempdir().unwrap();
    std::os::unix::fs::chown(ws.path(), Some(1234), Some(2345)).unwrap();
    let mut spec = base(ws.path());
    assert_eq!(resolve_user(&spec).unwrap(), "1234:2345");
    spec.user = Some("  ".to_owned());
    assert_eq!(resolve_user(&spec).unwrap(), "1234:2345");
    spec.user = Some("node".to_owned());
    assert_eq!(resolve_user(&spec).unwrap(), "node");

    let missing = base(&ws.path().join("not-there"));
    let err = resolve_user(&missing).unwrap_err();
    assert!(err.to_string().contains("must exist"), "{err}");
    let file = ws.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let err = resolve_user(&base(&file)).unwrap_err();
    assert!(err.to_string().contains("not a directory"), "{err}");
}

#[test]
fn names_and_images_that_could_bend_an_engine_url_are_refused() {
    use crate::spec::{check_container_name, check_image_ref};
    for good in ["talon-sbx-main-1a2b3c4d", "ab", "x_y.z-1"] {
        check_container_name(good).unwrap();
    }
    for bad in [
        "",
        "a",
        "-x",
        "../images/x",
        "a/b",
        "a?b",
        "a b",
        "a\n",
        "é",
    ] {
        let err = check_container_name(bad).unwrap_err();
        assert!(err.to_string().contains("is invalid"), "{bad:?}: {err}");
    }
    for good in [
        "openclaw-sandbox:bookworm-slim",
        "registry.local:5000/team/img:1.2",
        "img@sha256:abcdef0123",
    ] {
        check_image_ref(good).unwrap();
    }
    for bad in [
        "", "../x", "a/../b", "a//b", "/abs", "img?x=1", "img#f", "a%2e", "a b", "-rm",
    ] {
        let err = check_image_ref(bad).unwrap_err();
        assert!(
            err.to_string().contains("not a valid image"),
            "{bad:?}: {err}"
        );
    }
}

#[test]
fn read_only_depth_follows_the_engine_api_and_never_silently_downgrades() {
    assert_eq!(
        read_only_depth(1, 44).unwrap(),
        ReadOnlyDepth::ForceRecursive
    );
    assert_eq!(
        read_only_depth(1, 47).unwrap(),
        ReadOnlyDepth::ForceRecursive
    );
    assert_eq!(read_only_depth(1, 41).unwrap(), ReadOnlyDepth::NonRecursive);
    assert_eq!(read_only_depth(1, 40).unwrap(), ReadOnlyDepth::NonRecursive);
    let err = read_only_depth(1, 39).unwrap_err().to_string();
    assert!(err.contains("upgrade the engine"), "{err}");
    // On a 1.40-1.43 engine a read-only bind is non-recursive (submounts
    // are not carried in), never ReadOnlyForceRecursive (ignored there).
    let ws = tempfile::tempdir().unwrap();
    let mut spec = base(ws.path());
    spec.binds.push(BindMount::ro("/srv/data", "/data"));
    let body = create_body(&spec, "0:0".to_owned(), ReadOnlyDepth::NonRecursive).unwrap();
    let mounts = body.host_config.unwrap().mounts.unwrap();
    let ro = mounts[1].bind_options.clone().unwrap();
    assert_eq!(ro.non_recursive, Some(true));
    assert_eq!(ro.read_only_force_recursive, None);
    // The writable workspace keeps its submounts (recursive, as -v did).
    assert_eq!(mounts[0].bind_options.clone().unwrap().non_recursive, None);
}

#[test]
fn tmpfs_entries_get_the_default_size_unless_they_name_their_own() {
    let entries = [
        "/tmp".to_owned(),
        "/run:noexec,nosuid".to_owned(),
        "/var/tmp:mode=1777,SIZE=1m".to_owned(),
    ];
    let map = tmpfs_map(&entries, Some(4096));
    assert_eq!(map["/tmp"], "size=4096");
    assert_eq!(map["/run"], "noexec,nosuid,size=4096");
    assert_eq!(map["/var/tmp"], "mode=1777,SIZE=1m");
    let no_limit = tmpfs_map(&entries, None);
    assert_eq!(no_limit["/tmp"], "");
    assert_eq!(no_limit["/run"], "noexec,nosuid");
}
