//! The HTTP surface: `/ws`, `/healthz`, `/metrics`, `POST /tools/invoke`
//! and the MCP server at `/mcp`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::Router;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use talon_gateway_protocol::{
    HttpError, HttpErrorDetail, HttpInvokeFailure, HttpInvokeOk, HttpInvokeRequest,
};
use talon_runtime::InvokeOutcome;

use crate::gateway::Gateway;
use crate::scope::Scope;

/// The gateway's routes.
pub fn router(gw: Gateway) -> Router {
    let mcp = talon_mcp_serve::router(Arc::new(crate::mcp_source::GatewayToolSource::new(
        gw.clone(),
    )));
    Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/ws", get(ws))
        .route("/tools/invoke", post(tools_invoke))
        .nest_service("/mcp", mcp)
        .with_state(gw)
}

/// Why a request was not authenticated.
pub(crate) enum AuthFailure {
    Missing,
    Invalid,
    /// Too many failures from this address; retry after this many seconds.
    Limited(u64),
}

impl AuthFailure {
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            AuthFailure::Missing | AuthFailure::Invalid => StatusCode::UNAUTHORIZED,
            AuthFailure::Limited(_) => StatusCode::TOO_MANY_REQUESTS,
        }
    }

    pub(crate) fn message(&self) -> &'static str {
        match self {
            AuthFailure::Missing => {
                "missing bearer token: send `Authorization: Bearer <token>` (the token is in the gateway's state dir, file gateway.token, or in gateway.auth of the config)"
            }
            AuthFailure::Invalid => "invalid token",
            AuthFailure::Limited(_) => {
                "too many failed authentication attempts from this address; a valid token is still accepted, others are refused until the time in Retry-After has passed"
            }
        }
    }
}

impl Gateway {
    /// Authenticate a request's bearer token (rate limited per address).
    pub(crate) fn authenticate(
        &self,
        headers: &HeaderMap,
        peer: Option<std::net::IpAddr>,
    ) -> Result<(crate::auth::Identity, crate::auth::TokenHash), AuthFailure> {
        let header = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        // A valid token is accepted whatever else came from its address
        // (failures from a shared address, such as loopback, must not lock
        // the operator out); a failure while the address is limited is
        // answered 429 with when to retry, and does not extend the window.
        let fail = |f: AuthFailure| {
            self.inner
                .metrics
                .auth_failures
                .fetch_add(1, Ordering::Relaxed);
            if let Some(ip) = peer {
                if let Some(wait) = self.inner.auth.retry_after(ip) {
                    return AuthFailure::Limited(wait.as_secs().max(1));
                }
                self.inner.auth.failed(ip);
            }
            f
        };
        let Some(token) = crate::auth::bearer(header) else {
            return Err(fail(AuthFailure::Missing));
        };
        let hash = crate::auth::token_hash(token);
        match self.generation().tokens.identify_hash(&hash) {
            Some(identity) => Ok((identity, hash)),
            None => Err(fail(AuthFailure::Invalid)),
        }
    }
}

fn json_error(status: StatusCode, kind: &str, message: &str) -> Response {
    (status, axum::Json(HttpError::new(kind, message))).into_response()
}

/// The HTTP answer to an authentication failure (`Retry-After` on 429).
fn auth_error(f: &AuthFailure) -> Response {
    let mut resp = json_error(f.status(), "unauthorized", f.message());
    if let AuthFailure::Limited(secs) = f
        && let Ok(v) = axum::http::HeaderValue::from_str(&secs.to_string())
    {
        resp.headers_mut().insert(header::RETRY_AFTER, v);
    }
    resp
}

