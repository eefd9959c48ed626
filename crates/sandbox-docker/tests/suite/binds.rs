//! Binds that cannot be bent, attacked on the real engine: blocked sources
//! with every `dangerously*` switch on, writable submounts under read-only
//! binds, a 1,000-iteration symlink swap race against container creation,
//! and managed workspaces that are homes or hold Talon's own config.

use super::common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{Cleanup, IMAGE, QUICK, backend, workspace};
use talon_sandbox_core::{
    DockerConfig, ExitStatus, ResolvedSandboxConfig, SandboxBackend, SandboxConfig,
    SandboxErrorKind, SandboxHandle, SandboxInputs, SandboxRequest, WorkspaceAccess,
};
use talon_sandbox_docker::DockerBackend;
use talon_test_support::mounts::{TmpfsSubmount, exchange};

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A request for a fresh agent id on the test image.
fn request(
    state: &Path,
    agent_ws: &Path,
    access: WorkspaceAccess,
    mut docker: DockerConfig,
    config_file: Option<&Path>,
) -> SandboxRequest {
    docker.image = Some(IMAGE.to_owned());
    let defaults = SandboxConfig {
        workspace_access: Some(access),
        docker: Some(docker),
        ..Default::default()
    };
    let agent_id = format!(
        "b{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    );
    let tools = talon_tool_policy::config::ToolsConfig::default();
    let resolved = ResolvedSandboxConfig::resolve(&SandboxInputs {
        agent_id: &agent_id,
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

async fn sh(handle: &dyn SandboxHandle, script: &str) -> (String, String, ExitStatus) {
    let out = handle.run_script(script, &[], None, QUICK).await.unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status,
    )
}

async fn exists(backend: &DockerBackend, name: &str) -> bool {
    backend.docker().inspect_container(name, None).await.is_ok()
}

/// Every switch on: what stays refused is what no switch may lift.
fn all_switches(binds: Vec<String>) -> DockerConfig {
    DockerConfig {
        binds: Some(binds),
        dangerously_allow_external_bind_sources: Some(true),
        dangerously_allow_reserved_container_targets: Some(true),
        dangerously_allow_container_namespace_join: Some(true),
        ..Default::default()
    }
}

#[tokio::test]
async fn each_blocked_bind_stays_blocked_with_every_dangerous_switch_on() {
    let root = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(root.path()).unwrap();
    let home = root.join("home-u");
    let state = root.join("state");
    let ws = root.join("ws");
    for sub in [
        ".ssh",
        ".aws",
        ".azure",
        ".config/gcloud",
        ".kube",
        ".docker",
        ".gnupg",
    ] {
        std::fs::create_dir_all(home.join(sub)).unwrap();
    }
    for file in [".git-credentials", ".netrc", ".npmrc", ".pypirc"] {
        std::fs::write(home.join(file), "secret").unwrap();
    }
    std::fs::create_dir_all(&state).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    std::os::unix::fs::chown(&ws, Some(1000), Some(1000)).unwrap();
    let config = state.join("talon.json");
    std::fs::write(&config, "{}").unwrap();
    std::fs::write(state.join("talon.db"), "db").unwrap();
    // Links inside the allowed root, to the engine and to the keys.
    std::os::unix::fs::symlink("/var/lib/docker", ws.join("engine")).unwrap();
    std::os::unix::fs::symlink(home.join(".ssh"), ws.join("keys")).unwrap();
    let backend = backend().await.with_home_dirs(vec![home.clone()]);
    let mut cases: Vec<(String, &str)> = [
        "/var/lib/docker",
        "/var/lib/containerd",
        "/run/containerd",
        "/var/run/docker.sock",
        "/run/docker.sock",
        "/var/lib",
        "/",
    ]
    .iter()
    .map(|s| (format!("{s}:/data:ro"), "bind-"))
    .collect();
    for sub in [
        ".ssh",
        ".aws",
        ".azure",
        ".config/gcloud",
        ".kube",
        ".docker",
        ".gnupg",
        ".git-credentials",
        ".netrc",
        ".npmrc",
        ".pypirc",
    ] {
        cases.push((
            format!("{}:/data:ro", home.join(sub).display()),
            "[bind-blocked-path]",
        ));
    }
    cases.extend([
        (format!("{}:/data:ro", home.display()), "[bind-home-dir]"),
        (
            format!("{}:/data:ro", state.display()),
            "[bind-talon-state]",
        ),
        (
            format!("{}:/data:ro", config.display()),
            "[bind-talon-state]",
        ),
        (
            format!("{}:/data:ro", state.join("talon.db").display()),
            "[bind-talon-state]",
        ),
        (
            format!("{}:/data:ro", ws.join("engine").display()),
            "[bind-blocked-path]",
        ),
        (
            format!("{}:/data:ro", ws.join("keys").display()),
            "[bind-blocked-path]",
        ),
        (
            format!("{}:/data:rshared", ws.display()),
            "[bind-propagation]",
        ),
        (
            format!("{}:/data:ro,rslave", ws.display()),
            "[bind-propagation]",
        ),
        (
            format!("{}:/usr/local/bin", ws.display()),
            "[bind-system-target]",
        ),
        (format!("{}:/", ws.display()), "[bind-system-target]"),
    ]);
    for (bind, code) in cases {
        let req = request(
            &state,
            &ws,
            WorkspaceAccess::None,
            all_switches(vec![bind.clone()]),
            Some(&config),
        );
        let _cleanup = Cleanup(vec![req.sandbox_name.clone()]);
        let err = SandboxBackend::ensure(&backend, &req).await.unwrap_err();
        assert!(
            err.kind() == SandboxErrorKind::Config
                && err.message().contains(code)
                && err.message().contains("binds[0]"),
            "{bind} must be refused with {code}: {err}"
        );
        assert!(
            !exists(&backend, &req.sandbox_name).await,
            "{bind}: nothing may be created"
        );
    }
    // capDrop without ALL, whatever else is set.
    let req = request(
        &state,
        &ws,
        WorkspaceAccess::None,
        DockerConfig {
            cap_drop: Some(vec![]),
            ..all_switches(vec![])
        },
        None,
    );
    let err = SandboxBackend::ensure(&backend, &req).await.unwrap_err();
    assert!(err.to_string().contains("[cap-drop-not-all]"), "{err}");
    assert!(err.to_string().contains("sandbox.docker.capDrop"), "{err}");
    assert!(!exists(&backend, &req.sandbox_name).await);
}

#[tokio::test]
async fn a_writable_submount_under_a_read_only_bind_is_not_writable_inside() {
    let backend = backend().await;
    let state = tempfile::tempdir().unwrap();
    let agent_ws = workspace();
    let data = agent_ws.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("top"), "top\n").unwrap();
    // A writable tmpfs inside the directory that is bound read-only, and
    // one inside the agent workspace that `ro` shows at /agent.
    let sub = TmpfsSubmount::new(&data.join("sub"));
    let agent_sub = TmpfsSubmount::new(&agent_ws.path().join("cache"));
    let req = request(
        state.path(),
        agent_ws.path(),
        WorkspaceAccess::Ro,
        DockerConfig {
            binds: Some(vec![format!("{}:/data:ro", data.display())]),
            ..Default::default()
        },
        None,
    );
    let _cleanup = Cleanup(vec![req.sandbox_name.clone()]);
    let handle = SandboxBackend::ensure(&backend, &req).await.unwrap();
    for target in [
        "/data/top",
        "/data/sub/inside-submount",
        "/data/sub/new-file",
        "/agent/cache/inside-submount",
        "/agent/cache/new-file",
    ] {
        let (_, err, status) = sh(&*handle, &format!("echo pwned > {target}")).await;
        assert!(!status.success(), "{target} must not be writable: {err}");
    }
    let (_, _, status) = sh(&*handle, "mkdir /data/sub/d || mkdir /agent/cache/d").await;
    assert!(!status.success());
    // Nothing reached the submounts on the host.
    assert_eq!(
        std::fs::read_to_string(sub.path.join("inside-submount")).unwrap(),
        "original\n"
    );
    assert_eq!(
        std::fs::read_to_string(agent_sub.path.join("inside-submount")).unwrap(),
        "original\n"
    );
    assert!(!sub.path.join("new-file").exists() && !agent_sub.path.join("new-file").exists());
    // The writable workspace stays writable.
    let (_, err, status) = sh(&*handle, "echo ok > /workspace/scratch").await;
    assert!(status.success(), "{err}");
    drop(handle);
    SandboxBackend::remove(&backend, &req.sandbox_name)
        .await
        .unwrap();
}

/// The race of the issue: while sandboxes are created, another process
/// swaps the bind sources between an allowed directory and a secret one,
/// 1,000 times. Two shapes at once: a symlink named by the bind flips its
/// target (`link`), and the bound directory itself is exchanged with a
/// symlink to the secret (`dir`, which defeats any check made only on the
/// path before the engine mounts it). No sandbox handed out may ever show
/// the secret; a create that loses the race is refused and removed.
///
/// Wall time is bounded by pacing the swapper (1,000 swaps at about 15 ms)
/// and creating, checking and removing containers back to back until it
/// is done (each a full create + start + check, about a second).
#[tokio::test]
async fn a_thousand_bind_source_swaps_never_mount_the_swapped_target() {
    const SWAPS: usize = 1_000;
    let backend = backend().await;
    let state = tempfile::tempdir().unwrap();
    let agent_ws = workspace();
    let ws = std::fs::canonicalize(agent_ws.path()).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = std::fs::canonicalize(outside.path())
        .unwrap()
        .join("secret");
    std::fs::create_dir_all(&secret).unwrap();
    std::fs::write(secret.join("marker"), "SECRET\n").unwrap();
    let allowed = ws.join("allowed");
    std::fs::create_dir_all(&allowed).unwrap();
    std::fs::write(allowed.join("marker"), "allowed\n").unwrap();
    // `link` flips between allowed and secret; `dir` is a real directory
    // exchanged with `dir-evil` (a symlink to the secret).
    let link = ws.join("link");
    std::os::unix::fs::symlink(&allowed, &link).unwrap();
    let flip = ws.join("link-flip");
    std::os::unix::fs::symlink(&secret, &flip).unwrap();
    let dir = ws.join("dir");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("marker"), "allowed\n").unwrap();
    let evil = ws.join("dir-evil");
    std::os::unix::fs::symlink(&secret, &evil).unwrap();

    let done = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (link, flip, dir, evil, done) = (
            link.clone(),
            flip.clone(),
            dir.clone(),
            evil.clone(),
            Arc::clone(&done),
        );
        std::thread::spawn(move || {
            for i in 0..SWAPS {
                exchange(&link, &flip);
                exchange(&dir, &evil);
                // Vary the dwell so both states overlap every step of a
                // create (validation, pinning, create, start, checks).
                std::thread::sleep(Duration::from_micros(5_000 + (i as u64 * 7919) % 20_000));
            }
            done.store(true, Ordering::SeqCst);
            SWAPS
        })
    };

    let started = Instant::now();
    let (mut created, mut refused, mut attempts, mut caught_late) =
        (0usize, 0usize, 0usize, 0usize);
    while !done.load(Ordering::SeqCst) || attempts < 4 {
        attempts += 1;
        let req = request(
            state.path(),
            &ws,
            WorkspaceAccess::None,
            DockerConfig {
                binds: Some(vec![
                    format!("{}:/data:ro", link.display()),
                    format!("{}:/data2:ro", dir.display()),
                ]),
                ..Default::default()
            },
            None,
        );
        let _cleanup = Cleanup(vec![req.sandbox_name.clone()]);
        match SandboxBackend::ensure(&backend, &req).await {
            Ok(handle) => {
                created += 1;
                let (out, err, status) = sh(
                    &*handle,
                    "cat /data/marker /data2/marker; ls -a /data /data2",
                )
                .await;
                assert!(status.success(), "{err}");
                assert!(
                    !out.contains("SECRET"),
                    "the swapped target was mounted: {out}"
                );
                assert_eq!(out.matches("allowed").count(), 2, "{out}");
                // What the engine mounted is the pinned canonical source.
                let info = backend
                    .docker()
                    .inspect_container(&req.sandbox_name, None)
                    .await
                    .unwrap();
                for m in info.mounts.unwrap_or_default() {
                    let source = m.source.unwrap_or_default();
                    assert!(!source.starts_with(secret.to_str().unwrap()), "{source}");
                    assert!(
                        !source.ends_with("/link"),
                        "a symlink handed over: {source}"
                    );
                }
                drop(handle);
                SandboxBackend::remove(&backend, &req.sandbox_name)
                    .await
                    .unwrap();
            }
            Err(e) if e.kind() == SandboxErrorKind::Config => {
                let message = e.message();
                refused += 1;
                if message.contains("changed while")
                    || message.contains("was created with")
                    || message.contains("inside container")
                {
                    caught_late += 1;
                }
                assert!(
                    message.contains("Sandbox security") || message.contains("cannot be resolved"),
                    "{message}"
                );
                assert!(
                    !exists(&backend, &req.sandbox_name).await,
                    "a refused sandbox must leave no container: {message}"
                );
            }
            Err(other) => panic!("unexpected failure in the race: {other}"),
        }
    }
    assert_eq!(swapper.join().unwrap(), SWAPS);
    eprintln!(
        "{SWAPS} swaps, {attempts} creates ({created} handed out, {refused} refused, {caught_late} of them after validation) in {:?}",
        started.elapsed()
    );
    assert!(created + refused == attempts && attempts >= 4);
}

