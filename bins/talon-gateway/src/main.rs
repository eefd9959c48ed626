//! `talon-gateway`: the daemon. Thin: arguments, logging, signals and the
//! config watcher; the behaviour lives in `talon-gateway-core`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use anyhow::{Context as _, Result};
use clap::Parser;
use talon_gateway_core::{Gateway, GatewayOptions, parse_bind};
use tokio::signal::unix::{SignalKind, signal};

/// Run the Talon gateway: tool calls over WebSocket JSON-RPC (`/ws`),
/// `POST /tools/invoke`, and MCP (`/mcp`), on 127.0.0.1:18789 by default.
#[derive(Debug, Parser)]
#[command(name = "talon-gateway", version, about)]
struct Args {
    /// Config file (default: $TALON_CONFIG, else talon.json in the state
    /// directory, else built-in defaults).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// State directory: token, call journal, approvals, cron, tasks
    /// (default: $TALON_STATE_DIR, else ~/.talon).
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// Listen address, HOST:PORT (default: gateway.bind/gateway.port of
    /// the config, else 127.0.0.1:18789).
    #[arg(long, value_name = "ADDR")]
    bind: Option<String>,
    /// Once listening, print the actual address (HOST:PORT) as one line on
    /// stdout, for supervisors and tests that pass `--bind 127.0.0.1:0`
    /// and let the kernel pick the port. Nothing else is written to stdout.
    #[arg(long)]
    print_address: bool,
}

fn main() -> ExitCode {
    // This binary is also the local sandbox's helper (Landlock, egress
    // forwarder) when started as `EXE --talon-sandbox-exec ...`.
    if let Some(code) = talon_sandbox_local::dispatch_multicall() {
        return code;
    }
    let args = Args::parse();
    if let Some(code) = reexec_with_state_dir(&args) {
        return code;
    }
    init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(error = %e, "cannot start the async runtime");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            let _ = writeln_stderr(&format!("talon-gateway: {e:#}"));
            ExitCode::from(2)
        }
    }
}

fn writeln_stderr(line: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut err = std::io::stderr().lock();
    writeln!(err, "{line}")
}

/// The runtime's built-in tools read the state directory (and the
/// config file inside it) from `TALON_STATE_DIR`; `--state-dir` is handed
/// to them by running this program again with that variable set
/// (`talon_config::reexec_with_state_dir`).
fn reexec_with_state_dir(args: &Args) -> Option<ExitCode> {
    let dir = args.state_dir.as_ref()?;
    let err = talon_config::reexec_with_state_dir(dir).err()?;
    let _ = writeln_stderr(&format!(
        "talon-gateway: cannot re-run itself with --state-dir: {err}"
    ));
    Some(ExitCode::from(2))
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TALON_LOG")
        // rmcp logs whole requests (tool arguments included) at debug and
        // every notification at info: keep it at warn unless asked.
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,rmcp=warn"));
    use std::io::IsTerminal as _;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}

async fn run(args: Args) -> Result<()> {
    // Before anything can start a child: the startup sweep kills what a
    // dead predecessor left running, and every child from here on is in a
    // contained tree that dies with this process.
    let supervisor =
        talon_proc_tree::Supervisor::shared().context("cannot set up process-tree containment")?;
    match supervisor.containment() {
        talon_proc_tree::Containment::Cgroup { owner, .. } => tracing::info!(
            containment = "cgroup",
            owner = %owner.display(),
            "child process trees are contained in cgroups"
        ),
        talon_proc_tree::Containment::ProcessGroup { reason } => tracing::info!(
            containment = "process-group",
            %reason,
            "child process trees are contained by process groups and labels"
        ),
        _ => {}
    }
    let bind = args.bind.as_deref().map(parse_bind).transpose()?;
    let state_dir = match &args.state_dir {
        Some(d) => std::path::absolute(d).unwrap_or_else(|_| d.clone()),
        None => talon_config::state_dir(),
    };
    let options = GatewayOptions {
        config_path: args.config.clone(),
        state_dir,
        bind,
        turn_runner: None,
    };
    let gw = Gateway::open(options).context("cannot start the gateway")?;
    let listener = talon_gateway_core::bind(&gw).await?;
    let addr = listener
        .local_addr()
        .context("cannot read the listen address")?;
    tracing::info!(
        %addr,
        token_file = %gw.token_path().display(),
        state_dir = %gw.state_dir().display(),
        "talon-gateway listening (ws://{addr}/ws, http://{addr}/healthz, http://{addr}/mcp)"
    );
    if args.print_address {
        print_address(addr).context("cannot print the listen address (--print-address)")?;
    }
    let mut term = signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?;
    let mut int = signal(SignalKind::interrupt()).context("cannot listen for SIGINT")?;
    let mut hup = signal(SignalKind::hangup()).context("cannot listen for SIGHUP")?;
    let watch_path = talon_config::resolve_config_path(args.config.as_deref())
        .path()
        .map(PathBuf::from);
    let reload_gw = gw.clone();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let mut seen = watch_path.as_deref().and_then(stamp);
        let mut tick = tokio::time::interval(Duration::from_millis(500));
        loop {
            tokio::select! {
                _ = term.recv() => { tracing::info!("SIGTERM: draining"); break; }
                _ = int.recv() => { tracing::info!("SIGINT: draining"); break; }
                _ = hup.recv() => {
                    tracing::info!("SIGHUP: reloading the configuration");
                    reload_gw.reload();
                    seen = watch_path.as_deref().and_then(stamp);
                }
                _ = tick.tick() => {
                    let now = watch_path.as_deref().and_then(stamp);
                    if now != seen {
                        seen = now;
                        tracing::info!("the config file changed: reloading");
                        reload_gw.reload();
                    }
                }
            }
        }
        let _ = stop_tx.send(());
    });
    talon_gateway_core::serve(gw, listener, async move {
        let _ = stop_rx.await;
    })
    .await?;
    tracing::info!("talon-gateway stopped");
    Ok(())
}

/// The `--print-address` line: written and flushed at once, so a reader
/// waiting on the pipe sees it while the daemon keeps running.
fn print_address(addr: std::net::SocketAddr) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{addr}")?;
    out.flush()
}

/// What identifies a version of the config file: modification time and size.
fn stamp(path: &std::path::Path) -> Option<(SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}
