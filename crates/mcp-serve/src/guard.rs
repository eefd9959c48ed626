//! The layer in front of rmcp: authorisation on every request, the session
//! cap, session-to-caller binding, and disconnect detection.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::Stream;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::direct::{self, InFlight, Posted};
use crate::handler::Disconnected;
use crate::sessions::{Binding, CallerFingerprint, CappedSessions};
use crate::source::{McpCaller, SourceError, ToolSource};

const SESSION_HEADER: &str = "mcp-session-id";

/// What the guard needs.
#[derive(Clone)]
pub(crate) struct GuardState {
    pub(crate) source: Arc<dyn ToolSource>,
    pub(crate) sessions: Arc<CappedSessions>,
    pub(crate) max_body_bytes: usize,
    /// The `tools/call`s answered directly, for `notifications/cancelled`.
    pub(crate) inflight: Arc<InFlight>,
    /// rmcp's allowed `Host`s (empty: the check is off), so the direct
    /// path is never taken where rmcp would refuse.
    pub(crate) allowed_hosts: Arc<[String]>,
    /// How long a direct reply may stay silent (the SSE keep-alive).
    pub(crate) keep_alive: std::time::Duration,
}

/// The middleware: refuse before rmcp sees the request, then watch the
/// response so a client that goes away cancels its call.
pub(crate) async fn guard(
    State(state): State<GuardState>,
    request: Request,
    next: Next,
) -> Response {
    let (mut parts, mut body) = request.into_parts();
    let caller = McpCaller::from_parts(&parts);
    // Every request, no caching: a revoked token or closed Talon session
    // is refused on the next request.
    match state.source.authorize(&caller).await {
        Ok(Some(grant)) => {
            parts.extensions.insert(grant);
        }
        Ok(None) => {}
        Err(err) => return refusal(&err),
    }
    let who = CallerFingerprint::of(&caller);
    let session_id = parts
        .headers
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let opens_session = parts.method == Method::POST && session_id.is_none();
    // A POST body is read here, within the body limit, so that malformed
    // JSON gets a JSON-RPC parse error (rmcp would answer 415) and an
    // oversized body a JSON 413 naming the limit.
    let mut posted: Option<Bytes> = None;
    if parts.method == Method::POST {
        let bytes = match axum::body::to_bytes(body, state.max_body_bytes).await {
            Ok(b) => b,
            Err(_) => return too_large(state.max_body_bytes),
        };
        if serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).is_err() {
            let body = serde_json::json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {"code": -32700, "message": "parse error: the request body is not valid JSON"}
            });
            return (StatusCode::BAD_REQUEST, axum::Json(body)).into_response();
        }
        posted = Some(bytes.clone());
        body = Body::from(bytes);
    }
    // Fires when the client goes away, or when its MCP session closes.
    let mut disconnect = CancellationToken::new();
    let mut bound: Option<CancellationToken> = None;
    if let Some(id) = &session_id {
        match state.sessions.binding(id, who) {
            Binding::Same(closed) => {
                disconnect = closed.child_token();
                bound = Some(closed);
            }
            Binding::Other => {
                return plain(
                    StatusCode::FORBIDDEN,
                    "forbidden",
                    "this MCP session was opened with other credentials or for another Talon session; initialize a new MCP session",
                );
            }
            // rmcp answers 404 for a session it does not know.
            Binding::Unknown => {}
        }
    } else if opens_session && state.sessions.len().await >= state.sessions.cap() {
        // Only an `initialize` opens a session (a stateless 2026-07-28
        // request does not), so look at the body before refusing.
        if posted.as_ref().is_some_and(is_initialize) {
            let mut resp = plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "too_many_sessions",
                &format!(
                    "the MCP session limit ({}) is reached: close an idle session (HTTP DELETE with its Mcp-Session-Id) or retry later",
                    state.sessions.cap()
                ),
            );
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
            return resp;
        }
    }
    // A plain `tools/call` on this caller's own session is answered here
    // (see `direct`); a cancellation reaches such a call, then rmcp too.
    if let (Some(session), Some(closed), Some(body)) = (&session_id, &bound, &posted) {
        match direct::classify(body) {
            Posted::Call {
                id,
                name,
                arguments,
            } if direct::sends_json(&parts.headers)
                && direct::accepts_json(&parts.headers)
                && direct::headers_fit(&parts.headers, &name)
                && direct::transport_checks_pass(&parts.headers, &state.allowed_hosts) =>
            {
                let direct = direct::DirectCall {
                    source: Arc::clone(&state.source),
                    sessions: Arc::clone(&state.sessions),
                    inflight: Arc::clone(&state.inflight),
                    caller: McpCaller::from_parts(&parts),
                    session: session.clone(),
                    closed: closed.clone(),
                    call: (id, name, arguments),
                    keep_alive: state.keep_alive,
                };
                return direct::answer(direct).await;
            }
            Posted::Cancelled(id) => state.inflight.cancel(session, &id),
            Posted::Call { .. } | Posted::Other => {}
        }
    }
    parts.extensions.insert(Disconnected(disconnect.clone()));
    let is_delete = parts.method == Method::DELETE;
    let mut response = next.run(Request::from_parts(parts, body)).await;
    // rmcp accepts a session's DELETE with 202; the session is gone by
    // then, and the reference SDK warns on anything but 200/204.
    if is_delete && response.status() == StatusCode::ACCEPTED {
        let (mut head, _) = response.into_parts();
        head.status = StatusCode::NO_CONTENT;
        head.headers.remove(header::CONTENT_LENGTH);
        head.headers.remove(header::CONTENT_TYPE);
        response = Response::from_parts(head, Body::empty());
    }
    if opens_session
        && response.status().is_success()
        && let Some(id) = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
    {
        state.sessions.bind(id, who);
    }
    let (parts, body) = response.into_parts();
    let watched = Watched {
        inner: body.into_data_stream(),
        guard: Some(disconnect.drop_guard()),
    };
    Response::from_parts(parts, Body::from_stream(watched))
}

