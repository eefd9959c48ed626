//! `tools.*`: a session's table, and one call through the call path.

use talon_gateway_protocol::{
    CallResult, ToolDescription, ToolsInvokeParams, ToolsListParams, ToolsListResponse,
};

use crate::gateway::Generation;
use crate::handlers::sessions::SessionsHandler;
use crate::rpc::RpcError;

/// `tools.list`.
pub(crate) async fn list(
    sessions: &SessionsHandler,
    g: &Generation,
    p: ToolsListParams,
) -> Result<ToolsListResponse, RpcError> {
    let s = sessions.session_or_main(g, &p.session_key)?;
    let built = s.table(g.id, &g.runtime).await;
    Ok(ToolsListResponse {
        session_key: s.info.session_key.clone(),
        generation: built.generation,
        tools: built
            .table
            .definitions()
            .into_iter()
            .map(|d| ToolDescription {
                name: d.name,
                description: d.description,
                parameters: d.parameters,
            })
            .collect(),
        audit: p.audit.then(|| to_json(&built.table.policy())),
        timings: p.audit.then(|| to_json(&built.table.timings())),
    })
}

/// `tools.invoke` (the WebSocket handler already runs in its own task,
/// which outlives the connection: no second task is needed to keep the
/// call's journal records together).
pub(crate) async fn invoke(
    gw: &crate::Gateway,
    p: ToolsInvokeParams,
) -> Result<CallResult, RpcError> {
    let params = if p.params.is_null() {
        serde_json::json!({})
    } else {
        p.params
    };
    let report = gw
        .invoke(&p.session_key, p.tool_call_id, &p.tool_name, params)
        .await?;
    Ok(report.to_result())
}

/// A value as JSON (`null` if it cannot be serialised).
fn to_json<T: serde::Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}
