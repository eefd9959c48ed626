//! The Docker backend against the machine's real engine (no mocks). The
//! engine and the test image come from `cargo xtask docker-up`; when they
//! are missing these tests fail and say so.

use super::common;

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Cleanup, EngineRelay, IMAGE, QUICK, backend, spec, top, unique, workspace};
use talon_fs_bridge::{FsErrorCode, WriteOptions};
use talon_sandbox_core::{
    ExitStatus, LaunchRequest, ProcessControl, ResolvedSandboxConfig, SandboxBackend,
    SandboxConfig, SandboxErrorKind, SandboxHandle, SandboxInputs, SandboxRequest, WorkspaceAccess,
};
use talon_sandbox_docker::{BindMount, DockerBackend, labels};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn sh(handle: &dyn SandboxHandle, script: &str) -> (String, String, ExitStatus) {
    let out = handle.run_script(script, &[], None, QUICK).await.unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status,
    )
}

async fn config_hash_label(backend: &DockerBackend, name: &str) -> String {
    let info = backend
        .docker()
        .inspect_container(name, None)
        .await
        .unwrap();
    info.config.unwrap().labels.unwrap()[labels::CONFIG_HASH].clone()
}

#[tokio::test]
async fn container_is_reused_by_hash_restarted_when_stopped_and_recreated_on_change() {
    let backend = backend().await.with_hot_window(Duration::ZERO);
    let ws = workspace();
    let first = spec("reuse", ws.path(), "hash-a");
    let _cleanup = Cleanup(vec![first.name.clone()]);

    let a = backend.ensure_container(&first).await.unwrap();
    assert!(a.created());
    let again = backend.ensure_container(&first).await.unwrap();
    assert!(!again.created(), "same hash must reuse");
    assert_eq!(again.container_id(), a.container_id());

    // Stopped with a matching hash: started again, same container.
    backend
        .docker()
        .stop_container(&first.name, None)
        .await
        .unwrap();
    let restarted = backend.ensure_container(&first).await.unwrap();
    assert_eq!(restarted.container_id(), a.container_id());
    assert_eq!(sh(&*restarted, "echo up").await.0, "up\n");

    // Hash changed and not hot (window 0): removed and created anew.
    let mut changed = first.clone();
    changed.config_hash = "hash-b".to_owned();
    let b = backend.ensure_container(&changed).await.unwrap();
    assert!(b.created());
    assert_ne!(b.container_id(), a.container_id());
    assert_eq!(config_hash_label(&backend, &first.name).await, "hash-b");
    let listed = backend.list_containers().await.unwrap();
    let ours: Vec<_> = listed.iter().filter(|c| c.name == first.name).collect();
    assert_eq!(ours.len(), 1);
    assert_eq!(ours[0].config_hash.as_deref(), Some("hash-b"));
    assert_eq!(ours[0].scope_key.as_deref(), Some("test:reuse"));
    assert!(ours[0].running);
    let l = &ours[0].labels;
    assert_eq!(l[labels::SANDBOX], "1");
    assert_eq!(l[labels::MOUNT_FORMAT_VERSION], "4");
    assert_eq!(l[labels::CREATE_ARGS_EPOCH], "2026-12-05-tmpfs-size");
    assert!(l[labels::CREATED_AT_MS].parse::<u64>().unwrap() > 1_700_000_000_000);

    // An explicit recreate replaces it right away.
    let fresh = backend.recreate_container(&changed).await.unwrap();
    assert!(fresh.created());
    assert_ne!(fresh.container_id(), b.container_id());
}