/// Whether a JSON-RPC body is (or, batched, holds) an `initialize`.
fn is_initialize(body: &Bytes) -> bool {
    fn one(v: &serde_json::Value) -> bool {
        v.get("method").and_then(|m| m.as_str()) == Some("initialize")
    }
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(serde_json::Value::Array(items)) => items.iter().any(one),
        Ok(v) => one(&v),
        Err(_) => false,
    }
}

/// The HTTP answer to a refusal by the source.
fn refusal(err: &SourceError) -> Response {
    match err {
        SourceError::Unauthorized(_) => {
            let mut resp = plain(StatusCode::UNAUTHORIZED, "unauthorized", &err.to_string());
            resp.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"talon\""),
            );
            resp
        }
        SourceError::RateLimited {
            retry_after_secs, ..
        } => {
            let mut resp = plain(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                &err.to_string(),
            );
            if let Ok(v) = HeaderValue::from_str(&retry_after_secs.to_string()) {
                resp.headers_mut().insert(header::RETRY_AFTER, v);
            }
            resp
        }
        SourceError::Forbidden(_) => plain(StatusCode::FORBIDDEN, "forbidden", &err.to_string()),
        SourceError::UnknownSession(_) => plain(
            StatusCode::NOT_FOUND,
            "unknown_session",
            &format!(
                "{err}: name an existing Talon session with header X-Talon-Session or query parameter session="
            ),
        ),
        SourceError::Internal(_) => {
            tracing::warn!(error = %err, "mcp: tool source failed to authorise a request");
            plain(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                &err.to_string(),
            )
        }
    }
}

fn too_large(max: usize) -> Response {
    plain(
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload_too_large",
        &format!("the request body is larger than {max} bytes (or was cut off)"),
    )
}

fn plain(status: StatusCode, code: &str, message: &str) -> Response {
    let body = serde_json::json!({"error": {"code": code, "message": message}});
    (status, axum::Json(body)).into_response()
}

/// A response body that cancels its token when dropped before its end
/// (hyper drops it when the client goes away).
struct Watched {
    inner: axum::body::BodyDataStream,
    guard: Option<DropGuard>,
}

impl Stream for Watched {
    type Item = Result<Bytes, axum::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = Pin::new(&mut self.inner).poll_next(cx);
        if let Poll::Ready(None) = next
            && let Some(guard) = self.guard.take()
        {
            // Ended normally: nothing to cancel.
            let _ = guard.disarm();
        }
        next
    }
}
