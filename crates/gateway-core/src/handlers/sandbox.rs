//! `sandbox.*`: a session's sandbox decision, and the sandboxes Talon owns
//! on the active configuration's backends.

use serde_json::{Value, json};
use talon_gateway_protocol::{
    SandboxBackendError, SandboxExplainResponse, SandboxListResponse, SandboxRecreateParams,
    SandboxRecreateResponse, SandboxRemoval, SessionRef,
};

use crate::gateway::Generation;
use crate::handlers::sessions::SessionsHandler;
use crate::rpc::RpcError;

/// `sandbox.explain`.
pub(crate) async fn explain(
    sessions: &SessionsHandler,
    g: &Generation,
    p: &SessionRef,
) -> Result<SandboxExplainResponse, RpcError> {
    let s = sessions.session_or_main(g, &p.session_key)?;
    let built = s.table(g.id, &g.runtime).await;
    let resolved = g.config.resolved_sandbox(&s.info.agent_id);
    let sandboxed = built.table.sandbox().sandboxed;
    // Names only, never values (talon_exec_env::EnvPolicyExplain).
    let exec_env = match g.config.exec_env_policy(&s.info.agent_id) {
        Ok(policy) => json!(policy.explain_run(sandboxed)),
        Err(e) => json!({"error": format!("tools.exec.env.{e}")}),
    };
    let removed = built
        .table
        .policy()
        .layers
        .iter()
        .filter(|l| l.id.contains("sandbox"))
        .flat_map(|l| {
            l.removed.iter().map(move |r| SandboxRemoval {
                layer: l.id.to_string(),
                removal: json!(r),
            })
        })
        .collect();
    Ok(SandboxExplainResponse {
        session_key: s.info.session_key.clone(),
        agent_id: s.info.agent_id.clone(),
        sandboxed,
        decision: json!(built.table.sandbox().summary()),
        sandbox: json!(resolved),
        removed_by_sandbox_policy: removed,
        exec_env,
    })
}

/// `sandbox.list` (each backend gets 10 s).
pub(crate) async fn list(g: &Generation) -> SandboxListResponse {
    let Some(registry) = g.runtime.sandbox_backends() else {
        return SandboxListResponse {
            sandboxes: Vec::new(),
            errors: Vec::new(),
        };
    };
    let mut sandboxes: Vec<Value> = Vec::new();
    let mut errors = Vec::new();
    for id in registry.ids() {
        let Some(b) = registry.get(&id) else { continue };
        match tokio::time::timeout(std::time::Duration::from_secs(10), b.list_owned()).await {
            Ok(Ok(list)) => sandboxes.extend(list.into_iter().map(|s| json!(s))),
            Ok(Err(e)) => errors.push(SandboxBackendError {
                backend: id,
                error: e.to_string(),
            }),
            Err(_) => errors.push(SandboxBackendError {
                backend: id,
                error: "timed out".into(),
            }),
        }
    }
    SandboxListResponse { sandboxes, errors }
}

/// `sandbox.recreate`: removes a sandbox this gateway owns; the next
/// sandboxed call recreates it.
pub(crate) async fn recreate(
    g: &Generation,
    p: SandboxRecreateParams,
) -> Result<SandboxRecreateResponse, RpcError> {
    let registry = g
        .runtime
        .sandbox_backends()
        .ok_or_else(|| RpcError::internal("no sandbox backends in this runtime"))?;
    let ids = registry.ids();
    let id = match p.backend {
        Some(b) => b,
        None if ids.len() == 1 => ids.first().cloned().unwrap_or_default(),
        None => {
            return Err(RpcError::params(format!(
                "name the backend (one of: {})",
                ids.join(", ")
            )));
        }
    };
    let backend = registry
        .get(&id)
        .ok_or_else(|| RpcError::not_found(format!("no sandbox backend `{id}`")))?;
    // Only sandboxes this gateway owns may be removed.
    let owned = backend
        .list_owned()
        .await
        .map_err(|e| RpcError::internal(e.to_string()))?;
    if !owned.iter().any(|s| s.name == p.name) {
        return Err(RpcError::not_found(format!(
            "`{}` is not a sandbox owned by Talon on `{id}` (sandbox.list shows them)",
            p.name
        )));
    }
    backend
        .remove(&p.name)
        .await
        .map_err(|e| RpcError::internal(e.to_string()))?;
    Ok(SandboxRecreateResponse {
        removed: p.name,
        backend: id,
        note: "the next sandboxed call recreates it with the current config".into(),
    })
}