#[tokio::test]
async fn a_workspace_that_is_a_home_holding_ssh_is_refused() {
    let backend = backend().await;
    let state = tempfile::tempdir().unwrap();
    let home = workspace();
    std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
    std::fs::write(home.path().join(".ssh/id_ed25519"), "key").unwrap();
    // As a configured home, and as a plain directory holding `.ssh`.
    for (backend, code) in [
        (
            backend
                .clone()
                .with_home_dirs(vec![home.path().to_path_buf()]),
            "[workspace-home-dir]",
        ),
        (
            backend.clone().with_home_dirs(vec![]),
            "[workspace-holds-credentials]",
        ),
    ] {
        for access in [WorkspaceAccess::Rw, WorkspaceAccess::Ro] {
            let req = request(
                state.path(),
                home.path(),
                access,
                DockerConfig::default(),
                None,
            );
            let _cleanup = Cleanup(vec![req.sandbox_name.clone()]);
            let err = SandboxBackend::ensure(&backend, &req).await.unwrap_err();
            assert!(
                err.kind() == SandboxErrorKind::Config
                    && err.message().contains(code)
                    && err.message().contains("agents.defaults.workspace"),
                "{access:?} {code}: {err}"
            );
            assert!(!exists(&backend, &req.sandbox_name).await);
        }
    }
}

