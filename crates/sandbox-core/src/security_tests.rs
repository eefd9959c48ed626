#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;

use super::*;

fn origins() -> DockerOrigins {
    DockerOrigins {
        defaults_key: "agents.defaults.sandbox.docker".to_owned(),
        agent_key: None,
        agent_fields: Vec::new(),
        defaults_binds: usize::MAX,
    }
}

fn with_binds(binds: &[&str]) -> DockerSettings {
    DockerSettings {
        binds: binds.iter().map(|b| (*b).to_owned()).collect(),
        ..DockerSettings::default()
    }
}

fn codes(findings: &[SecurityFinding]) -> Vec<(FindingCode, String)> {
    findings.iter().map(|f| (f.code, f.key.clone())).collect()
}

fn check(settings: &DockerSettings, env: &SecurityEnv) -> Vec<SecurityFinding> {
    let findings = validate_sandbox_security(settings, &origins(), env);
    for f in &findings {
        assert!(f.message.starts_with("Sandbox security: "), "{}", f.message);
    }
    findings
}

fn one(bind: &str, env: &SecurityEnv) -> Vec<FindingCode> {
    check(&with_binds(&[bind]), env)
        .iter()
        .map(|f| f.code)
        .collect()
}

#[test]
fn defaults_pass() {
    assert_eq!(
        check(&DockerSettings::default(), &SecurityEnv::default()),
        vec![]
    );
}

#[test]
fn blocked_system_paths_and_the_docker_socket() {
    let env = SecurityEnv::default();
    for src in [
        "/etc",
        "/etc/ssl",
        "/proc",
        "/sys/kernel",
        "/dev",
        "/root",
        "/boot",
        "/run",
        "/var/run",
        "/private/etc",
        "/var/run/docker.sock",
        "/run/docker.sock",
        "/private/var/run/docker.sock",
        "/etc/../etc//passwd",
        "/tmp/../proc/self",
    ] {
        assert_eq!(
            one(&format!("{src}:/mnt/x"), &env),
            vec![FindingCode::BindBlockedPath],
            "{src}"
        );
    }
    let f = check(&with_binds(&["/var/run/docker.sock:/s"]), &env);
    assert!(
        f[0].message.contains("\"/var/run/docker.sock\""),
        "{}",
        f[0].message
    );
}

#[test]
fn root_and_parents_of_blocked_paths_are_covers() {
    let env = SecurityEnv::default();
    for src in ["/", "/var", "/private", "/private/var", "//"] {
        assert_eq!(
            one(&format!("{src}:/mnt/x"), &env),
            vec![FindingCode::BindCoversBlockedPath],
            "{src}"
        );
    }
    let f = check(&with_binds(&["/:/host"]), &env);
    assert!(f[0].message.contains("host root"), "{}", f[0].message);
}

#[test]
fn sensitive_home_dirs_and_their_parents_with_a_fake_home() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home/user");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(home.join("projects")).unwrap();
    let env = SecurityEnv {
        allowed_roots: Vec::new(),
        home_dirs: vec![home.clone()],
    };
    for sub in BLOCKED_HOME_SUBPATHS {
        assert_eq!(
            one(&format!("{}:/x", home.join(sub).display()), &env),
            vec![FindingCode::BindBlockedPath],
            "{sub}"
        );
    }
    assert_eq!(
        one(
            &format!("{}:/x", home.join(".ssh/id_ed25519").display()),
            &env
        ),
        vec![FindingCode::BindBlockedPath]
    );
    // The home itself and every parent of ~/.ssh cover it.
    for parent in [home.clone(), root.join("home"), root.clone()] {
        let f = check(&with_binds(&[&format!("{}:/x", parent.display())]), &env);
        assert_eq!(f.len(), 1, "{parent:?}");
        assert_eq!(f[0].code, FindingCode::BindCoversBlockedPath);
        assert!(
            f[0].message.contains("covers the blocked path"),
            "{}",
            f[0].message
        );
    }
    // A sibling project dir is fine.
    assert_eq!(
        one(&format!("{}:/x", home.join("projects").display()), &env),
        vec![]
    );
    // A home of "/" is ignored (it would block everything).
    let env = SecurityEnv {
        allowed_roots: Vec::new(),
        home_dirs: vec![PathBuf::from("/")],
    };
    assert_eq!(one("/srv/data:/x", &env), vec![]);
}

