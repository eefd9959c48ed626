//! `security.audit`: `talon-audit` over the active configuration, the
//! gateway's state dir and the address it actually listens on.

use std::path::PathBuf;
use std::sync::Arc;

use talon_audit::{AuditInput, AuditOptions, AuditReport};
use talon_gateway_protocol::SecurityAuditParams;

use crate::gateway::Generation;
use crate::handlers::config::ConfigHandler;
use crate::rpc::RpcError;

/// `security.audit`: the same checks as `talon security audit`, run off
/// the async threads (it reads files and the cron store).
pub(crate) async fn audit(
    g: &Generation,
    config: &ConfigHandler,
    p: SecurityAuditParams,
) -> Result<AuditReport, RpcError> {
    let talon = Arc::clone(&g.config);
    let origin = g.origin.clone();
    let config_file: Option<PathBuf> = config.location.path().map(PathBuf::from);
    let state_dir = config.options.state_dir.clone();
    let listen = config.listen;
    let deep = p.deep.unwrap_or(false);
    tokio::task::spawn_blocking(move || {
        let home = talon_config::home_dir();
        let bundled = std::env::var_os("TALON_BUNDLED_SKILLS_DIR")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        let mut input = AuditInput::new(&talon, &origin, &state_dir);
        input.config_file = config_file.as_deref();
        input.home = home.as_deref();
        input.home_dirs = talon_audit::process_home_dirs();
        input.gateway_listen = Some(listen);
        input.bundled_skills = bundled.as_deref();
        input.options = AuditOptions { deep };
        talon_audit::audit(&input).map_err(|e| RpcError::internal(e.to_string()))
    })
    .await
    .map_err(|e| RpcError::internal(format!("the audit task failed: {e}")))?
}
