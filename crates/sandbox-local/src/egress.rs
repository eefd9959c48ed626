//! The sandbox side of a local sandbox's network: the forwarder
//! `talon-sandbox-exec` starts inside the sandbox's network namespace,
//! relaying [`EGRESS_LISTEN`] to the host's guarded proxy
//! (`talon_egress::EgressProxy`) over the Unix socket bound at
//! [`EGRESS_SOCKET_PATH`], and the proxy variables every command gets.
//!
//! The namespace still has only loopback: a program that ignores the proxy
//! variables, or connects anywhere directly, reaches nothing.

use std::io;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use talon_proc_tree::{ChildCommand, ChildEnv, ProcessGroup, SpawnError};

/// Where the host's egress proxy socket is bound inside the sandbox.
pub const EGRESS_SOCKET_PATH: &str = "/.talon/egress.sock";
/// The address the forwarder listens on inside the sandbox's own network
/// namespace (fresh per command, so nothing else holds the port).
pub const EGRESS_LISTEN: &str = "127.0.0.1:3128";
/// The proxy URL commands are given.
pub const EGRESS_PROXY_URL: &str = "http://127.0.0.1:3128";
/// The variables set to [`EGRESS_PROXY_URL`] for every command of a
/// sandbox with egress (both spellings: tools differ in which they read).
pub const PROXY_VARS: &[&str] = &[
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
];
/// Loopback inside the sandbox is reached directly.
pub const NO_PROXY: &str = "localhost,127.0.0.1,::1";

/// The proxy variables of a sandbox with egress: [`PROXY_VARS`] and
/// `NO_PROXY`/`no_proxy`. They are set last, over the call's own, so a
/// command cannot point them elsewhere (there is nowhere else to reach).
pub(crate) fn proxy_env() -> impl Iterator<Item = (String, String)> {
    PROXY_VARS
        .iter()
        .map(|k| ((*k).to_owned(), EGRESS_PROXY_URL.to_owned()))
        .chain(
            ["NO_PROXY", "no_proxy"]
                .into_iter()
                .map(|k| (k.to_owned(), NO_PROXY.to_owned())),
        )
}

/// Bind [`EGRESS_LISTEN`] and start the forwarder: `helper
/// --talon-sandbox-exec --forward SOCKET` with the listening socket as its standard input, so it is ready
/// before the command starts. The forwarder ends with the sandbox's PID
/// namespace when the command exits.
pub fn start_forwarder(helper: &Path, socket: &Path) -> io::Result<()> {
    let listener = TcpListener::bind(EGRESS_LISTEN)?;
    let fd: std::os::fd::OwnedFd = listener.into();
    // The helper itself, inside the sandbox: the environment bubblewrap
    // gave this process is already the sandbox's.
    ChildCommand::new(helper, ChildEnv::InheritParent, ProcessGroup::Parent)
        .args([crate::helper::MULTICALL_ARG, "--forward"])
        .arg(socket)
        .stdin(std::process::Stdio::from(fd))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(drop)
        .map_err(SpawnError::into_io_error)
}

/// The forwarder's loop: every connection on `listener` is relayed to a
/// new connection to `socket`, both ways, until either side closes.
pub fn forward(listener: TcpListener, socket: PathBuf) -> io::Result<()> {
    loop {
        let (tcp, _) = listener.accept()?;
        let socket = socket.clone();
        std::thread::spawn(move || {
            if let Ok(unix) = UnixStream::connect(&socket) {
                relay(tcp, unix);
            }
        });
    }
}

fn relay(tcp: TcpStream, unix: UnixStream) {
    let (Ok(tcp_back), Ok(unix_back)) = (tcp.try_clone(), unix.try_clone()) else {
        return;
    };
    let up = std::thread::spawn(move || {
        let (mut from, mut to) = (tcp, unix);
        let _ = io::copy(&mut from, &mut to);
        let _ = to.shutdown(Shutdown::Write);
    });
    let (mut from, mut to) = (unix_back, tcp_back);
    let _ = io::copy(&mut from, &mut to);
    let _ = to.shutdown(Shutdown::Write);
    let _ = up.join();
}
