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
        ..SecurityEnv::default()
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
    // The home itself is a home; every parent of ~/.ssh covers it.
    assert_eq!(
        one(&format!("{}:/x", home.display()), &env),
        vec![FindingCode::BindHomeDir]
    );
    for parent in [root.join("home"), root.clone()] {
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
        ..SecurityEnv::default()
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
        ..SecurityEnv::default()
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
        ..SecurityEnv::default()
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
        ..SecurityEnv::default()
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
        (FindingCode::BindSystemTarget, "bind-system-target"),
        (FindingCode::BindPropagation, "bind-propagation"),
        (
            FindingCode::BindUnsupportedOption,
            "bind-unsupported-option",
        ),
        (FindingCode::BindHomeDir, "bind-home-dir"),
        (FindingCode::BindHoldsCredentials, "bind-holds-credentials"),
        (FindingCode::BindTalonState, "bind-talon-state"),
        (FindingCode::WorkspaceBlockedPath, "workspace-blocked-path"),
        (
            FindingCode::WorkspaceCoversBlockedPath,
            "workspace-covers-blocked-path",
        ),
        (FindingCode::WorkspaceHomeDir, "workspace-home-dir"),
        (
            FindingCode::WorkspaceHoldsCredentials,
            "workspace-holds-credentials",
        ),
        (FindingCode::WorkspaceTalonState, "workspace-talon-state"),
        (FindingCode::CapDropNotAll, "cap-drop-not-all"),
    ];
    for (code, text) in all {
        assert_eq!(code.as_str(), text);
        assert_eq!(serde_json::to_value(code).unwrap(), serde_json::json!(text));
    }
}

/// Every switch on at once: what stays refused is what no switch lifts.
fn all_switches(binds: &[&str]) -> DockerSettings {
    let mut s = with_binds(binds);
    s.dangerously_allow_external_bind_sources = true;
    s.dangerously_allow_reserved_container_targets = true;
    s.dangerously_allow_container_namespace_join = true;
    s
}

#[test]
fn no_switch_unblocks_a_blocked_path() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home-u");
    let state = root.join("state");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(state.join("sandboxes/agent-main")).unwrap();
    let config = root.join("talon.json");
    std::fs::write(&config, "{}").unwrap();
    let ws = root.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    // A link inside the allowed root to each blocked place.
    std::os::unix::fs::symlink("/var/lib/docker", ws.join("engine")).unwrap();
    std::os::unix::fs::symlink(home.join(".ssh"), ws.join("keys")).unwrap();
    std::os::unix::fs::symlink(&state, ws.join("state")).unwrap();
    let env = SecurityEnv {
        allowed_roots: vec![ws.clone(), state.join("sandboxes/agent-main")],
        home_dirs: vec![home.clone()],
        state_dir: Some(state.clone()),
        config_files: vec![config.clone()],
        managed_dirs: vec![state.join("sandboxes/agent-main")],
    };
    let cases: Vec<(String, FindingCode)> = vec![
        ("/var/lib/docker".into(), FindingCode::BindBlockedPath),
        (
            "/var/lib/docker/volumes".into(),
            FindingCode::BindBlockedPath,
        ),
        ("/var/lib/containerd".into(), FindingCode::BindBlockedPath),
        (
            "/run/containerd/containerd.sock".into(),
            FindingCode::BindBlockedPath,
        ),
        ("/var/run/docker.sock".into(), FindingCode::BindBlockedPath),
        ("/run/docker.sock".into(), FindingCode::BindBlockedPath),
        (
            "/run/podman/podman.sock".into(),
            FindingCode::BindBlockedPath,
        ),
        (
            "/var/lib/containers/storage".into(),
            FindingCode::BindBlockedPath,
        ),
        ("/run/user/1000".into(), FindingCode::BindBlockedPath),
        ("/var/lib".into(), FindingCode::BindCoversBlockedPath),
        ("/var".into(), FindingCode::BindCoversBlockedPath),
        ("/".into(), FindingCode::BindCoversBlockedPath),
        (home.display().to_string(), FindingCode::BindHomeDir),
        ("/home/someone".into(), FindingCode::BindHomeDir),
        ("/home".into(), FindingCode::BindHomeDir),
        (state.display().to_string(), FindingCode::BindTalonState),
        (
            state.join("talon.db").display().to_string(),
            FindingCode::BindTalonState,
        ),
        (
            state.join("sandboxes").display().to_string(),
            FindingCode::BindTalonState,
        ),
        (config.display().to_string(), FindingCode::BindTalonState),
        (
            ws.join("engine").display().to_string(),
            FindingCode::BindBlockedPath,
        ),
        (
            ws.join("keys").display().to_string(),
            FindingCode::BindBlockedPath,
        ),
        (
            ws.join("state").display().to_string(),
            FindingCode::BindTalonState,
        ),
    ];
    for sub in [
        ".azure",
        ".git-credentials",
        ".netrc",
        ".config/gcloud",
        ".config/gh",
        ".npmrc",
        ".pypirc",
        ".docker/config.json",
        ".kube",
        ".aws/credentials",
        ".gnupg",
        ".ssh",
        ".cargo/credentials.toml",
        ".bashrc",
        ".gitconfig",
        ".local/share/docker",
    ] {
        assert_eq!(
            one(&format!("{}:/x", home.join(sub).display()), &env),
            vec![FindingCode::BindBlockedPath],
            "{sub}"
        );
        let s = all_switches(&[&format!("{}:/x", home.join(sub).display())]);
        assert_eq!(check(&s, &env).len(), 1, "{sub} with every switch on");
    }
    for (src, code) in cases {
        let bind = format!("{src}:/data");
        assert_eq!(one(&bind, &env), vec![code], "{src}");
        let f = check(&all_switches(&[&bind]), &env);
        assert_eq!(
            f.iter().map(|f| f.code).collect::<Vec<_>>(),
            vec![code],
            "{src} with every switch on"
        );
        assert!(
            f[0].message.contains("no dangerously* switch"),
            "{}",
            f[0].message
        );
        assert_eq!(f[0].key, "agents.defaults.sandbox.docker.binds[0]");
    }
    // The managed scope workspace beneath the state dir stays allowed.
    let ok = format!("{}:/data", state.join("sandboxes/agent-main").display());
    assert_eq!(one(&ok, &env), vec![]);
}