#[test]
fn a_home_given_through_a_symlink_is_blocked_under_its_realpath_too() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let real_home = root.join("real-home");
    std::fs::create_dir_all(real_home.join(".aws")).unwrap();
    std::os::unix::fs::symlink(&real_home, root.join("home-link")).unwrap();
    let env = SecurityEnv {
        allowed_roots: Vec::new(),
        home_dirs: vec![root.join("home-link")],
    };
    assert_eq!(
        one(&format!("{}:/x", real_home.join(".aws").display()), &env),
        vec![FindingCode::BindBlockedPath]
    );
}

#[test]
fn a_symlink_to_etc_is_caught_after_realpath() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    std::os::unix::fs::symlink("/etc", root.join("innocent")).unwrap();
    let env = SecurityEnv {
        allowed_roots: vec![root.clone()],
        home_dirs: Vec::new(),
    };
    let bind = format!("{}:/data", root.join("innocent").display());
    let f = check(&with_binds(&[&bind]), &env);
    assert_eq!(
        codes(&f),
        vec![(
            FindingCode::BindBlockedPath,
            "agents.defaults.sandbox.docker.binds[0]".to_owned()
        )]
    );
    assert_eq!(f[0].resolved.as_deref(), Some("/etc"));
    assert_eq!(f[0].value, bind);
    assert!(
        f[0].message.contains("resolves to \"/etc\""),
        "{}",
        f[0].message
    );
    // A not-yet-existing path beneath the link resolves under /etc too.
    let bind = format!("{}:/data", root.join("innocent/new/dir").display());
    assert_eq!(one(&bind, &env), vec![FindingCode::BindBlockedPath]);
    // So does a dangling link into /etc.
    std::os::unix::fs::symlink("/etc/talon-none", root.join("dangling")).unwrap();
    let bind = format!("{}:/data", root.join("dangling").display());
    assert_eq!(one(&bind, &env), vec![FindingCode::BindBlockedPath]);
    // `..` after a link climbs from its target: `ssl-link/..` is `/etc`,
    // even though it reads as the temp dir.
    std::os::unix::fs::symlink("/etc/ssl", root.join("ssl-link")).unwrap();
    let bind = format!("{}/ssl-link/..:/data", root.display());
    let mut s = with_binds(&[&bind]);
    s.dangerously_allow_external_bind_sources = true;
    let f = check(&s, &env);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].code, FindingCode::BindBlockedPath);
    assert_eq!(f[0].resolved.as_deref(), Some("/etc"));
    // And a link to / covers everything.
    std::os::unix::fs::symlink("/", root.join("slash")).unwrap();
    let bind = format!("{}:/data", root.join("slash").display());
    assert_eq!(one(&bind, &env), vec![FindingCode::BindCoversBlockedPath]);
}

#[test]
fn sources_must_be_absolute() {
    let env = SecurityEnv::default();
    for bind in ["relative/dir:/x", "./dir:/x", "named-vol:/x", "~/.ssh:/x"] {
        assert_eq!(
            one(bind, &env),
            vec![FindingCode::BindNotAbsolute],
            "{bind}"
        );
    }
    for bind in ["/only-source", "/a:relative-target", ""] {
        assert_eq!(
            one(bind, &env),
            vec![FindingCode::BindInvalidSpec],
            "{bind}"
        );
    }
}

