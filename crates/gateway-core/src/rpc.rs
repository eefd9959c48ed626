//! JSON-RPC 2.0 frames: parsing requests, building responses and
//! notifications, and the error codes.

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

/// An error answer.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The code.
    pub code: i64,
    /// A sentence saying what is wrong and how to fix it.
    pub message: String,
    /// Structured detail.
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

    /// Builder: structured detail.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("code".into(), json!(self.code));
        m.insert("message".into(), json!(self.message));
        if let Some(d) = &self.data {
            m.insert("data".into(), d.clone());
        }
        Value::Object(m)
    }
}

/// One parsed request.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The id; `None` for a notification (no answer is sent).
    pub id: Option<Value>,
    /// The method.
    pub method: String,
    /// The params (`{}` when absent).
    pub params: Value,
}

/// Check one request object. On error, returns the id to answer with
/// (`null` when none could be read) and the error.
pub fn parse_request(value: Value) -> Result<Request, Box<(Value, RpcError)>> {
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
    Ok(Request { id, method, params })
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

#[cfg(test)]
#[path = "rpc_tests.rs"]
mod tests;
