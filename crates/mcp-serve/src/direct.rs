//! A `tools/call` on a bound MCP session, answered by the guard itself with
//! `application/json` instead of through rmcp's session worker and an SSE
//! stream (the Streamable HTTP transport lets a server answer a POST either
//! way). The call runs through the same [`run_call`] as rmcp's handler, so
//! the source, the result shape and the cancellation rules are the same;
//! what it saves is the task hops and the stream of rmcp's session path,
//! which made `/mcp` three times slower than `POST /tools/invoke`.
//!
//! Only the plain case is taken: one JSON-RPC request (no batch) whose
//! params are `name` and optional `arguments` (no `_meta`, so no progress
//! token; no task augmentation), on a session this caller opened, from a
//! client that sends `Content-Type: application/json` and accepts JSON,
//! with no `Origin` header and an allowed `Host` (so rmcp's content-type,
//! DNS-rebinding and origin checks could only have passed).
//! Everything else goes to rmcp unchanged.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::handler::run_call;
use crate::sessions::CappedSessions;
use crate::source::{McpCaller, ToolSource};

/// What a POST body asks, as far as the direct path cares.
#[derive(Debug, PartialEq)]
pub enum Posted {
    /// A plain `tools/call` the guard answers itself.
    Call {
        /// The JSON-RPC id (a number or a string), echoed in the answer.
        id: Value,
        /// The tool.
        name: String,
        /// Its arguments (`null` when absent).
        arguments: Value,
    },
    /// `notifications/cancelled` for a request id (also passed to rmcp).
    Cancelled(Value),
    /// Anything else: rmcp's.
    Other,
}

/// Classify a POST body (already known to be JSON).
pub fn classify(body: &[u8]) -> Posted {
    let Ok(Value::Object(msg)) = serde_json::from_slice::<Value>(body) else {
        return Posted::Other;
    };
    if msg.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Posted::Other;
    }
    let params = msg.get("params").and_then(Value::as_object);
    match (msg.get("method").and_then(Value::as_str), msg.get("id")) {
        (Some("tools/call"), Some(id)) if id.is_number() || id.is_string() => {
            plain_call(id, params).unwrap_or(Posted::Other)
        }
        (Some("notifications/cancelled"), None) => params
            .and_then(|p| p.get("requestId"))
            .filter(|id| id.is_number() || id.is_string())
            .map_or(Posted::Other, |id| Posted::Cancelled(id.clone())),
        _ => Posted::Other,
    }
}

fn plain_call(id: &Value, params: Option<&Map<String, Value>>) -> Option<Posted> {
    let params = params?;
    if params.keys().any(|k| k != "name" && k != "arguments") {
        return None;
    }
    let name = params.get("name")?.as_str()?.to_owned();
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => Value::Null,
        Some(args @ Value::Object(_)) => args.clone(),
        Some(_) => return None,
    };
    Some(Posted::Call {
        id: id.clone(),
        name,
        arguments,
    })
}

/// Whether the body is declared JSON (`Content-Type: application/json`,
/// parameters allowed), as rmcp requires of every POST: without it rmcp
/// answers 415, so the direct path must not answer either.
pub fn sends_json(headers: &HeaderMap) -> bool {
    let mut values = headers.get_all(header::CONTENT_TYPE).iter();
    match (values.next(), values.next()) {
        (Some(v), None) => v.to_str().ok().is_some_and(|t| {
            t.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .eq_ignore_ascii_case("application/json")
        }),
        _ => false,
    }
}

/// Whether the client takes an `application/json` answer (the transport
/// requires clients to accept both; one that does not gets rmcp's SSE).
pub fn accepts_json(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| {
            let essence = t.split(';').next().unwrap_or_default().trim();
            essence.eq_ignore_ascii_case("application/json") || essence == "*/*"
        })
}

/// Whether the request's transport headers are ones rmcp would accept
/// for this call unchanged: a known legacy `MCP-Protocol-Version` (or
/// none), and SEP-2243's `Mcp-Method` / `Mcp-Name` absent or matching the
/// body. Anything else goes to rmcp, which answers it as it always has.
pub fn headers_fit(headers: &HeaderMap, name: &str) -> bool {
    let text = |h: &str| headers.get(h).map(|v| v.to_str().ok());
    let version_ok = match text("mcp-protocol-version") {
        None => true,
        Some(Some(v)) => {
            v != rmcp::model::ProtocolVersion::V_2026_07_28.as_str()
                && rmcp::model::ProtocolVersion::KNOWN_VERSIONS
                    .iter()
                    .any(|k| k.as_str() == v)
        }
        Some(None) => false,
    };
    let method_ok = matches!(text("mcp-method"), None | Some(Some("tools/call")));
    let name_ok = match text("mcp-name") {
        None => true,
        Some(v) => v == Some(name),
    };
    version_ok && method_ok && name_ok
}

