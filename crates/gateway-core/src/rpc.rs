//! JSON-RPC 2.0 framing and error codes: the protocol crate's
//! [`talon_gateway_protocol::frame`], re-exported for this crate's users.

pub use talon_gateway_protocol::frame::*;
