#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::spec::{BindMount, Limits, Ulimit};

fn base(ws: &std::path::Path) -> ContainerSpec {
    ContainerSpec::new("talon-sbx-unit", "agent:unit", ws, "hash-1")
}

#[test]
fn defaults_are_openclaws_hardened_create_arguments() {
    let ws = tempfile::tempdir().unwrap();
    let body = create_body(&base(ws.path()), "1000:1000".to_owned()).unwrap();
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
    assert_eq!(
        host.binds,
        Some(vec![format!("{}:/workspace:z", ws.path().display())])
    );
    let labels = body.labels.unwrap();
    assert_eq!(labels["talon.sandbox"], "1");
    assert_eq!(labels["talon.sessionKey"], "agent:unit");
    assert_eq!(labels["talon.configHash"], "hash-1");
    assert_eq!(labels["talon.mountFormatVersion"], "4");
    assert_eq!(labels["talon.createArgsEpoch"], "2026-07-10-init");
}

#[test]
fn limits_binds_and_extra_labels_are_carried_but_cannot_override_talons_own() {
    let ws = tempfile::tempdir().unwrap();
    let mut spec = base(ws.path());
    spec.binds.push(BindMount::ro("/srv/data", "/data"));
    spec.binds.push(BindMount {
        options: Some("rw,rslave".to_owned()),
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
    let body = create_body(&spec, "0:0".to_owned()).unwrap();
    let host = body.host_config.unwrap();
    let binds = host.binds.unwrap();
    assert_eq!(binds[1], "/srv/data:/data:ro,z");
    assert_eq!(binds[2], "/srv/cache:/cache:rw,rslave");
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
            Box::new(|s| s.binds.push(BindMount::rw("/srv/a:b", "/x"))),
            "contains `:`",
        ),
        (
            Box::new(|s| s.binds.push(BindMount::rw("/srv/a", "x"))),
            "absolute container path",
        ),
        (
            Box::new(|s| s.binds.push(BindMount::rw("/srv/a", "/x:rw"))),
            "without `:`",
        ),
    ];
    for (mutate, expected) in cases {
        let mut spec = base(ws.path());
        mutate(&mut spec);
        let err = create_body(&spec, "1:1".to_owned()).unwrap_err();
        assert!(
            matches!(&err, SandboxError::Config(m) if m.contains(expected)),
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