#[test]
fn a_directory_holding_credentials_is_refused_wherever_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let env = SecurityEnv {
        allowed_roots: vec![root.clone()],
        ..SecurityEnv::default()
    };
    for marker in CREDENTIAL_MARKERS {
        let dir = root.join(format!("d{}", marker.replace(['/', '.'], "_")));
        let at = dir.join(marker);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(&at, "secret").unwrap();
        let bind = format!("{}:/data", dir.display());
        let f = check(&all_switches(&[&bind]), &env);
        assert_eq!(
            f.iter().map(|f| f.code).collect::<Vec<_>>(),
            vec![FindingCode::BindHoldsCredentials],
            "{marker}"
        );
    }
    // A project with its own .cargo/config.toml and .npmrc is fine.
    let project = root.join("project");
    std::fs::create_dir_all(project.join(".cargo")).unwrap();
    std::fs::write(project.join(".cargo/config.toml"), "").unwrap();
    std::fs::write(project.join(".npmrc"), "").unwrap();
    assert_eq!(one(&format!("{}:/data", project.display()), &env), vec![]);
}

#[test]
fn system_targets_are_refused_whatever_the_switches() {
    let env = SecurityEnv::default();
    for target in [
        "/",
        "/usr",
        "/usr/bin",
        "/bin",
        "/sbin",
        "/lib",
        "/lib64",
        "/etc",
        "/etc/passwd",
        "/proc",
        "/sys/fs",
        "/dev",
        "/dev/shm",
        "/boot",
        "/run",
        "/var/run",
        "/x/../usr",
    ] {
        let bind = format!("/srv/d:{target}");
        let f = check(&all_switches(&[&bind]), &env);
        assert_eq!(
            f.iter().map(|f| f.code).collect::<Vec<_>>(),
            vec![FindingCode::BindSystemTarget],
            "{target}"
        );
    }
    for target in ["/data", "/mnt/x", "/var/cache/x", "/opt/tools", "/usrdata"] {
        assert_eq!(one(&format!("/srv/d:{target}"), &env), vec![], "{target}");
    }
}

#[test]
fn propagation_and_unknown_options_are_refused() {
    let env = SecurityEnv::default();
    for option in [
        "shared",
        "rshared",
        "slave",
        "rslave",
        "ro,rshared",
        "RSLAVE",
    ] {
        let f = check(&all_switches(&[&format!("/srv/d:/data:{option}")]), &env);
        assert_eq!(
            f.iter().map(|f| f.code).collect::<Vec<_>>(),
            vec![FindingCode::BindPropagation],
            "{option}"
        );
        assert!(f[0].message.contains("/srv/d:/data"), "{}", f[0].message);
    }
    for option in ["z", "Z", "ro,z", "nocopy", "exec", "suid"] {
        assert_eq!(
            one(&format!("/srv/d:/data:{option}"), &env),
            vec![FindingCode::BindUnsupportedOption],
            "{option}"
        );
    }
    for option in ["ro", "rw", "private", "rprivate", "ro,rprivate", "cached"] {
        assert_eq!(
            one(&format!("/srv/d:/data:{option}"), &env),
            vec![],
            "{option}"
        );
    }
}