#[test]
fn sources_outside_allowed_roots_unless_break_glass() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let ws = root.join("ws");
    let outside = root.join("outside");
    std::fs::create_dir_all(ws.join("data")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("escape")).unwrap();
    let env = SecurityEnv {
        allowed_roots: vec![ws.clone()],
        home_dirs: Vec::new(),
    };
    assert_eq!(
        one(&format!("{}:/data", ws.join("data").display()), &env),
        vec![]
    );
    assert_eq!(
        one(&format!("{}:/data", outside.display()), &env),
        vec![FindingCode::BindOutsideAllowedRoots]
    );
    // Inside the root as written, outside after realpath.
    let f = check(
        &with_binds(&[&format!("{}:/data", ws.join("escape").display())]),
        &env,
    );
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].code, FindingCode::BindOutsideAllowedRoots);
    assert_eq!(f[0].resolved.as_deref(), Some(outside.to_str().unwrap()));
    let mut s = with_binds(&[&format!("{}:/data", outside.display())]);
    s.dangerously_allow_external_bind_sources = true;
    assert_eq!(check(&s, &env), vec![]);
    // Break-glass never lifts the blocked paths.
    let mut s = with_binds(&["/etc:/data"]);
    s.dangerously_allow_external_bind_sources = true;
    assert_eq!(codes(&check(&s, &env))[0].0, FindingCode::BindBlockedPath);
}

#[test]
fn reserved_targets_unless_break_glass() {
    let env = SecurityEnv::default();
    for target in [
        "/workspace",
        "/workspace/x",
        "/agent",
        "/agent/",
        "/x/../workspace",
    ] {
        assert_eq!(
            one(&format!("/srv/d:{target}"), &env),
            vec![FindingCode::BindReservedTarget],
            "{target}"
        );
    }
    assert_eq!(one("/srv/d:/workspaces", &env), vec![]);
    // A custom workdir is reserved as well.
    let mut s = with_binds(&["/srv/d:/work/sub"]);
    s.workdir = "/work".to_owned();
    assert_eq!(check(&s, &env)[0].code, FindingCode::BindReservedTarget);
    let mut s = with_binds(&["/srv/d:/workspace/x"]);
    s.dangerously_allow_reserved_container_targets = true;
    assert_eq!(check(&s, &env), vec![]);
}

#[test]
fn network_modes() {
    let env = SecurityEnv::default();
    for (network, expect) in [
        ("host", vec![FindingCode::NetworkHost]),
        (" HOST ", vec![FindingCode::NetworkHost]),
        ("container:db", vec![FindingCode::NetworkContainerJoin]),
        ("Container:db", vec![FindingCode::NetworkContainerJoin]),
        ("bridge", vec![]),
        ("none", vec![]),
        ("my-net", vec![]),
    ] {
        let s = DockerSettings {
            network: network.to_owned(),
            ..DockerSettings::default()
        };
        let f = check(&s, &env);
        assert_eq!(
            f.iter().map(|f| f.code).collect::<Vec<_>>(),
            expect,
            "{network}"
        );
        if let Some(f) = f.first() {
            assert_eq!(f.key, "agents.defaults.sandbox.docker.network");
            assert_eq!(f.value, network);
        }
    }
    let s = DockerSettings {
        network: "container:db".to_owned(),
        dangerously_allow_container_namespace_join: true,
        ..DockerSettings::default()
    };
    assert_eq!(check(&s, &env), vec![]);
    // The switch does not allow host.
    let s = DockerSettings {
        network: "host".to_owned(),
        dangerously_allow_container_namespace_join: true,
        ..DockerSettings::default()
    };
    assert_eq!(check(&s, &env)[0].code, FindingCode::NetworkHost);
}