/// Collects what `tracing` writes, to check the operator's warning.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn a_hot_container_with_a_stale_hash_is_kept_with_a_warning() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let backend = backend().await;
    let ws = workspace();
    let first = spec("hot", ws.path(), "hash-a");
    let _cleanup = Cleanup(vec![first.name.clone()]);
    let a = backend.ensure_container(&first).await.unwrap();
    assert_eq!(sh(&*a, "echo busy").await.0, "busy\n");

    let mut changed = first.clone();
    changed.config_hash = "hash-b".to_owned();
    let extra = tempfile::tempdir().unwrap();
    changed.binds.push(BindMount::rw(extra.path(), "/extra"));
    let kept = backend.ensure_container(&changed).await.unwrap();
    assert_eq!(
        kept.container_id(),
        a.container_id(),
        "hot container must be kept"
    );
    assert!(kept.stale_config());
    // The kept container's bridge shows the mounts it really has.
    assert_eq!(kept.binds().len(), 1);
    assert_eq!(kept.binds()[0].container, "/workspace");
    let err = kept
        .fs_bridge()
        .unwrap()
        .write("/extra/x", b"x", WriteOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.code, FsErrorCode::OutsideMounts);
    assert_eq!(config_hash_label(&backend, &first.name).await, "hash-a");
    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(log.contains("WARN"), "{log}");
    assert!(
        log.contains(&format!(
            "Sandbox config changed for {} (recently used). Recreate to apply: talon sandbox recreate --session test:hot",
            first.name
        )),
        "{log}"
    );

    // A restricted run refuses the stale container instead.
    let mut strict = changed.clone();
    strict.require_current_config = true;
    let err = backend.ensure_container(&strict).await.unwrap_err();
    assert!(
        err.kind() == SandboxErrorKind::Config && err.message().contains("talon sandbox recreate"),
        "{err}"
    );

    // Not running any more: not hot, so the new config applies.
    backend
        .docker()
        .stop_container(&first.name, None)
        .await
        .unwrap();
    let fresh = backend.ensure_container(&changed).await.unwrap();
    assert!(fresh.created());
    assert_ne!(fresh.container_id(), a.container_id());
    assert_eq!(config_hash_label(&backend, &first.name).await, "hash-b");
}

#[tokio::test]
async fn files_written_inside_belong_to_the_workspace_owner() {
    let backend = backend().await;
    let ws = workspace();
    let owner = spec("owner", ws.path(), "h");
    let mut explicit = spec("explicit-user", ws.path(), "h");
    explicit.user = Some("4321:4322".to_owned());
    let _cleanup = Cleanup(vec![owner.name.clone(), explicit.name.clone()]);

    let sandbox = backend.ensure_container(&owner).await.unwrap();
    let (out, err, status) = sh(
        &*sandbox,
        "id -u; id -g; pwd; echo inside > /workspace/made-inside",
    )
    .await;
    assert_eq!(status, ExitStatus::Code(0), "{err}");
    assert_eq!(out, "1000\n1000\n/workspace\n");
    let meta = std::fs::metadata(ws.path().join("made-inside")).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (1000, 1000));

    let other = backend.ensure_container(&explicit).await.unwrap();
    assert_eq!(sh(&*other, "id -u; id -g").await.0, "4321\n4322\n");
}

#[tokio::test]
async fn read_only_mounts_and_root_are_enforced_inside_the_container() {
    let backend = backend().await;
    let ws = workspace();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("seed.txt"), "seed\n").unwrap();
    let mut s = spec("readonly", ws.path(), "h");
    s.binds.push(BindMount::ro(data.path(), "/data"));
    let _cleanup = Cleanup(vec![s.name.clone()]);
    let sandbox = backend.ensure_container(&s).await.unwrap();

    assert_eq!(sh(&*sandbox, "cat /data/seed.txt").await.0, "seed\n");
    let (_, err, status) = sh(&*sandbox, "echo x > /data/new.txt").await;
    assert_ne!(status, ExitStatus::Code(0));
    assert!(err.contains("Read-only file system"), "{err}");
    assert!(!data.path().join("new.txt").exists());
    let (_, err, status) = sh(&*sandbox, "touch /etc/planted").await;
    assert_ne!(status, ExitStatus::Code(0), "root must be read-only");
    assert!(err.contains("Read-only file system"), "{err}");
    // The tmpfs scratch dirs stay writable for the mapped user.
    assert_eq!(
        sh(&*sandbox, "touch /tmp/ok /var/tmp/ok && echo ok")
            .await
            .0,
        "ok\n"
    );
    let mounts = sh(&*sandbox, "cat /proc/mounts").await.0;
    for dir in ["/tmp", "/var/tmp", "/run"] {
        assert!(
            mounts.contains(&format!("tmpfs {dir} tmpfs")),
            "{dir}: {mounts}"
        );
    }
    // No network but loopback.
    let (out, _, _) = sh(&*sandbox, "ls /sys/class/net").await;
    assert_eq!(out.split_whitespace().collect::<Vec<_>>(), vec!["lo"]);

    // The file bridge over the same mount table agrees.
    let bridge = sandbox.fs_bridge().unwrap();
    let err = bridge
        .write("/data/x.txt", b"x", WriteOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.code, FsErrorCode::ReadOnly);
    bridge
        .write("notes.txt", b"from the bridge\n", WriteOptions::default())
        .await
        .unwrap();
    assert_eq!(
        sh(&*sandbox, "cat /workspace/notes.txt").await.0,
        "from the bridge\n"
    );
    let read = bridge.read("/data/seed.txt", None).await.unwrap();
    assert_eq!(read.bytes, b"seed\n");
}

