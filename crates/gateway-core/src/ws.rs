//! `/ws`: one WebSocket connection speaking JSON-RPC 2.0.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::extract::ws::{Message, WebSocket};
use futures::{SinkExt as _, StreamExt as _};
use serde_json::Value;
use tokio::sync::{Semaphore, broadcast};

use crate::auth::{Identity, TokenHash};
use crate::dispatch::Caller;
use crate::gateway::Gateway;
use crate::outbound::Outbound;
use crate::rpc::{
    PARSE_ERROR, RpcError, UNAUTHORIZED, error_response, notification, parse_request, response,
};

static NEXT_CONN: AtomicU64 = AtomicU64::new(1);

/// Most requests in one batch.
const MAX_BATCH: usize = 64;

/// How long one frame may take to write before the client counts as not
/// reading.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// Serve one authenticated connection until it closes. `token` is the
/// presented token's hash: after a reload the connection is identified
/// again by it (a removed token's next request is refused and the
/// connection closed; a changed scope or id applies from then on).
pub(crate) async fn serve_connection(
    gw: Gateway,
    socket: WebSocket,
    identity: Identity,
    token: TokenHash,
) {
    let limits = gw.limits();
    let conn_id = NEXT_CONN.fetch_add(1, Ordering::Relaxed);
    let (out, mut rx) = Outbound::new(conn_id, limits.outbound_frames);
    let (mut sink, mut stream) = socket.split();
    let metrics = &gw.inner.metrics;
    metrics.connections.fetch_add(1, Ordering::Relaxed);

    // Writer: the only task touching the sink.
    let writer_out = out.clone();
    let writer = tokio::spawn(async move {
        loop {
            tokio::select! {
                frame = rx.recv() => {
                    let Some(frame) = frame else { break };
                    match tokio::time::timeout(WRITE_TIMEOUT, sink.send(Message::Text(frame.into()))).await {
                        Ok(Ok(())) => {}
                        _ => { writer_out.close(); break; }
                    }
                }
                () = writer_out.closed() => break,
            }
        }
        // Last words (e.g. why the connection is closed), best effort and
        // bounded: a client that does not read gets none.
        let flush = async {
            while let Ok(frame) = rx.try_recv() {
                if sink.send(Message::Text(frame.into())).await.is_err() {
                    break;
                }
            }
            let _ = sink.send(Message::Close(None)).await;
        };
        let _ = tokio::time::timeout(Duration::from_secs(1), flush).await;
        let _ = sink.close().await;
    });

    // Events: approvals, cron, tasks, reloads, filtered by the scope the
    // connection has now (a reload can change it).
    let event_scope = Arc::new(std::sync::Mutex::new(identity.scope));
    let scope_now = Arc::clone(&event_scope);
    let mut events = gw.inner.events.subscribe();
    let events_out = out.clone();
    let events_task = tokio::spawn(async move {
        loop {
            tokio::select! {
                ev = events.recv() => match ev {
                    Ok(ev) => {
                        let scope = match scope_now.lock() {
                            Ok(s) => *s,
                            Err(p) => *p.into_inner(),
                        };
                        if scope.covers(ev.min_scope) {
                            let frame = notification(ev.method, ev.params).to_string();
                            if !events_out.send(frame) { break; }
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => { events_out.close(); break; }
                    Err(broadcast::error::RecvError::Closed) => break,
                },
                () = events_out.closed() => break,
            }
        }
    });

    let permits = Arc::new(Semaphore::new(limits.max_in_flight_per_connection));
    let mut caller = Caller {
        out: Some(out.clone()),
        identity,
    };
    let mut generation = gw.generation().id;
    loop {
        let msg = tokio::select! {
            m = stream.next() => m,
            () = out.closed() => break,
            () = gw.inner.closing.cancelled() => break,
        };
        let text = match msg {
            Some(Ok(Message::Text(t))) => t,
            Some(Ok(Message::Binary(b))) => match String::from_utf8(b.to_vec()) {
                Ok(s) => s.into(),
                Err(_) => {
                    let e = RpcError::new(PARSE_ERROR, "binary frames must hold UTF-8 JSON");
                    out.send(error_response(Value::Null, &e).to_string());
                    continue;
                }
            },
            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
            Some(Ok(_)) => continue,
        };
        let parsed: Value = match serde_json::from_str(text.as_str()) {
            Ok(v) => v,
            Err(e) => {
                let e = RpcError::new(PARSE_ERROR, format!("not valid JSON: {e}"));
                if !out.send(error_response(Value::Null, &e).to_string()) {
                    break;
                }
                continue;
            }
        };
        // A reload may have rotated tokens: re-check this connection's.
        let current = gw.generation();
        if current.id != generation {
            generation = current.id;
            match current.tokens.identify_hash(&token) {
                Some(now) => {
                    match event_scope.lock() {
                        Ok(mut s) => *s = now.scope,
                        Err(p) => *p.into_inner() = now.scope,
                    }
                    caller.identity = now;
                }
                None => {
                    let id = parsed.get("id").cloned().unwrap_or(Value::Null);
                    let e = RpcError::new(
                        UNAUTHORIZED,
                        "this connection's token was revoked by a configuration reload; reconnect with a current token",
                    );
                    out.send(error_response(id, &e).to_string());
                    break;
                }
            }
        }
        drop(current);
        let Ok(permit) = Arc::clone(&permits).acquire_owned().await else {
            break;
        };
        let gw2 = gw.clone();
        let out2 = out.clone();
        let caller2 = caller.clone();
        tokio::spawn(async move {
            let reply = match parsed {
                Value::Array(items) if items.is_empty() => Some(error_response(
                    Value::Null,
                    &RpcError::new(
                        crate::rpc::INVALID_REQUEST,
                        "an empty batch is not a request",
                    ),
                )),
                Value::Array(items) if items.len() > MAX_BATCH => Some(error_response(
                    Value::Null,
                    &RpcError::new(
                        crate::rpc::INVALID_REQUEST,
                        format!("a batch may hold at most {MAX_BATCH} requests"),
                    ),
                )),
                Value::Array(items) => {
                    let futs = items
                        .into_iter()
                        .map(|item| handle_one(&gw2, item, &caller2));
                    let answers: Vec<Value> = futures::future::join_all(futs)
                        .await
                        .into_iter()
                        .flatten()
                        .collect();
                    (!answers.is_empty()).then(|| Value::Array(answers))
                }
                single => handle_one(&gw2, single, &caller2).await,
            };
            if let Some(reply) = reply
                && !out2.send(reply.to_string())
                && out2.is_full()
            {
                gw2.inner
                    .metrics
                    .slow_consumers
                    .fetch_add(1, Ordering::Relaxed);
                tracing::warn!(
                    conn = out2.id,
                    "closing a connection that does not read its replies (slow consumer)"
                );
            }
            drop(permit);
        });
    }
    if gw.inner.closing.is_cancelled() {
        // The drain is over: let this connection's request tasks put their
        // replies in the queue (bounded), then the writer flushes them.
        let all = u32::try_from(limits.max_in_flight_per_connection).unwrap_or(u32::MAX);
        let _ = tokio::time::timeout(Duration::from_secs(2), permits.acquire_many(all)).await;
    }
    out.close();
    gw.inner.runners.disconnected(conn_id);
    events_task.abort();
    let _ = writer.await;
    metrics.connections.fetch_sub(1, Ordering::Relaxed);
}

/// One request: checked, scope-checked, run. `None` for notifications.
async fn handle_one(gw: &Gateway, frame: Value, caller: &Caller) -> Option<Value> {
    let req = match parse_request(frame) {
        Ok(r) => r,
        Err(b) => {
            let (id, e) = *b;
            return Some(error_response(id, &e));
        }
    };
    let id = req.id.clone();
    let result = gw.call_as(caller, &req.method, req.params).await;
    let id = id?;
    Some(match result {
        Ok(v) => response(id, v),
        Err(e) => error_response(id, &e),
    })
}