#[tokio::test]
async fn a_sandboxed_exec_cannot_modify_the_config_file() {
    let backend = backend().await;
    let state = tempfile::tempdir().unwrap();
    let state_dir = std::fs::canonicalize(state.path()).unwrap();
    // The config file inside the agent workspace: refused before anything
    // runs, under rw and ro alike.
    let agent_ws = workspace();
    let config = agent_ws.path().join("talon.json");
    std::fs::write(&config, "{ \"policy\": \"strict\" }\n").unwrap();
    for access in [WorkspaceAccess::Rw, WorkspaceAccess::Ro] {
        let req = request(
            &state_dir,
            agent_ws.path(),
            access,
            DockerConfig::default(),
            Some(&config),
        );
        let _cleanup = Cleanup(vec![req.sandbox_name.clone()]);
        let err = SandboxBackend::ensure(&backend, &req).await.unwrap_err();
        assert!(err.to_string().contains("[workspace-talon-state]"), "{err}");
        assert!(!exists(&backend, &req.sandbox_name).await);
    }
    // The usual layout: config and agent workspace both in the state dir.
    // The sandbox gets the workspace and cannot reach the config.
    let config = state_dir.join("talon.json");
    std::fs::write(&config, "{ \"policy\": \"strict\" }\n").unwrap();
    let inner = state_dir.join("workspace");
    std::fs::create_dir_all(&inner).unwrap();
    std::os::unix::fs::chown(&inner, Some(1000), Some(1000)).unwrap();
    let req = request(
        &state_dir,
        &inner,
        WorkspaceAccess::Rw,
        DockerConfig::default(),
        Some(&config),
    );
    let _cleanup = Cleanup(vec![req.sandbox_name.clone()]);
    let handle = SandboxBackend::ensure(&backend, &req).await.unwrap();
    for attempt in [
        "echo '{}' > /workspace/../talon.json",
        "cat /workspace/../talon.json",
        "echo '{}' > /talon.json",
    ] {
        let (_, _, status) = sh(&*handle, attempt).await;
        assert!(!status.success(), "{attempt} must fail");
    }
    let (_, err, status) = sh(&*handle, "echo ok > /workspace/file").await;
    assert!(
        status.success(),
        "the workspace itself stays writable: {err}"
    );
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "{ \"policy\": \"strict\" }\n"
    );
    drop(handle);
    SandboxBackend::remove(&backend, &req.sandbox_name)
        .await
        .unwrap();
}