async fn healthz(State(gw): State<Gateway>) -> Response {
    let status = if gw.is_shutting_down() {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    // `degraded` (a configured hook cannot run) still answers 200: the
    // gateway serves. Which hooks is told only to authenticated callers
    // (`health`).
    let text = crate::handlers::gateway::status(gw.is_shutting_down(), &gw.generation());
    (
        status,
        axum::Json(json!({"ok": status == StatusCode::OK, "status": text})),
    )
        .into_response()
}

async fn metrics(
    State(gw): State<Gateway>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
) -> Response {
    if let Err(f) = gw.authenticate(&headers, Some(peer.ip())) {
        return auth_error(&f);
    }
    let pending = gw.inner.approvals.pending_count();
    let containers = gw.inner.sessions.sandboxed_count();
    let text = gw
        .inner
        .metrics
        .render(pending, containers, gw.inner.sessions.registry.len());
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

async fn ws(
    State(gw): State<Gateway>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Response {
    let (identity, hash) = match gw.authenticate(&headers, Some(peer.ip())) {
        Ok(a) => a,
        Err(f) => return auth_error(&f),
    };
    if gw.is_shutting_down() {
        return json_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            "the gateway is shutting down",
        );
    }
    let max = gw.limits().max_frame_bytes;
    upgrade
        .max_message_size(max)
        .max_frame_size(max)
        .on_upgrade(move |socket| crate::ws::serve_connection(gw, socket, identity, hash))
}

async fn tools_invoke(
    State(gw): State<Gateway>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: axum::body::Body,
) -> Response {
    let identity = match gw.authenticate(&headers, Some(peer.ip())) {
        Ok((i, _)) => i,
        Err(f) => return auth_error(&f),
    };
    if !identity.scope.covers(Scope::Runner) {
        return json_error(
            StatusCode::FORBIDDEN,
            "forbidden",
            &format!(
                "POST /tools/invoke needs the runner scope; token `{}` is read-only",
                identity.id
            ),
        );
    }
    // The same bound as a WebSocket frame, answered in JSON naming it.
    let max = gw.limits().max_frame_bytes;
    let Ok(body) = axum::body::to_bytes(body, max).await else {
        return json_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            &format!(
                "the request body is larger than {max} bytes (gateway.limits.maxFrameBytes) or was cut off"
            ),
        );
    };
    let body: HttpInvokeRequest = match serde_json::from_slice(&body) {
        Ok(b) => b,
        Err(e) => {
            return json_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                &format!(
                    "the body must be {{\"tool\": NAME, \"args\": {{…}}, \"sessionKey\"?: KEY}}: {e}"
                ),
            );
        }
    };
    let mut args = match body.args {
        None | Some(Value::Null) => serde_json::Map::new(),
        Some(Value::Object(m)) => m,
        Some(_) => {
            return json_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "`args` must be a JSON object",
            );
        }
    };
    if let Some(action) = body.action {
        args.entry("action").or_insert(Value::String(action));
    }
    if gw.generation().section.http_denies(&body.tool) {
        return json_error(
            StatusCode::NOT_FOUND,
            "not_found",
            &format!(
                "tool `{}` is not available over POST /tools/invoke (denied on the HTTP surface by default); name it in gateway.tools.allow to expose it, or call it over the WebSocket API",
                body.tool
            ),
        );
    }
    let session = body.session_key.unwrap_or_else(|| "main".to_owned());
    let report = match gw
        .invoke_spawned(
            identity,
            session,
            body.tool_call_id,
            body.tool,
            Value::Object(args),
        )
        .await
    {
        Ok(r) => r,
        Err(e) if e.code == crate::rpc::NOT_FOUND => {
            return json_error(StatusCode::NOT_FOUND, "not_found", &e.message);
        }
        Err(e) if e.code == crate::rpc::FORBIDDEN => {
            return json_error(StatusCode::FORBIDDEN, "forbidden", &e.message);
        }
        Err(e) if e.code == crate::rpc::UNAVAILABLE => {
            return json_error(StatusCode::SERVICE_UNAVAILABLE, "unavailable", &e.message);
        }
        Err(e) => return json_error(StatusCode::INTERNAL_SERVER_ERROR, "internal", &e.message),
    };
    let wire = report.outcome.wire();
    let status =
        StatusCode::from_u16(wire.http_status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    match &report.outcome {
        InvokeOutcome::Completed { result, .. } => (
            status,
            axum::Json(HttpInvokeOk {
                ok: true,
                result: json!(result),
                call_id: report.call_id.clone(),
                truncated: report.truncated,
            }),
        )
            .into_response(),
        // The status and `error.type` come from the one outcome mapping
        // (`InvokeOutcome::wire`): a tool the policy removed is "not
        // available" (404), as in OpenClaw; any other block is 403.
        InvokeOutcome::Blocked(b) => {
            failure(status, &report, wire.http_error_type, None, &b.reason)
        }
        InvokeOutcome::Failed(e) => failure(
            status,
            &report,
            wire.http_error_type,
            Some(e.code().to_string()),
            &e.to_string(),
        ),
    }
}

/// A blocked or failed call's HTTP body: the call's result, `ok: false`
/// and the error.
fn failure(
    status: StatusCode,
    report: &crate::invoke::CallReport,
    kind: Option<&str>,
    code: Option<String>,
    message: &str,
) -> Response {
    let body = HttpInvokeFailure {
        call: report.to_result(),
        ok: false,
        error: HttpErrorDetail {
            kind: kind.unwrap_or("internal").to_owned(),
            code,
            message: message.to_owned(),
        },
    };
    (status, axum::Json(body)).into_response()
}
