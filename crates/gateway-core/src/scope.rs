//! Token scopes: the protocol's [`Scope`]. The least scope of each method
//! is declared with the method in `talon-gateway-protocol`
//! ([`talon_gateway_protocol::MethodName::scope`]), never in a table here.

pub use talon_gateway_protocol::{Scope, required_scope};
