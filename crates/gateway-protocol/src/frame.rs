//! JSON-RPC 2.0 frames on `/ws`: parsing requests, building responses and
//! notifications, and the error codes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// Invalid JSON was received.
pub const PARSE_ERROR: i64 = -32700;
/// The JSON is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters.
pub const INVALID_PARAMS: i64 = -32602;
/// Internal error.
pub const INTERNAL_ERROR: i64 = -32603;
/// The token's scope does not cover the method.
pub const FORBIDDEN: i64 = -32001;
/// The thing named (session, approval, job, task) does not exist.
pub const NOT_FOUND: i64 = -32002;
/// The gateway is shutting down or overloaded; retry elsewhere or later.
pub const UNAVAILABLE: i64 = -32003;
/// The token was revoked by a reload.
pub const UNAUTHORIZED: i64 = -32004;

/// Every error code with its name and meaning, for the protocol docs.
pub const ERROR_CODES: [(i64, &str, &str); 9] = [
    (
        PARSE_ERROR,
        "parse error",
        "the frame is not valid JSON (or a binary frame is not UTF-8)",
    ),
    (
        INVALID_REQUEST,
        "invalid request",
        "not a JSON-RPC 2.0 request object, an empty batch, or a batch over 64 requests",
    ),
    (
        METHOD_NOT_FOUND,
        "method not found",
        "no method of that name",
    ),
    (
        INVALID_PARAMS,
        "invalid params",
        "the params do not fit the method's params type (the message names the field), or a value is refused; `data.param` names the parameter when known",
    ),
    (
        INTERNAL_ERROR,
        "internal error",
        "the gateway failed; the message says what",
    ),
    (
        FORBIDDEN,
        "forbidden",
        "the token's scope does not cover the method; `data.required` and `data.scope` say which",
    ),
    (
        NOT_FOUND,
        "not found",
        "the session, approval, job, task or sandbox named does not exist",
    ),
    (
        UNAVAILABLE,
        "unavailable",
        "the gateway is shutting down or at a limit; retry later or elsewhere",
    ),
    (
        UNAUTHORIZED,
        "unauthorized",
        "the connection's token was revoked by a reload; reconnect with a current token",
    ),
];

/// An error answer (the `error` member of a response frame).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RpcError {
    /// The code: a JSON-RPC code (`-32700`…`-32603`) or a gateway code
    /// (`-32001` forbidden, `-32002` not found, `-32003` unavailable,
    /// `-32004` unauthorized).
    pub code: i64,
    /// A sentence saying what is wrong and how to fix it.
    pub message: String,
    /// Structured detail (`param`: the parameter at fault; `required` and
    /// `scope` for a forbidden call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// An error.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Invalid params.
    pub fn params(message: impl Into<String>) -> Self {
        RpcError::new(INVALID_PARAMS, message)
    }

    /// Not found.
    pub fn not_found(message: impl Into<String>) -> Self {
        RpcError::new(NOT_FOUND, message)
    }

    /// Internal.
    pub fn internal(message: impl Into<String>) -> Self {
        RpcError::new(INTERNAL_ERROR, message)
    }

    /// Unavailable (shutting down, at a limit).
    pub fn unavailable(message: impl Into<String>) -> Self {
        RpcError::new(UNAVAILABLE, message)
    }

    /// Builder: structured detail.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// The error as its JSON object.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("code".into(), json!(self.code));
        m.insert("message".into(), json!(self.message));
        if let Some(d) = &self.data {
            m.insert("data".into(), d.clone());
        }
        Value::Object(m)
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for RpcError {}

/// One request frame as read off the wire, before its method is known.
#[derive(Debug, Clone, PartialEq)]
pub struct RawRequest {
    /// The id; `None` for a notification (no answer is sent).
    pub id: Option<Value>,
    /// The method.
    pub method: String,
    /// The params (`{}` when absent).
    pub params: Value,
}

/// Check one request object. On error, returns the id to answer with
/// (`null` when none could be read) and the error.
pub fn parse_request(value: Value) -> Result<RawRequest, Box<(Value, RpcError)>> {
    let Value::Object(mut obj) = value else {
        return Err(Box::new((
            Value::Null,
            RpcError::new(INVALID_REQUEST, "a request must be a JSON object"),
        )));
    };
    let id = obj.remove("id");
    let answer_id = id.clone().unwrap_or(Value::Null);
    if let Some(i) = &id
        && !(i.is_string() || i.is_number() || i.is_null())
    {
        return Err(Box::new((
            Value::Null,
            RpcError::new(INVALID_REQUEST, "`id` must be a string, a number or null"),
        )));
    }
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(Box::new((
            answer_id,
            RpcError::new(INVALID_REQUEST, "`jsonrpc` must be \"2.0\""),
        )));
    }
    let method = match obj.remove("method") {
        Some(Value::String(m)) => m,
        _ => {
            return Err(Box::new((
                answer_id,
                RpcError::new(INVALID_REQUEST, "`method` must be a string"),
            )));
        }
    };
    let params = match obj.remove("params") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(p @ (Value::Object(_) | Value::Array(_))) => p,
        Some(_) => {
            return Err(Box::new((
                answer_id,
                RpcError::new(INVALID_REQUEST, "`params` must be an object or an array"),
            )));
        }
    };
    Ok(RawRequest { id, method, params })
}

/// A request frame (`{"jsonrpc": "2.0", "id", "method", "params"}`).
pub fn request(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A success response.
pub fn response(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error response.
pub fn error_response(id: Value, error: &RpcError) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": error.to_value()})
}

/// A server-pushed notification.
pub fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// A response frame as a client reads it: `result` or `error`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResponseFrame {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The request's id.
    pub id: Value,
    /// The method's response (see the method's response type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// Why the request failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RpcError>,
}

impl ResponseFrame {
    /// `Ok(result)` or `Err(error)` (a frame with neither is an internal
    /// error).
    pub fn into_result(self) -> Result<Value, RpcError> {
        match (self.error, self.result) {
            (Some(e), _) => Err(e),
            (None, Some(r)) => Ok(r),
            (None, None) => Ok(Value::Null),
        }
    }
}

#[cfg(test)]
#[path = "frame_tests.rs"]
mod tests;