#[test]
fn cap_drop_without_all_is_a_finding() {
    let env = SecurityEnv::default();
    for drop in [
        vec![],
        vec!["NET_RAW".to_owned()],
        vec!["CHOWN".to_owned(), "SETUID".to_owned()],
    ] {
        let s = DockerSettings {
            cap_drop: drop.clone(),
            ..DockerSettings::default()
        };
        let f = check(&s, &env);
        assert_eq!(
            codes(&f),
            vec![(
                FindingCode::CapDropNotAll,
                "agents.defaults.sandbox.docker.capDrop".to_owned()
            )],
            "{drop:?}"
        );
        assert!(f[0].message.contains("[\"ALL\"]"), "{}", f[0].message);
    }
    for drop in [
        vec!["ALL".to_owned()],
        vec!["all".to_owned(), "NET_RAW".to_owned()],
    ] {
        let s = DockerSettings {
            cap_drop: drop,
            ..DockerSettings::default()
        };
        assert_eq!(check(&s, &env), vec![]);
    }
}

fn request_for(
    state: &Path,
    agent_ws: &Path,
    access: crate::sandbox_config::WorkspaceAccess,
    binds: &[String],
    config_file: Option<&Path>,
) -> SandboxRequest {
    use crate::resolved::{ResolvedSandboxConfig, SandboxInputs};
    use crate::sandbox_config::SandboxConfig;
    let defaults = SandboxConfig {
        mode: Some(talon_tool_policy::SandboxMode::All),
        workspace_access: Some(access),
        docker: Some(crate::docker_config::DockerConfig {
            binds: Some(binds.to_vec()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let tools = talon_tool_policy::config::ToolsConfig::default();
    let resolved = ResolvedSandboxConfig::resolve(&SandboxInputs {
        agent_id: "main",
        defaults: Some(&defaults),
        agent: None,
        agent_key: None,
        state_dir: state,
        home: None,
        tools: &tools,
        agent_tools: None,
    })
    .with_config_file(config_file.map(Path::to_path_buf));
    SandboxRequest::new(resolved, "main", agent_ws, None)
}

#[test]
fn the_managed_workspace_is_validated_like_any_bind() {
    use crate::sandbox_config::WorkspaceAccess;
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let state = root.join("state");
    let home = root.join("home-u");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(&state).unwrap();
    let homes = vec![home.clone()];
    let codes_for = |ws: &Path, access: WorkspaceAccess, config: Option<&Path>| {
        let req = request_for(&state, ws, access, &[], config);
        let env = SecurityEnv::for_request(&req, &homes);
        validate_request_security(&req, &env)
            .into_iter()
            .map(|f| (f.code, f.key))
            .collect::<Vec<_>>()
    };
    let ws_key = "agents.defaults.workspace".to_owned();
    // A workspace that is a home holding .ssh: refused for rw and ro.
    for access in [WorkspaceAccess::Rw, WorkspaceAccess::Ro] {
        assert_eq!(
            codes_for(&home, access, None),
            vec![(FindingCode::WorkspaceHomeDir, ws_key.clone())],
            "{access:?}"
        );
    }
    // With `none` the agent workspace is not mounted at all.
    assert_eq!(codes_for(&home, WorkspaceAccess::None, None), vec![]);
    // A project dir holding credentials.
    let project = root.join("project");
    std::fs::create_dir_all(project.join(".aws")).unwrap();
    assert_eq!(
        codes_for(&project, WorkspaceAccess::Rw, None),
        vec![(FindingCode::WorkspaceHoldsCredentials, ws_key.clone())]
    );
    // A workspace holding the config file, or being / holding the state dir.
    let clean = root.join("clean");
    std::fs::create_dir_all(&clean).unwrap();
    let config = clean.join("talon.json");
    std::fs::write(&config, "{}").unwrap();
    assert_eq!(
        codes_for(&clean, WorkspaceAccess::Rw, Some(&config)),
        vec![(FindingCode::WorkspaceTalonState, ws_key.clone())]
    );
    assert_eq!(codes_for(&clean, WorkspaceAccess::Rw, None), vec![]);
    assert_eq!(
        codes_for(&state, WorkspaceAccess::Rw, None),
        vec![(FindingCode::WorkspaceTalonState, ws_key.clone())]
    );
    assert_eq!(
        codes_for(&root, WorkspaceAccess::Rw, None)[0],
        (FindingCode::WorkspaceTalonState, ws_key.clone())
    );
    // An agent workspace kept beneath the state dir is Talon's own.
    let inner = state.join("workspace");
    std::fs::create_dir_all(&inner).unwrap();
    assert_eq!(codes_for(&inner, WorkspaceAccess::Rw, None), vec![]);
    assert_eq!(codes_for(&inner, WorkspaceAccess::Ro, None), vec![]);
    // A workspace of `/` or under /etc.
    assert_eq!(
        codes_for(Path::new("/"), WorkspaceAccess::Rw, None),
        vec![(FindingCode::WorkspaceCoversBlockedPath, ws_key.clone())]
    );
    assert_eq!(
        codes_for(Path::new("/etc/talon"), WorkspaceAccess::Rw, None),
        vec![(FindingCode::WorkspaceBlockedPath, ws_key)]
    );
}

#[test]
fn pinning_hands_over_the_canonical_path_and_refuses_a_swapped_source() {
    use crate::sandbox_config::WorkspaceAccess;
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let state = root.join("state");
    let ws = root.join("ws");
    let secret = root.join("secret");
    std::fs::create_dir_all(ws.join("allowed")).unwrap();
    std::fs::create_dir_all(secret.join(".ssh")).unwrap();
    std::fs::create_dir_all(&state).unwrap();
    let link = ws.join("link");
    std::os::unix::fs::symlink(ws.join("allowed"), &link).unwrap();
    let bind = format!("{}:/data:ro", link.display());
    let req = request_for(&state, &ws, WorkspaceAccess::Rw, &[bind], None);
    let env = SecurityEnv::for_request(&req, &[]);
    assert_eq!(validate_request_security(&req, &env), vec![]);
    let pinned = pin_mount_sources(&req, &env).unwrap();
    assert_eq!(pinned.len(), 2);
    assert_eq!(pinned[0].canonical, ws);
    assert_eq!(pinned[1].canonical, ws.join("allowed"));
    assert!(pinned[1].verify("/data").is_ok());
    // The link now points at the secret: pinning again refuses it.
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    let err = pin_mount_sources(&req, &env).unwrap_err().to_string();
    assert!(err.contains("[bind-holds-credentials]"), "{err}");
    assert!(
        err.contains("agents.defaults.sandbox.docker.binds[0]"),
        "{err}"
    );
    // The pinned canonical path itself replaced by a link: verify fails.
    std::fs::rename(ws.join("allowed"), root.join("moved")).unwrap();
    std::os::unix::fs::symlink(&secret, ws.join("allowed")).unwrap();
    let err = pinned[1].verify("/data").unwrap_err().to_string();
    assert!(
        err.contains("changed while the sandbox was being created"),
        "{err}"
    );
}

#[test]
fn talons_own_workspaces_stay_usable_when_the_state_dir_is_under_root() {
    // Talon running as root keeps its state in /root/.talon: its managed
    // workspaces there are fine, nothing else under /root is.
    let state = PathBuf::from("/root/.talon-test-none");
    let managed = state.join("sandboxes/agent-main");
    let env = SecurityEnv {
        allowed_roots: vec![managed.clone()],
        home_dirs: vec![PathBuf::from("/root")],
        state_dir: Some(state.clone()),
        config_files: vec![state.join("talon.json")],
        managed_dirs: vec![managed.clone()],
    };
    assert_eq!(one(&format!("{}:/data", managed.display()), &env), vec![]);
    for (src, code) in [
        ("/root/project", FindingCode::BindBlockedPath),
        ("/root/.ssh", FindingCode::BindBlockedPath),
        (
            "/root/.talon-test-none/talon.db",
            FindingCode::BindBlockedPath,
        ),
        (
            "/root/.talon-test-none/talon.json",
            FindingCode::BindBlockedPath,
        ),
    ] {
        assert_eq!(one(&format!("{src}:/data"), &env), vec![code], "{src}");
    }
    // A credential marker inside a managed dir is still refused.
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let state = root.join("state");
    let managed = state.join("workspace");
    std::fs::create_dir_all(managed.join(".ssh")).unwrap();
    let env = SecurityEnv {
        allowed_roots: vec![managed.clone()],
        state_dir: Some(state),
        managed_dirs: vec![managed.clone()],
        ..SecurityEnv::default()
    };
    assert_eq!(
        one(&format!("{}:/data", managed.display()), &env),
        vec![FindingCode::BindHoldsCredentials]
    );
}
