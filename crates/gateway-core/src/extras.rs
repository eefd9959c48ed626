//! `skills.*` and `sandbox.*`.

use serde_json::Value;

use crate::gateway::Gateway;
use crate::rpc::{METHOD_NOT_FOUND, RpcError};

impl Gateway {
    pub(crate) async fn extra_method(
        &self,
        method: &str,
        _params: Value,
    ) -> Result<Value, RpcError> {
        Err(RpcError::new(
            METHOD_NOT_FOUND,
            format!("`{method}` is not available in this build of the gateway"),
        ))
    }
}

/// Sandbox containers this gateway knows of (sessions running sandboxed
/// with a built table).
pub(crate) fn sandbox_container_count(gw: &Gateway) -> usize {
    gw.inner
        .sessions
        .list()
        .iter()
        .filter(|s| s.info.sandboxed && s.current_table().is_some())
        .count()
}
