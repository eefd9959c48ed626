//! A gateway WS/HTTP frame from a client: the JSON-RPC envelope is checked
//! strictly, then the method and params are decoded into the typed
//! `Request`; the same bytes as a `POST /tools/invoke` body and as an
//! MCP client message on `/mcp` (rmcp's decoder, which the gateway's MCP
//! endpoint uses). Hostile input never panics; an accepted request names a
//! declared method, and the bearer and session-key parsers accept nothing
//! with control characters.
#![no_main]

use libfuzzer_sys::fuzz_target;
use talon_gateway_protocol::frame::parse_request;
use talon_gateway_protocol::{MethodName, Request, bearer_token, session_key};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = bearer_token(Some(text));
        let _ = session_key(Some(text), Some(text));
    }
    if let Ok(body) = serde_json::from_slice::<talon_gateway_protocol::HttpInvokeRequest>(data) {
        // What the HTTP handler reads back out of it round-trips.
        let again = serde_json::to_value(&body).expect("a decoded body serialises");
        let back: talon_gateway_protocol::HttpInvokeRequest =
            serde_json::from_value(again).expect("a serialised body decodes");
        assert_eq!(back, body);
    }
    let _ = serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(data);
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let Ok(raw) = parse_request(value) else {
        return;
    };
    if let Ok(request) = Request::parse(&raw.method, raw.params) {
        assert!(MethodName::from_name(&raw.method).is_some());
        let _ = request;
    }
});