/// Whether rmcp's DNS-rebinding and origin checks would certainly pass:
/// no `Origin` header (browsers always send one on a cross-origin POST, so
/// a browser never takes the direct path), and a `Host` whose host part
/// (or whole `host:port`) is in `allowed_hosts` (an empty list means the
/// check is off, as it is for rmcp). In any doubt the request goes to
/// rmcp, which decides.
pub fn transport_checks_pass(headers: &HeaderMap, allowed_hosts: &[String]) -> bool {
    if headers.contains_key(header::ORIGIN) {
        return false;
    }
    if allowed_hosts.is_empty() {
        return true;
    }
    let Some(Ok(host)) = headers.get(header::HOST).map(|v| v.to_str()) else {
        return false;
    };
    let Ok(authority) = host.parse::<axum::http::uri::Authority>() else {
        return false;
    };
    let name = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    allowed_hosts.iter().any(|allowed| {
        let allowed = allowed.to_ascii_lowercase();
        allowed == name || allowed == authority.as_str().to_ascii_lowercase()
    })
}

/// The direct calls in flight, by session and JSON-RPC id, so the client's
/// `notifications/cancelled` reaches them as it reaches rmcp's.
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    /// By (session, JSON-RPC id): the registration's serial and its token.
    calls: Mutex<HashMap<(String, String), (u64, CancellationToken)>>,
    serial: AtomicU64,
}

/// Removes a call from [`InFlight`] when it ends (or its future is
/// dropped), unless a later call with the same id took its place.
struct Registered<'a> {
    inflight: &'a InFlight,
    key: (String, String),
    serial: u64,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        if let Ok(mut calls) = self.inflight.calls.lock()
            && calls
                .get(&self.key)
                .is_some_and(|(serial, _)| *serial == self.serial)
        {
            calls.remove(&self.key);
        }
    }
}

impl InFlight {
    fn register(&self, session: &str, id: &Value, token: CancellationToken) -> Registered<'_> {
        let key = (session.to_owned(), id.to_string());
        let serial = self.serial.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut calls) = self.calls.lock() {
            calls.insert(key.clone(), (serial, token));
        }
        Registered {
            inflight: self,
            key,
            serial,
        }
    }

    /// Cancel session `session`'s direct call with JSON-RPC id `id`, if
    /// one runs.
    pub(crate) fn cancel(&self, session: &str, id: &Value) {
        let key = (session.to_owned(), id.to_string());
        if let Ok(calls) = self.calls.lock()
            && let Some((_, token)) = calls.get(&key)
        {
            token.cancel();
        }
    }
}

/// What [`answer`] needs, owned, so a long call can go on inside the
/// response body.
pub(crate) struct DirectCall {
    pub(crate) source: Arc<dyn ToolSource>,
    pub(crate) sessions: Arc<CappedSessions>,
    pub(crate) inflight: Arc<InFlight>,
    pub(crate) caller: McpCaller,
    pub(crate) session: String,
    /// Fires when the MCP session closes.
    pub(crate) closed: CancellationToken,
    /// The JSON-RPC id, the tool and its arguments.
    pub(crate) call: (Value, String, Value),
    /// How long the reply may stay silent (the SSE keep-alive interval).
    pub(crate) keep_alive: Duration,
}

/// Run the call and answer it as one JSON-RPC response. A call that ends
/// within the keep-alive interval is one `Content-Length` reply; a longer
/// one (an approval can take minutes) gets its headers at once and a space
/// every interval until the JSON (leading whitespace is valid JSON), as the
/// SSE path sends keep-alives, so idle timeouts do not cut it and a client
/// that vanished is noticed at the next write. Dropping the response (the
/// client went away) drops the call.
pub(crate) async fn answer(direct: DirectCall) -> Response {
    let keep_alive = direct.keep_alive.max(Duration::from_millis(100));
    let mut reply = Box::pin(run(direct));
    let json_reply = |body: Body| {
        let mut response = Response::new(body);
        *response.status_mut() = StatusCode::OK;
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        response
    };
    tokio::select! {
        body = &mut reply => return json_reply(Body::from(body)),
        () = tokio::time::sleep(keep_alive) => {}
    }
    let mut ticks = tokio::time::interval(keep_alive);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let stream = futures::stream::unfold(Some((reply, ticks)), |state| async move {
        let (mut reply, mut ticks) = state?;
        tokio::select! {
            body = &mut reply => Some((Ok::<_, std::convert::Infallible>(Bytes::from(body)), None)),
            _ = ticks.tick() => Some((Ok(Bytes::from_static(b" ")), Some((reply, ticks)))),
        }
    });
    json_reply(Body::from_stream(stream))
}

/// The call itself, ending in the serialised JSON-RPC response.
async fn run(direct: DirectCall) -> Vec<u8> {
    let DirectCall {
        source,
        sessions,
        inflight,
        caller,
        session,
        closed,
        call: (id, name, arguments),
        keep_alive: _,
    } = direct;
    let _running = sessions.call_running(&session);
    let cancelled = closed.child_token();
    let _registered = inflight.register(&session, &id, cancelled.clone());
    // The session closing cancels through `cancelled`; a dropped response
    // drops this whole future, so no separate disconnect token is needed.
    let never = CancellationToken::new();
    let reply = match run_call(&*source, &caller, name, arguments, &cancelled, &never).await {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
    };
    serde_json::to_vec(&reply).unwrap_or_default()
}

#[cfg(test)]
#[path = "direct_tests.rs"]
mod tests;