#[test]
fn unconfined_profiles_privileged_and_added_caps() {
    let env = SecurityEnv::default();
    let s = DockerSettings {
        seccomp_profile: Some("Unconfined".to_owned()),
        apparmor_profile: Some(" unconfined".to_owned()),
        privileged: true,
        cap_add: vec!["SYS_ADMIN".to_owned(), "NET_RAW".to_owned()],
        ..DockerSettings::default()
    };
    let f = check(&s, &env);
    assert_eq!(
        codes(&f),
        vec![
            (
                FindingCode::SeccompUnconfined,
                "agents.defaults.sandbox.docker.seccompProfile".to_owned()
            ),
            (
                FindingCode::ApparmorUnconfined,
                "agents.defaults.sandbox.docker.apparmorProfile".to_owned()
            ),
            (
                FindingCode::Privileged,
                "agents.defaults.sandbox.docker.privileged".to_owned()
            ),
            (
                FindingCode::CapAdd,
                "agents.defaults.sandbox.docker.capAdd[0]".to_owned()
            ),
            (
                FindingCode::CapAdd,
                "agents.defaults.sandbox.docker.capAdd[1]".to_owned()
            ),
        ]
    );
    assert_eq!(f[3].value, "SYS_ADMIN");
    let s = DockerSettings {
        seccomp_profile: Some("/etc/docker/seccomp.json".to_owned()),
        apparmor_profile: Some("docker-default".to_owned()),
        ..DockerSettings::default()
    };
    assert_eq!(check(&s, &env), vec![]);
}

#[test]
fn every_finding_is_listed_with_its_agent_key() {
    let origins = DockerOrigins {
        defaults_key: "agents.defaults.sandbox.docker".to_owned(),
        agent_key: Some("agents.list[2].sandbox.docker".to_owned()),
        agent_fields: vec!["binds".to_owned(), "network".to_owned()],
        defaults_binds: 1,
    };
    let s = DockerSettings {
        binds: vec![
            "/etc:/e".to_owned(),
            "/proc:/p".to_owned(),
            "/srv/ok:/workspace".to_owned(),
        ],
        network: "host".to_owned(),
        ..DockerSettings::default()
    };
    let f = validate_sandbox_security(&s, &origins, &SecurityEnv::default());
    assert_eq!(
        codes(&f),
        vec![
            (
                FindingCode::BindBlockedPath,
                "agents.defaults.sandbox.docker.binds[0]".to_owned()
            ),
            (
                FindingCode::BindBlockedPath,
                "agents.list[2].sandbox.docker.binds[0]".to_owned()
            ),
            (
                FindingCode::BindReservedTarget,
                "agents.list[2].sandbox.docker.binds[1]".to_owned()
            ),
            (
                FindingCode::NetworkHost,
                "agents.list[2].sandbox.docker.network".to_owned()
            ),
        ]
    );
    let err = ensure_sandbox_security(&s, &origins, &SecurityEnv::default()).unwrap_err();
    let text = err.to_string();
    assert_eq!(text.matches("Sandbox security:").count(), 4, "{text}");
    assert!(
        ensure_sandbox_security(
            &DockerSettings::default(),
            &origins,
            &SecurityEnv::default()
        )
        .is_ok()
    );
}

#[test]
fn codes_are_stable_strings() {
    let all = [
        (FindingCode::BindBlockedPath, "bind-blocked-path"),
        (
            FindingCode::BindCoversBlockedPath,
            "bind-covers-blocked-path",
        ),
        (FindingCode::BindNotAbsolute, "bind-not-absolute"),
        (FindingCode::BindInvalidSpec, "bind-invalid-spec"),
        (
            FindingCode::BindOutsideAllowedRoots,
            "bind-outside-allowed-roots",
        ),
        (FindingCode::BindReservedTarget, "bind-reserved-target"),
        (FindingCode::NetworkHost, "network-host"),
        (FindingCode::NetworkContainerJoin, "network-container-join"),
        (FindingCode::SeccompUnconfined, "seccomp-unconfined"),
        (FindingCode::ApparmorUnconfined, "apparmor-unconfined"),
        (FindingCode::Privileged, "privileged"),
        (FindingCode::CapAdd, "cap-add"),
    ];
    for (code, text) in all {
        assert_eq!(code.as_str(), text);
        assert_eq!(serde_json::to_value(code).unwrap(), serde_json::json!(text));
    }
}
