//! The local backend doing its job: commands run, see exactly their
//! environment and the mount plan per `workspaceAccess`, the file bridge
//! works on `/workspace`, and bad input is refused with the key to change
//! before anything runs. Real bubblewrap, no mocks.

use super::common;

use std::collections::BTreeMap;

use common::{Tree, sh};
use talon_fs_bridge::{FsErrorCode, WriteOptions};
use talon_sandbox_core::{
    DockerConfig, ExitStatus, LaunchRequest, SandboxBackend, SandboxErrorKind, WorkspaceAccess,
};
use talon_sandbox_local::LocalBackend;
use tokio::io::AsyncReadExt;

#[tokio::test]
async fn exec_returns_stdout_stderr_and_the_exit_code() {
    let tree = Tree::new();
    let backend = tree.backend();
    let sandbox = backend
        .ensure(&tree.request(WorkspaceAccess::Rw, DockerConfig::default()))
        .await
        .unwrap();
    assert_eq!(sandbox.backend_id(), "local");
    assert_eq!(sandbox.workdir(), "/workspace");
    let (out, err, status) = sh(&*sandbox, "echo out; echo err >&2; pwd; exit 3").await;
    assert_eq!(out, "out\n/workspace\n");
    assert_eq!(err, "err\n");
    assert_eq!(status, ExitStatus::Code(3));

    // Through the launcher, as the exec tool runs it, with stdin.
    let launcher = sandbox.launcher();
    assert_eq!(launcher.id(), "local");
    let mut proc = launcher
        .launch(LaunchRequest {
            command: "read line; echo \"got $line\"; exit 0".to_owned(),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut stdin = proc.stdin.take().unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stdin, b"hello\n")
        .await
        .unwrap();
    drop(stdin);
    let mut text = String::new();
    proc.stdout.read_to_string(&mut text).await.unwrap();
    assert_eq!(text, "got hello\n");
    assert_eq!(proc.control.wait().await.unwrap(), ExitStatus::Code(0));
}

#[tokio::test]
async fn the_environment_is_exactly_path_home_docker_env_and_the_calls() {
    let tree = Tree::new();
    let backend = tree.backend();
    let docker = DockerConfig {
        env: Some(BTreeMap::from([("FROM_CONFIG".to_owned(), "c".to_owned())])),
        ..Default::default()
    };
    let sandbox = backend
        .ensure(&tree.request(WorkspaceAccess::Rw, docker))
        .await
        .unwrap();
    let mut proc = sandbox
        .launcher()
        .launch(LaunchRequest {
            command: "env | sort".to_owned(),
            env: BTreeMap::from([
                ("FROM_CALL".to_owned(), "x y".to_owned()),
                ("PATH".to_owned(), "/opt/tools/bin".to_owned()),
            ]),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut text = String::new();
    proc.stdout.read_to_string(&mut text).await.unwrap();
    assert_eq!(proc.control.wait().await.unwrap(), ExitStatus::Code(0));
    let vars: BTreeMap<&str, &str> = text.lines().filter_map(|l| l.split_once('=')).collect();
    assert_eq!(vars.get("FROM_CALL"), Some(&"x y"));
    assert_eq!(vars.get("FROM_CONFIG"), Some(&"c"));
    // A configured `docker.env` replaces the built-in `LANG` default.
    assert_eq!(vars.get("LANG"), None);
    assert_eq!(vars.get("HOME"), Some(&"/tmp"));
    assert_eq!(
        vars.get("PATH"),
        Some(&format!("/opt/tools/bin:{}", talon_sandbox_local::DEFAULT_PATH).as_str())
    );
    // Nothing of this test process's environment (cargo sets these).
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
    assert!(!vars.contains_key("CARGO_MANIFEST_DIR"), "{text}");
    let keys: Vec<&str> = vars.keys().copied().collect();
    for key in &keys {
        assert!(
            [
                "FROM_CALL",
                "FROM_CONFIG",
                "LANG",
                "HOME",
                "PATH",
                "PWD",
                "SHLVL",
                "_"
            ]
            .contains(key),
            "unexpected variable {key} in {text}"
        );
    }
}

#[tokio::test]
async fn workspace_access_rw_ro_and_none_mount_as_the_plan_says() {
    let tree = Tree::new();
    std::fs::write(tree.workspace().join("agent.txt"), "agent file").unwrap();
    let backend = tree.backend();

    // rw: /workspace is the agent workspace, writable; no /agent.
    let rw = backend
        .ensure(&tree.request(WorkspaceAccess::Rw, DockerConfig::default()))
        .await
        .unwrap();
    let (out, _, status) = sh(
        &*rw,
        "cat agent.txt; echo made > new.txt; test -e /agent || echo no-agent",
    )
    .await;
    assert_eq!(
        (out.as_str(), status),
        ("agent fileno-agent\n", ExitStatus::Code(0))
    );
    assert_eq!(
        std::fs::read_to_string(tree.workspace().join("new.txt")).unwrap(),
        "made\n"
    );

    // ro: /workspace is the scope's own directory, seeded with the agent's
    // bootstrap files, writable scratch; /agent is the agent workspace,
    // read-only.
    std::fs::write(tree.workspace().join("AGENTS.md"), "be careful").unwrap();
    let ro_req = tree.request(WorkspaceAccess::Ro, DockerConfig::default());
    let ro = backend.ensure(&ro_req).await.unwrap();
    assert!(
        ro_req.workspace_dir.is_dir(),
        "the scope workspace is created"
    );
    let (out, err, status) = sh(
        &*ro,
        "cat /agent/agent.txt; echo; cat AGENTS.md; echo; \
         echo x > /agent/w 2>/dev/null && echo wrote-agent; \
         echo x > /workspace/w && echo wrote-scratch; test -e agent.txt || echo not-seeded",
    )
    .await;
    assert_eq!(
        out, "agent file\nbe careful\nwrote-scratch\nnot-seeded\n",
        "{err}"
    );
    assert_eq!(status, ExitStatus::Code(0));
    assert!(
        !tree.workspace().join("w").exists(),
        "the agent workspace is untouched"
    );
    assert!(ro_req.workspace_dir.join("w").exists());

    // none: the scope's own directory as scratch, no /agent.
    let none_req = tree.request(WorkspaceAccess::None, DockerConfig::default());
    let none = backend.ensure(&none_req).await.unwrap();
    let (out, _, _) = sh(
        &*none,
        "test -e /agent && echo has-agent; test -e /workspace/agent.txt && echo sees-agent-file; \
         touch /workspace/t && echo scratch",
    )
    .await;
    assert_eq!(out, "scratch\n");
    assert!(!tree.workspace().join("t").exists());
}

#[tokio::test]
async fn the_file_bridge_reads_and_writes_what_commands_see() {
    let tree = Tree::new();
    let backend = tree.backend();
    let sandbox = backend
        .ensure(&tree.request(WorkspaceAccess::Rw, DockerConfig::default()))
        .await
        .unwrap();
    let bridge = sandbox.fs_bridge().unwrap();
    bridge
        .write(
            "/workspace/dir/from-bridge.txt",
            b"bridge",
            WriteOptions::default(),
        )
        .await
        .unwrap();
    let (out, _, _) = sh(
        &*sandbox,
        "cat dir/from-bridge.txt; echo -n cmd > dir/from-cmd.txt",
    )
    .await;
    assert_eq!(out, "bridge");
    let read = bridge.read("dir/from-cmd.txt", None).await.unwrap();
    assert_eq!(read.bytes, b"cmd");
    // Escapes and read-only mounts are refused as with Docker.
    let err = bridge
        .read("/workspace/../home/.ssh/id_ed25519", None)
        .await
        .unwrap_err();
    assert!(
        matches!(err.code, FsErrorCode::Escape | FsErrorCode::OutsideMounts),
        "{err:?}"
    );

    let ro = backend
        .ensure(&tree.request(WorkspaceAccess::Ro, DockerConfig::default()))
        .await
        .unwrap();
    let err = ro
        .fs_bridge()
        .unwrap()
        .write("/agent/x.txt", b"x", WriteOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.code, FsErrorCode::ReadOnly);
}

#[tokio::test]
async fn a_network_names_its_key_and_nothing_is_created() {
    let tree = Tree::new();
    let backend = tree.backend();
    let request = tree.request(
        WorkspaceAccess::None,
        DockerConfig {
            network: Some("my-compose-net".to_owned()),
            ..Default::default()
        },
    );
    let err = backend.ensure(&request).await.unwrap_err();
    assert_eq!(err.kind(), SandboxErrorKind::Config, "{err:?}");
    let text = err.message();
    assert!(
        text.contains("agents.defaults.sandbox.docker.network"),
        "{text}"
    );
    assert!(text.contains("backend \"docker\""), "{text}");
    assert!(!request.workspace_dir.exists(), "nothing may be created");
}

#[tokio::test]
async fn a_bind_that_fails_validation_names_its_key() {
    let tree = Tree::new();
    let backend = tree.backend();
    let bind = format!("{}:/keys:ro", tree.home().join(".ssh").display());
    let request = tree.request(
        WorkspaceAccess::None,
        DockerConfig {
            binds: Some(vec![bind]),
            ..Default::default()
        },
    );
    let err = backend.ensure(&request).await.unwrap_err();
    assert_eq!(err.kind(), SandboxErrorKind::Config, "{err:?}");
    let text = err.message();
    assert!(
        text.contains("agents.defaults.sandbox.docker.binds[0]"),
        "{text}"
    );
    assert!(text.contains("bind-blocked-path"), "{text}");
    assert!(!request.workspace_dir.exists());
}

#[tokio::test]
async fn a_missing_bind_source_names_its_key() {
    let tree = Tree::new();
    let backend = tree.backend();
    let bind = format!("{}:/data", tree.workspace().join("missing").display());
    let request = tree.request(
        WorkspaceAccess::Rw,
        DockerConfig {
            binds: Some(vec![bind]),
            ..Default::default()
        },
    );
    let err = backend.ensure(&request).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("agents.defaults.sandbox.docker.binds[0]"),
        "{err}"
    );
    assert!(err.to_string().contains("does not exist"), "{err}");
}

#[tokio::test]
async fn a_valid_custom_bind_is_mounted_read_only_when_asked() {
    let tree = Tree::new();
    let data = tree.workspace().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("d.txt"), "d").unwrap();
    let backend = tree.backend();
    let sandbox = backend
        .ensure(&tree.request(
            WorkspaceAccess::Rw,
            DockerConfig {
                binds: Some(vec![format!("{}:/data:ro", data.display())]),
                ..Default::default()
            },
        ))
        .await
        .unwrap();
    let (out, _, _) = sh(
        &*sandbox,
        "cat /data/d.txt; touch /data/x 2>/dev/null || echo ro",
    )
    .await;
    assert_eq!(out, "dro\n");
}

#[tokio::test]
async fn missing_bubblewrap_is_an_error_naming_the_fix() {
    let err = LocalBackend::with_bwrap("/nonexistent/bwrap").unwrap_err();
    let text = err.to_string();
    assert!(text.contains("apt-get install bubblewrap"), "{text}");
    assert!(text.contains("\"docker\""), "{text}");
}

#[tokio::test]
async fn a_pty_command_sees_a_terminal() {
    let tree = Tree::new();
    let sandbox = tree
        .backend()
        .ensure(&tree.request(WorkspaceAccess::Rw, DockerConfig::default()))
        .await
        .unwrap();
    let mut proc = sandbox
        .launcher()
        .launch(LaunchRequest {
            command: "test -t 1 && echo tty".to_owned(),
            pty: true,
            ..Default::default()
        })
        .await
        .unwrap();
    let mut text = String::new();
    proc.stdout.read_to_string(&mut text).await.unwrap();
    assert_eq!(text.trim(), "tty");
    assert_eq!(proc.control.wait().await.unwrap(), ExitStatus::Code(0));
}

#[tokio::test]
async fn concurrent_commands_each_get_the_whole_seccomp_filter() {
    // Each launch opens the filters afresh: launches in parallel must not
    // share a read offset (a bwrap that read an empty filter would run the
    // command unfiltered, or fail).
    let tree = Tree::new();
    let sandbox = tree
        .backend()
        .ensure(&tree.request(WorkspaceAccess::Rw, DockerConfig::default()))
        .await
        .unwrap();
    let runs = (0..8).map(|_| {
        let sandbox = std::sync::Arc::clone(&sandbox);
        async move {
            sh(
                &*sandbox,
                "grep '^Seccomp:' /proc/self/status; grep -c '^Seccomp_filters:' /proc/self/status; \
                 unshare -U true 2>/dev/null && echo escaped || echo refused",
            )
            .await
        }
    });
    for (out, err, status) in futures::future::join_all(runs).await {
        assert!(status.success(), "{out} {err}");
        assert!(out.starts_with("Seccomp:\t2\n"), "{out}");
        assert!(out.ends_with("refused\n"), "{out}");
    }
}