#[tokio::test]
async fn exec_streams_stdin_stdout_stderr_and_exit_codes() {
    let backend = backend().await;
    let ws = workspace();
    let s = spec("exec", ws.path(), "h");
    let _cleanup = Cleanup(vec![s.name.clone()]);
    let sandbox = backend.ensure_container(&s).await.unwrap();
    let launcher = sandbox.launcher();
    assert_eq!(launcher.id(), "docker");

    let mut proc = launcher
        .launch(LaunchRequest {
            command: "cat; echo to-stderr >&2; exit 7".to_owned(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(proc.control.pid().is_none() || proc.control.pid() > Some(1));
    let mut stdin = proc.stdin.take().unwrap();
    stdin.write_all(b"hello from stdin").await.unwrap();
    stdin.shutdown().await.unwrap();
    drop(stdin);
    let mut out = String::new();
    proc.stdout.read_to_string(&mut out).await.unwrap();
    let mut err = String::new();
    proc.stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .await
        .unwrap();
    assert_eq!(out, "hello from stdin");
    assert_eq!(err, "to-stderr\n");
    assert_eq!(proc.control.wait().await.unwrap(), ExitStatus::Code(7));
    // wait is repeatable.
    assert_eq!(proc.control.wait().await.unwrap(), ExitStatus::Code(7));

    // Env and PATH: PATH is prepended, never replacing the image's.
    let env = BTreeMap::from([
        ("FOO".to_owned(), "bar".to_owned()),
        ("PATH".to_owned(), "/opt/extra/bin".to_owned()),
    ]);
    let mut proc = launcher
        .launch(LaunchRequest {
            command: "echo \"$FOO|$PATH|${TALON_PREPEND_PATH:-unset}\"; pwd".to_owned(),
            workdir: Some("/tmp".to_owned()),
            env,
            pty: false,
        })
        .await
        .unwrap();
    proc.stdin = None;
    let mut out = String::new();
    proc.stdout.read_to_string(&mut out).await.unwrap();
    assert_eq!(proc.control.wait().await.unwrap(), ExitStatus::Code(0));
    let (line, pwd) = out.split_once('\n').unwrap();
    let parts: Vec<&str> = line.split('|').collect();
    assert_eq!(parts[0], "bar");
    assert!(parts[1].starts_with("/opt/extra/bin:"), "{line}");
    assert!(parts[1].contains("/bin"), "image PATH kept: {line}");
    assert_eq!(parts[2], "unset");
    assert_eq!(pwd, "/tmp\n");

    let err = launcher
        .launch(LaunchRequest {
            command: "true".to_owned(),
            workdir: Some("relative/dir".to_owned()),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("absolute path"), "{err}");
    // A missing directory fails the command (the runtime's 126), not the
    // backend.
    let mut proc = launcher
        .launch(LaunchRequest {
            command: "true".to_owned(),
            workdir: Some("/no/such/dir".to_owned()),
            ..Default::default()
        })
        .await
        .unwrap();
    proc.stdin = None;
    let mut all = String::new();
    proc.stdout.read_to_string(&mut all).await.unwrap();
    proc.stderr
        .take()
        .unwrap()
        .read_to_string(&mut all)
        .await
        .unwrap();
    assert_eq!(proc.control.wait().await.unwrap(), ExitStatus::Code(126));
    assert!(all.contains("/no/such/dir"), "{all:?}");

    // A PTY merges the streams and is a terminal.
    let mut proc = launcher
        .launch(LaunchRequest {
            command: "[ -t 1 ] && echo is-a-tty; echo oops >&2".to_owned(),
            pty: true,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(proc.stderr.is_none());
    // Dropping stdin under a PTY must not cut the output short.
    proc.stdin = None;
    let mut out = String::new();
    proc.stdout.read_to_string(&mut out).await.unwrap();
    assert_eq!(out.replace("\r\n", "\n"), "is-a-tty\noops\n");
    assert_eq!(proc.control.wait().await.unwrap(), ExitStatus::Code(0));

    // Input through the terminal (written before the shell is up).
    let mut proc = launcher
        .launch(LaunchRequest {
            command: "read line; echo \"got:$line\"".to_owned(),
            pty: true,
            ..Default::default()
        })
        .await
        .unwrap();
    proc.stdin
        .as_mut()
        .unwrap()
        .write_all(b"abc\n")
        .await
        .unwrap();
    let mut out = String::new();
    proc.stdout.read_to_string(&mut out).await.unwrap();
    assert!(out.contains("got:abc"), "{out:?}");
    assert!(
        !out.trim_start().starts_with(|c: char| c.is_ascii_digit()),
        "pid line leaked: {out:?}"
    );
    assert_eq!(proc.control.wait().await.unwrap(), ExitStatus::Code(0));

    // A script gets its args and stdin.
    let out = sandbox
        .run_script(
            "printf '%s,' \"$0\" \"$@\"; cat",
            &["a b".to_owned(), "c".to_owned()],
            Some(b"piped".to_vec()),
            QUICK,
        )
        .await
        .unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "talon-sandbox,a b,c,piped"
    );
    assert!(out.status.success());
}

fn survivors(cmds: &[String]) -> Vec<&String> {
    cmds.iter()
        .filter(|c| !c.contains("docker-init") && c.as_str() != "sleep infinity")
        .collect()
}

/// Launch `command` in `sandbox`, read its stdout to the end and wait for
/// its status; the control is returned for a `kill` after the end.
async fn run_to_end(
    sandbox: &dyn SandboxHandle,
    command: &str,
) -> (String, ExitStatus, Box<dyn ProcessControl>) {
    let mut proc = sandbox
        .launcher()
        .launch(LaunchRequest {
            command: command.to_owned(),
            ..Default::default()
        })
        .await
        .unwrap();
    proc.stdin = None;
    let mut out = String::new();
    proc.stdout.read_to_string(&mut out).await.unwrap();
    let status = tokio::time::timeout(QUICK, proc.control.wait())
        .await
        .unwrap()
        .unwrap();
    (out, status, proc.control)
}

/// A process that hides from the sweep (a newline in its own name, so the
/// first line of its stat has no group id) is still killed when the command
/// ends, and a `kill` after the end finds nothing left either.
#[tokio::test]
async fn a_process_with_a_newline_in_its_name_does_not_escape_the_sweep() {
    let backend = backend().await;
    let ws = workspace();
    let s = spec("sweep-comm", ws.path(), "h");
    let _cleanup = Cleanup(vec![s.name.clone()]);
    let sandbox = backend.ensure_container(&s).await.unwrap();
    let (out, status, control) = run_to_end(
        &*sandbox,
        "(printf 'x\\ny' > /proc/self/comm; while :; do sleep 1; done) \
         >/dev/null 2>&1 & sleep 0.3; echo done",
    )
    .await;
    assert_eq!(out, "done\n");
    assert_eq!(status, ExitStatus::Code(0));
    control.kill().await.unwrap();
    let cmds = top(&backend, &s.name).await;
    assert!(survivors(&cmds).is_empty(), "survivors: {cmds:?}");
}

#[tokio::test]
async fn kill_and_timeout_stop_the_whole_process_tree_inside_the_container() {
    let backend = backend().await;
    let ws = workspace();
    let s = spec("kill", ws.path(), "h");
    let _cleanup = Cleanup(vec![s.name.clone()]);
    let sandbox = backend.ensure_container(&s).await.unwrap();

    // A background job, a double-forked orphan and a foreground sleep,
    // then a file that must never appear.
    let mut proc = sandbox
        .launcher()
        .launch(LaunchRequest {
            command: "sleep 301 & (sleep 302 &); sleep 303; touch /workspace/LATE".to_owned(),
            ..Default::default()
        })
        .await
        .unwrap();
    proc.stdin = None;
    let started = Instant::now();
    loop {
        let cmds = top(&backend, &s.name).await;
        if ["sleep 301", "sleep 302", "sleep 303"]
            .iter()
            .all(|w| cmds.iter().any(|c| c == w))
        {
            break;
        }
        assert!(
            started.elapsed() < QUICK,
            "processes never showed up: {cmds:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(proc.control.pid().unwrap() > 1);
    let killed_at = Instant::now();
    proc.control.kill().await.unwrap();
    let status = tokio::time::timeout(QUICK, proc.control.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status, ExitStatus::Signal(9));
    assert!(killed_at.elapsed() < Duration::from_secs(5));
    let cmds = top(&backend, &s.name).await;
    assert!(survivors(&cmds).is_empty(), "survivors: {cmds:?}");
    assert!(!ws.path().join("LATE").exists());
    // kill is idempotent.
    proc.control.kill().await.unwrap();

    // run_script's timeout kills inside the container too.
    let begun = Instant::now();
    let err = sandbox
        .run_script(
            "sleep 304 & (sleep 305 &); sleep 306",
            &[],
            None,
            Duration::from_millis(700),
        )
        .await
        .unwrap_err();
    assert!(
        err.kind() == SandboxErrorKind::Timeout && err.message().contains("killed"),
        "{err}"
    );
    assert!(begun.elapsed() < Duration::from_secs(5));
    let cmds = top(&backend, &s.name).await;
    assert!(survivors(&cmds).is_empty(), "survivors: {cmds:?}");
}

/// A command that ends on its own leaves nothing of its process group
/// running: the wrapper kills it before the exec ends (no second exec), so
/// the `kill` a caller sends after the end finds nothing left.
#[tokio::test]
async fn what_a_finished_command_left_in_its_group_is_killed_when_it_ends() {
    let backend = backend().await;
    let ws = workspace();
    let s = spec("sweep", ws.path(), "h");
    let _cleanup = Cleanup(vec![s.name.clone()]);
    let sandbox = backend.ensure_container(&s).await.unwrap();
    let (out, status, control) = run_to_end(
        &*sandbox,
        "sleep 311 >/dev/null 2>&1 & sleep 312 >/dev/null 2>&1 & \
         sleep 0.3; echo done; exit 4",
    )
    .await;
    assert_eq!(out, "done\n");
    assert_eq!(status, ExitStatus::Code(4), "the command's own status");
    let cmds = top(&backend, &s.name).await;
    assert!(survivors(&cmds).is_empty(), "survivors: {cmds:?}");
    control.kill().await.unwrap();
}

#[tokio::test]
async fn the_engine_going_away_mid_exec_is_a_clear_error() {
    let main = backend().await;
    let mut relay = EngineRelay::start().await;
    let backend = DockerBackend::connect_unix(&relay.path).await.unwrap();
    let ws = workspace();
    let s = spec("engine-gone", ws.path(), "h");
    let _cleanup = Cleanup(vec![s.name.clone()]);
    let sandbox = backend.ensure_container(&s).await.unwrap();
    let mut proc = sandbox
        .launcher()
        .launch(LaunchRequest {
            command: "echo started; sleep 30".to_owned(),
            ..Default::default()
        })
        .await
        .unwrap();
    proc.stdin = None;
    let mut first = [0u8; 8];
    proc.stdout.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"started\n");

    relay.stop().await;
    let begun = Instant::now();
    let err = tokio::time::timeout(QUICK, proc.control.wait())
        .await
        .expect("wait must not hang when the engine goes away")
        .unwrap_err();
    assert!(begun.elapsed() < Duration::from_secs(5));
    match err.kind() {
        SandboxErrorKind::EngineUnavailable => {
            let m = err.message();
            assert!(m.contains(&relay.path.display().to_string()), "{m}");
            assert!(m.contains("cargo xtask docker-up"), "{m}");
        }
        _ => panic!("expected EngineUnavailable, got {err:?}"),
    }
    // The next call fails the same clear way instead of hanging.
    let err = tokio::time::timeout(QUICK, backend.ensure_container(&s))
        .await
        .unwrap()
        .unwrap_err();
    assert!(err.kind() == SandboxErrorKind::EngineUnavailable, "{err}");
    let err = DockerBackend::connect_unix(&relay.path).await.unwrap_err();
    assert!(err.kind() == SandboxErrorKind::EngineUnavailable, "{err}");
    // The process really is still in the container (the engine itself is
    // fine); the shared engine cleans it up through the guard.
    assert!(top(&main, &s.name).await.iter().any(|c| c == "sleep 30"));
}

#[tokio::test]
async fn a_missing_image_is_a_clear_error_and_creates_nothing() {
    let backend = backend().await;
    let ws = workspace();
    let mut s = spec("no-image", ws.path(), "h");
    s.image = "talon-test-absent:never-built".to_owned();
    let _cleanup = Cleanup(vec![s.name.clone()]);
    let err = backend.ensure_container(&s).await.unwrap_err();
    match err.kind() {
        SandboxErrorKind::ImageMissing => {
            let m = err.message();
            assert!(m.contains("talon-test-absent:never-built"), "{m}");
            assert!(m.contains("docker build"), "{m}");
        }
        _ => panic!("expected ImageMissing, got {err:?}"),
    }
    let gone = backend.docker().inspect_container(&s.name, None).await;
    assert!(gone.is_err(), "no container may be created");
}

#[tokio::test]
async fn only_containers_labelled_as_talon_sandboxes_are_listed_or_removed() {
    use bollard::models::ContainerCreateBody;
    use bollard::query_parameters::CreateContainerOptionsBuilder;

    let backend = backend().await;
    let ws = workspace();
    let ours = spec("owned", ws.path(), "h");
    let foreign = unique("foreign");
    let _cleanup = Cleanup(vec![ours.name.clone(), foreign.clone()]);
    backend
        .docker()
        .create_container(
            Some(
                CreateContainerOptionsBuilder::default()
                    .name(&foreign)
                    .build(),
            ),
            ContainerCreateBody {
                image: Some(IMAGE.to_owned()),
                cmd: Some(vec!["sleep".to_owned(), "infinity".to_owned()]),
                labels: Some([("talon.test".to_owned(), "1".to_owned())].into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    backend.ensure_container(&ours).await.unwrap();

    let names: Vec<String> = backend
        .list_containers()
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert!(names.contains(&ours.name));
    assert!(!names.contains(&foreign));

    let err = backend.remove_owned(&foreign).await.unwrap_err();
    assert!(
        err.kind() == SandboxErrorKind::Config && err.message().contains("not a Talon sandbox"),
        "{err}"
    );
    let taken = spec("foreign", ws.path(), "h");
    let err = backend.ensure_container(&taken).await.unwrap_err();
    assert!(
        err.kind() == SandboxErrorKind::Config && err.message().contains("does not own"),
        "{err}"
    );
    assert!(
        backend
            .docker()
            .inspect_container(&foreign, None)
            .await
            .is_ok()
    );

    assert_eq!(
        backend.remove_scope("test:owned").await.unwrap(),
        vec![ours.name.clone()]
    );
    assert!(!backend.remove_owned(&ours.name).await.unwrap());
    let err = SandboxBackend::remove(&backend, &ours.name)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no sandbox container"), "{err}");
}

#[tokio::test]
async fn the_backend_trait_builds_the_container_from_a_sandbox_request() {
    let backend = backend().await;
    let state = tempfile::tempdir().unwrap();
    let agent_ws = workspace();
    std::fs::write(agent_ws.path().join("README"), "agent files\n").unwrap();
    let agent_id = format!("t{}", std::process::id());
    let defaults = SandboxConfig {
        workspace_access: Some(WorkspaceAccess::Rw),
        docker: Some(talon_sandbox_core::DockerConfig {
            image: Some(IMAGE.to_owned()),
            env: Some(BTreeMap::from([("GREETING".to_owned(), "hi".to_owned())])),
            ..Default::default()
        }),
        ..Default::default()
    };
    let tools = talon_tool_policy::config::ToolsConfig::default();
    let resolved = ResolvedSandboxConfig::resolve(&SandboxInputs {
        agent_id: &agent_id,
        defaults: Some(&defaults),
        agent: None,
        agent_key: None,
        state_dir: state.path(),
        home: None,
        tools: &tools,
        agent_tools: None,
    });
    let request = SandboxRequest::new(resolved, "main", agent_ws.path(), None);
    let _cleanup = Cleanup(vec![request.sandbox_name.clone()]);
    let handle = SandboxBackend::ensure(&backend, &request).await.unwrap();
    assert_eq!(handle.name(), request.sandbox_name);
    assert_eq!(handle.backend_id(), "docker");
    let (out, _, status) = sh(&*handle, "cat /workspace/README; echo $GREETING; id -u").await;
    assert!(status.success());
    assert_eq!(out, "agent files\nhi\n1000\n");
    assert_eq!(
        config_hash_label(&backend, &request.sandbox_name).await,
        request.config_hash
    );
    let owned = backend.list_owned().await.unwrap();
    let entry = owned
        .iter()
        .find(|o| o.name == request.sandbox_name)
        .unwrap();
    assert_eq!(entry.scope_key.as_deref(), Some(request.scope_key.as_str()));
    assert!(entry.last_used_at_ms.is_some());
    SandboxBackend::remove(&backend, &request.sandbox_name)
        .await
        .unwrap();
}

#[tokio::test]
async fn setup_command_runs_once_and_a_failing_one_leaves_no_container() {
    let backend = backend().await;
    let ws = workspace();
    let mut good = spec("setup-ok", ws.path(), "h");
    good.setup_command = Some("echo \"set by $(id -u)\" >> /tmp/setup-ran".to_owned());
    let mut bad = spec("setup-bad", ws.path(), "h");
    bad.setup_command = Some("echo broken-setup >&2; exit 3".to_owned());
    let _cleanup = Cleanup(vec![good.name.clone(), bad.name.clone()]);

    let sandbox = backend.ensure_container(&good).await.unwrap();
    backend.ensure_container(&good).await.unwrap();
    assert_eq!(sh(&*sandbox, "cat /tmp/setup-ran").await.0, "set by 1000\n");

    let err = backend.ensure_container(&bad).await.unwrap_err();
    assert!(
        err.kind() == SandboxErrorKind::Config
            && err.message().contains("setupCommand failed")
            && err.message().contains("broken-setup"),
        "{err}"
    );
    assert!(
        backend
            .docker()
            .inspect_container(&bad.name, None)
            .await
            .is_err()
    );
}

#[tokio::test]
async fn the_backend_trait_refuses_insecure_settings_before_creating_anything() {
    let backend = backend().await;
    let state = tempfile::tempdir().unwrap();
    let agent_ws = workspace();
    let fake_home = tempfile::tempdir().unwrap();
    let backend = backend.with_home_dirs(vec![fake_home.path().to_path_buf()]);
    let link = agent_ws.path().join("innocent");
    std::os::unix::fs::symlink("/etc", &link).unwrap();
    let cases = [
        (
            talon_sandbox_core::DockerConfig {
                binds: Some(vec![format!("{}:/mnt/x:ro", link.display())]),
                ..Default::default()
            },
            "/etc",
        ),
        (
            talon_sandbox_core::DockerConfig {
                binds: Some(vec![format!("{}:/mnt/home", fake_home.path().display())]),
                ..Default::default()
            },
            "is a home directory",
        ),
        (
            talon_sandbox_core::DockerConfig {
                network: Some("host".to_owned()),
                ..Default::default()
            },
            "host",
        ),
    ];
    let tools = talon_tool_policy::config::ToolsConfig::default();
    for (i, (mut docker, expected)) in cases.into_iter().enumerate() {
        docker.image = Some(IMAGE.to_owned());
        let defaults = SandboxConfig {
            workspace_access: Some(WorkspaceAccess::Rw),
            docker: Some(docker),
            ..Default::default()
        };
        let agent_id = format!("t{}-insecure-{i}", std::process::id());
        let resolved = ResolvedSandboxConfig::resolve(&SandboxInputs {
            agent_id: &agent_id,
            defaults: Some(&defaults),
            agent: None,
            agent_key: None,
            state_dir: state.path(),
            home: None,
            tools: &tools,
            agent_tools: None,
        });
        let request = SandboxRequest::new(resolved, "main", agent_ws.path(), None);
        let _cleanup = Cleanup(vec![request.sandbox_name.clone()]);
        let err = SandboxBackend::ensure(&backend, &request)
            .await
            .unwrap_err();
        assert!(
            err.kind() == SandboxErrorKind::Config
                && err.message().contains("Sandbox security")
                && err.message().contains(expected),
            "{expected}: {err}"
        );
        assert!(
            backend
                .docker()
                .inspect_container(&request.sandbox_name, None)
                .await
                .is_err(),
            "nothing may be created"
        );
    }
}

#[tokio::test]
async fn a_container_killed_mid_exec_fails_the_exec_and_the_next_ensure_recovers() {
    let backend = backend().await;
    let ws = workspace();
    let s = spec("dies", ws.path(), "h");
    let _cleanup = Cleanup(vec![s.name.clone()]);
    let sandbox = backend.ensure_container(&s).await.unwrap();
    let mut proc = sandbox
        .launcher()
        .launch(LaunchRequest {
            command: "echo go; sleep 60".to_owned(),
            ..Default::default()
        })
        .await
        .unwrap();
    proc.stdin = None;
    let mut first = [0u8; 3];
    proc.stdout.read_exact(&mut first).await.unwrap();
    backend
        .docker()
        .remove_container(
            &s.name,
            Some(
                bollard::query_parameters::RemoveContainerOptionsBuilder::default()
                    .force(true)
                    .build(),
            ),
        )
        .await
        .unwrap();
    let begun = Instant::now();
    let outcome = tokio::time::timeout(QUICK, proc.control.wait())
        .await
        .expect("wait must not hang when the container dies");
    assert!(begun.elapsed() < Duration::from_secs(5));
    match outcome {
        Err(e) if e.kind() == SandboxErrorKind::Exec => {
            assert!(e.message().contains("went away"), "{e}")
        }
        // The engine may still report the killed exec's status.
        Ok(status) => assert_ne!(status, ExitStatus::Code(0)),
        Err(other) => panic!("unexpected error: {other:?}"),
    }
    // Using the dead handle says what to do.
    let err = sandbox
        .run_script("true", &[], None, QUICK)
        .await
        .unwrap_err();
    assert!(err.kind() == SandboxErrorKind::Gone, "{err:?}");
    assert!(
        err.to_string().contains("ensure the sandbox again"),
        "{err}"
    );
    let again = backend.ensure_container(&s).await.unwrap();
    assert!(again.created());
    assert_eq!(sh(&*again, "echo back").await.0, "back\n");
}

#[tokio::test]
async fn concurrent_ensures_of_one_scope_create_one_container() {
    let backend = backend().await;
    let ws = workspace();
    let s = spec("race", ws.path(), "h");
    let _cleanup = Cleanup(vec![s.name.clone()]);
    let ensures = (0..4).map(|_| backend.ensure_container(&s));
    let handles = futures::future::join_all(ensures).await;
    let handles: Vec<_> = handles.into_iter().map(Result::unwrap).collect();
    assert_eq!(handles.iter().filter(|h| h.created()).count(), 1);
    let id = handles[0].container_id();
    assert!(handles.iter().all(|h| h.container_id() == id));
}
