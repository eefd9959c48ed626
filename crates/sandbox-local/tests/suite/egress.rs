//! `network: "bridge"` on the local backend: the sandbox still has only
//! loopback, and reaches the outside only through the host's SSRF-guarded
//! proxy. Real bubblewrap, a real listener on the host, a real client
//! (Python's urllib / http.client) inside the sandbox.

use super::common;

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{Tree, eventually, host_pids_with, sh, sh_args};
use talon_egress::{SsrfAllowlistConfig, SsrfPolicy, StaticResolver};
use talon_sandbox_core::{
    DockerConfig, LaunchRequest, SandboxBackend, SandboxHandle, WorkspaceAccess,
};
use talon_sandbox_local::{EGRESS_PROXY_URL, EGRESS_SOCKET_PATH, LocalBackend};
use tokio::io::AsyncReadExt;

/// A host HTTP server on loopback that answers `hello-from-host` and
/// counts the connections it accepted.
fn host_server() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&seen);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            counter.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let mut head = Vec::new();
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match conn.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let body = "hello-from-host";
            let _ = write!(
                conn,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (port, seen)
}

/// `svc.test` resolves to the host's loopback, through the proxy's
/// resolver (the sandbox resolves nothing itself).
fn resolver() -> Arc<StaticResolver> {
    Arc::new(StaticResolver::new().with("svc.test", [IpAddr::V4(Ipv4Addr::LOCALHOST)]))
}

fn backend(tree: &Tree, policy: SsrfPolicy) -> LocalBackend {
    tree.backend()
        .with_egress_policy(Arc::new(policy))
        .with_resolver(resolver())
}

fn loopback_allowed() -> SsrfPolicy {
    SsrfPolicy::from_config(&SsrfAllowlistConfig {
        hosts: vec![],
        cidrs: vec!["127.0.0.1/32".to_owned()],
    })
    .unwrap()
}

fn bridge() -> DockerConfig {
    DockerConfig {
        network: Some("bridge".to_owned()),
        ..Default::default()
    }
}

/// GET `$1` with urllib (which honours the proxy variables); prints the
/// status and body, or the refusal code the proxy put in its header.
const GET: &str = r#"python3 - "$1" <<'PY'
import sys, urllib.request, urllib.error
try:
    r = urllib.request.urlopen(sys.argv[1], timeout=10)
    print(r.status, r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code, e.headers.get("X-Talon-Egress"))
except Exception as e:
    print("ERR", type(e).__name__)
PY"#;

/// A CONNECT tunnel to `$1:$2` through the proxy, then a plain request
/// inside it (what an HTTPS client does, without the TLS).
const TUNNEL: &str = r#"python3 - "$1" "$2" <<'PY'
import sys, http.client
c = http.client.HTTPConnection("127.0.0.1", 3128, timeout=10)
c.set_tunnel(sys.argv[1], int(sys.argv[2]))
try:
    c.request("GET", "/")
    r = c.getresponse()
    print(r.status, r.read().decode())
except OSError as e:
    print("REFUSED", e)
PY"#;

#[tokio::test]
async fn strict_rules_refuse_the_hosts_loopback_and_nothing_connects() {
    let tree = Tree::new();
    let (port, seen) = host_server();
    let sandbox = backend(&tree, SsrfPolicy::strict())
        .ensure(&tree.request(WorkspaceAccess::None, bridge()))
        .await
        .unwrap();
    for (url, code) in [
        (format!("http://svc.test:{port}/"), "ssrf_blocked"),
        (
            format!("http://localhost.localdomain:{port}/"),
            "ssrf_blocked",
        ),
        (
            "http://169.254.169.254/latest/meta-data/".to_owned(),
            "metadata_blocked",
        ),
        ("http://[::ffff:a9fe:a9fe]/".to_owned(), "metadata_blocked"),
        ("http://0x7f000001/".to_owned(), "ssrf_blocked"),
    ] {
        let (out, err, _) = sh_args(&*sandbox, GET, std::slice::from_ref(&url)).await;
        assert_eq!(out, format!("403 {code}\n"), "{url}: {out} {err}");
    }
    let (out, _, _) = sh_args(&*sandbox, TUNNEL, &["svc.test".into(), port.to_string()]).await;
    assert!(out.starts_with("REFUSED") && out.contains("403"), "{out}");
    // Going around the proxy reaches nothing: the namespace has only
    // loopback.
    let direct = "python3 -c 'import socket,sys; socket.create_connection((\"10.0.2.2\", 80), timeout=3)' 2>&1 | tail -1";
    let (out, _, _) = sh(&*sandbox, direct).await;
    assert!(
        out.contains("unreachable") || out.contains("Error"),
        "{out}"
    );
    assert_eq!(
        seen.load(Ordering::SeqCst),
        0,
        "the host listener was reached"
    );
}

