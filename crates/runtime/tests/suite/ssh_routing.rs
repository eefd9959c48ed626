//! A sandboxed run with `sandbox.backend: "ssh"`: its exec and file tools
//! act on the remote workspace copy over a real sshd (a throwaway one on
//! a loopback port, started here; `cargo xtask sshd-install` installs it).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, RuntimeBuilder};
use talon_tool_policy::RunContext;

struct Sshd(Child);

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_sshd(d: &Path) -> (Sshd, u16, String) {
    assert!(
        Path::new("/usr/sbin/sshd").exists(),
        "/usr/sbin/sshd is missing: run `cargo xtask sshd-install`"
    );
    for key in ["host", "client"] {
        let ok = Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(d.join(key))
            .status()
            .unwrap();
        assert!(ok.success());
    }
    std::fs::copy(d.join("client.pub"), d.join("authorized_keys")).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let user = String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout)
        .unwrap()
        .trim()
        .to_owned();
    let _ = std::fs::create_dir_all("/run/sshd");
    std::fs::write(
        d.join("sshd_config"),
        format!(
            "ListenAddress 127.0.0.1\nPort {port}\nHostKey {d}/host\nPidFile {d}/sshd.pid\n\
             AuthorizedKeysFile {d}/authorized_keys\nPasswordAuthentication no\nUsePAM no\n\
             StrictModes no\nAllowUsers {user}\nPermitRootLogin prohibit-password\n\
             Subsystem sftp internal-sftp\n\
             SetEnv SHLVL=1\n",
            d = d.display()
        ),
    )
    .unwrap();
    let host_key = std::fs::read_to_string(d.join("host.pub")).unwrap();
    let mut parts = host_key.split_whitespace();
    std::fs::write(
        d.join("known_hosts"),
        format!(
            "[127.0.0.1]:{port} {} {}\n",
            parts.next().unwrap(),
            parts.next().unwrap()
        ),
    )
    .unwrap();
    let child = Command::new("/usr/sbin/sshd")
        .args(["-D", "-e", "-f"])
        .arg(d.join("sshd_config"))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "sshd did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    (Sshd(child), port, user)
}

#[tokio::test]
async fn sandboxed_runs_act_on_their_ssh_host() {
    let dir = tempfile::Builder::new()
        .prefix("rtssh")
        .tempdir_in("/tmp")
        .unwrap();
    let d = dir.path();
    let (_sshd, port, user) = start_sshd(d);
    std::fs::create_dir_all(d.join("ws")).unwrap();
    std::fs::write(d.join("ws/seed.txt"), "from the host").unwrap();
    let config = format!(
        r#"{{ agents: {{ defaults: {{ workspace: "./ws", sandbox: {{ mode: "all", backend: "ssh",
            workspaceAccess: "rw", ssh: {{ host: "127.0.0.1", port: {port}, user: "{user}",
            identityFile: "{d}/client", knownHostsFile: "{d}/known_hosts",
            workspaceRoot: "{d}/remote" }} }} }} }} }}"#,
        d = d.display()
    );
    let loaded = talon_config::load_str(&config, "talon.json").unwrap();
    let rt = RuntimeBuilder::from_config(&loaded.config, d)
        .unwrap()
        .build()
        .unwrap();
    let mut ctx = RunContext::new("main");
    ctx.sandboxed = true;
    let table = rt.assemble(RunSpec::new(ctx));

    let out = table
        .invoke(ModelToolCall::new(
            "c1",
            "exec",
            json!({ "command": "pwd; cat seed.txt; echo made-remote > made.txt" }),
        ))
        .await;
    let printed = match &out {
        InvokeOutcome::Completed { result, .. } => result.text(),
        other => panic!("the ssh-sandboxed exec failed: {other:?}"),
    };
    let remote_ws = format!("{}/remote/", d.display());
    assert!(printed.contains(&remote_ws), "{printed}");
    assert!(printed.contains("from the host"), "{printed}");
    // rw: the change came back to the host workspace.
    assert_eq!(
        std::fs::read_to_string(d.join("ws/made.txt")).unwrap(),
        "made-remote\n"
    );

    // File tools work on the remote copy, relative to its workdir.
    let out = table
        .invoke(ModelToolCall::new(
            "c2",
            "write",
            json!({ "path": "notes.md", "content": "via write" }),
        ))
        .await;
    assert!(matches!(out, InvokeOutcome::Completed { .. }), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(d.join("ws/notes.md")).unwrap(),
        "via write"
    );
    let out = table
        .invoke(ModelToolCall::new(
            "c3",
            "read",
            json!({ "path": "/etc/hostname" }),
        ))
        .await;
    match out {
        InvokeOutcome::Failed(e) => assert!(e.to_string().contains("outside"), "{e}"),
        other => panic!("a path outside the remote copy was read: {other:?}"),
    }
}
