//! Listening, serving and the graceful stop.

use std::future::{Future, IntoFuture as _};
use std::net::SocketAddr;

use axum::serve::ListenerExt as _;
use tokio::net::TcpListener;

use crate::error::GatewayError;
use crate::gateway::Gateway;

/// Bind the gateway's address (refusing a non-loopback one without a
/// configured token, which [`Gateway::open`] already checked).
pub async fn bind(gw: &Gateway) -> Result<TcpListener, GatewayError> {
    let addr = gw.listen_addr();
    TcpListener::bind(addr)
        .await
        .map_err(|e| GatewayError::Bind {
            addr: addr.to_string(),
            message: e.to_string(),
        })
}

/// Serve on `listener` until `stop` resolves, then drain: refuse new
/// calls, wait up to the drain timeout for in-flight ones, cancel the
/// rest, kill child processes and flush the journal.
pub async fn serve(
    gw: Gateway,
    listener: TcpListener,
    stop: impl Future<Output = ()> + Send + 'static,
) -> Result<(), GatewayError> {
    if let (Some(fleet), Ok(addr)) = (gw.inner.fleet.clone(), listener.local_addr()) {
        let _ = tokio::task::spawn_blocking(move || fleet.set_listen(addr)).await;
    }
    let app = crate::http::router(gw.clone()).into_make_service_with_connect_info::<SocketAddr>();
    let (stopped_tx, stopped_rx) = tokio::sync::oneshot::channel::<()>();
    let drain_gw = gw.clone();
    // Replies are small frames written whole: without TCP_NODELAY a
    // keep-alive client that reads each reply before sending the next
    // request (an MCP SDK on `/mcp`) waits out Nagle plus delayed ACK,
    // about 40 ms a call.
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY on a gateway connection");
        }
    });
    let server = axum::serve(listener, app).with_graceful_shutdown(async move {
        stop.await;
        let deadline = drain_gw.limits().drain_timeout;
        drain_gw.shutdown(deadline).await;
        let _ = stopped_tx.send(());
    });
    // axum stops tracking a connection once it is upgraded, so the server
    // may end as soon as the drain is done while WebSocket connections are
    // still flushing their last replies; other open responses may keep it
    // alive past the drain. Either way, once the drain is done each
    // WebSocket connection flushes and closes (bounded), then nothing else
    // is waited for.
    let server = std::pin::pin!(server.into_future());
    let drained = tokio::select! {
        r = server => {
            r.map_err(|e| GatewayError::Internal(format!("server: {e}")))?;
            true
        }
        r = stopped_rx => r.is_ok(),
    };
    if drained
        && !gw
            .connections_closed(std::time::Duration::from_secs(3))
            .await
    {
        tracing::warn!(
            "some WebSocket connections did not close within 3 s of the drain; stopping anyway"
        );
    }
    Ok(())
}