#[tokio::test]
async fn allowlisted_destinations_are_reached_through_the_proxy_only() {
    let tree = Tree::new();
    let (port, seen) = host_server();
    let sandbox = backend(&tree, loopback_allowed())
        .ensure(&tree.request(WorkspaceAccess::None, bridge()))
        .await
        .unwrap();
    let (out, err, _) = sh_args(&*sandbox, GET, &[format!("http://svc.test:{port}/x")]).await;
    assert_eq!(out, "200 hello-from-host\n", "{err}");
    let (out, err, _) = sh_args(&*sandbox, TUNNEL, &["svc.test".into(), port.to_string()]).await;
    assert_eq!(out, "200 hello-from-host\n", "{err}");
    assert_eq!(seen.load(Ordering::SeqCst), 2);
    // "127.0.0.1" inside the sandbox is the sandbox's own loopback (it is
    // in NO_PROXY), so the host's listener is not reachable by address.
    let (out, _, _) = sh_args(&*sandbox, GET, &[format!("http://127.0.0.1:{port}/")]).await;
    assert_eq!(out, "ERR URLError\n");
    assert_eq!(seen.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn commands_get_the_proxy_variables_and_cannot_point_them_elsewhere() {
    let tree = Tree::new();
    let backend = backend(&tree, SsrfPolicy::strict());
    let sandbox = backend
        .ensure(&tree.request(WorkspaceAccess::None, bridge()))
        .await
        .unwrap();
    let mut proc = sandbox
        .launcher()
        .launch(LaunchRequest {
            command: "echo \"$HTTPS_PROXY $http_proxy $NO_PROXY\"".to_owned(),
            env: [(
                "HTTPS_PROXY".to_owned(),
                "http://attacker.example:1".to_owned(),
            )]
            .into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut out = String::new();
    proc.stdout.read_to_string(&mut out).await.unwrap();
    assert!(proc.control.wait().await.unwrap().success());
    assert_eq!(
        out,
        format!("{EGRESS_PROXY_URL} {EGRESS_PROXY_URL} localhost,127.0.0.1,::1\n")
    );
    assert!(sandbox_has_socket(&*sandbox).await);
    // Without `bridge`: no variables, no socket, no forwarder.
    let plain = backend
        .ensure(&tree.request(WorkspaceAccess::None, DockerConfig::default()))
        .await
        .unwrap();
    let (out, _, _) = sh(&*plain, "echo \"[$HTTPS_PROXY]\"").await;
    assert_eq!(out, "[]\n");
    assert!(!sandbox_has_socket(&*plain).await);
}

async fn sandbox_has_socket(sandbox: &dyn SandboxHandle) -> bool {
    let (out, _, _) = sh(
        sandbox,
        &format!("test -S {EGRESS_SOCKET_PATH} && echo yes"),
    )
    .await;
    out == "yes\n"
}

#[tokio::test]
async fn the_forwarder_ends_with_the_command_and_the_socket_with_the_sandbox() {
    let tree = Tree::new();
    let marker = format!("egress-marker-{}", std::process::id());
    let sandbox = tree
        .backend()
        .ensure_local(&tree.request(WorkspaceAccess::None, bridge()))
        .await
        .unwrap();
    let socket = sandbox.egress_socket().unwrap().to_path_buf();
    assert!(socket.exists());
    // A command that ran and exited leaves no forwarder behind.
    let (out, _, status) = sh(
        &*sandbox,
        &format!("echo {marker}; ps -o args= -e | grep -c -- '--forward'"),
    )
    .await;
    assert!(status.success());
    assert!(out.starts_with(&format!("{marker}\n")), "{out}");
    assert_ne!(out.lines().nth(1), Some("0"), "no forwarder ran: {out}");
    assert!(
        eventually(Duration::from_secs(5), || host_pids_with("--forward")
            .is_empty())
        .await,
        "a forwarder outlived its command"
    );
    drop(sandbox);
    assert!(!socket.exists(), "the proxy socket outlived the sandbox");
}

#[tokio::test]
async fn bridge_without_the_helper_is_refused_with_the_fix() {
    let tree = Tree::new();
    // No helper anywhere: not given, not in the environment, not next to
    // the test binary.
    let backend = tree.backend_without_landlock();
    if talon_sandbox_local::find_sandbox_exec(None).is_some() {
        return; // The build put one next to the test binary; nothing to show.
    }
    let err = backend
        .ensure(&tree.request(WorkspaceAccess::None, bridge()))
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("agents.defaults.sandbox.docker.network"),
        "{text}"
    );
    assert!(text.contains("talon-sandbox-exec"), "{text}");
}
