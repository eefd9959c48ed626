//! `approvals.*`: the broker and what a crash left pending.

use std::sync::Arc;

use talon_gateway_protocol::{
    ApprovalsListResponse, ApprovalsResolveParams, ApprovalsResolveResponse,
};
use talon_hooks::approval::{
    ApprovalBinding, ApprovalBroker as _, ApprovalDecision, DynApprovalBroker, ResolveOutcome,
};

use crate::rpc::RpcError;

/// The approval broker the tables' gates ask, and the approvals denied at
/// start.
pub(crate) struct ApprovalsHandler {
    pub(crate) broker: Arc<DynApprovalBroker>,
    /// Approval ids a crash left pending, denied at this start.
    pub(crate) denied_at_start: Vec<String>,
}

impl ApprovalsHandler {
    pub(crate) fn pending_count(&self) -> usize {
        self.broker.pending().len()
    }

    /// `approvals.list` (with a shared store, every gateway's requests).
    pub(crate) fn list(&self) -> Result<ApprovalsListResponse, RpcError> {
        let approvals = self
            .broker
            .try_pending()
            .map_err(approvals_error)?
            .iter()
            .map(|a| serde_json::to_value(a).unwrap_or(serde_json::Value::Null))
            .collect();
        Ok(ApprovalsListResponse { approvals })
    }

    /// `approvals.resolve`.
    pub(crate) fn resolve(
        &self,
        p: ApprovalsResolveParams,
    ) -> Result<ApprovalsResolveResponse, RpcError> {
        let decision = ApprovalDecision::parse(p.decision.trim())
            .filter(|d| d.is_user_decision())
            .ok_or_else(|| {
                RpcError::params(format!(
                    "decision `{}` is not allow-once, allow-always or deny",
                    p.decision
                ))
            })?;
        let binding = match (p.call_id, p.params_hash) {
            (Some(call_id), Some(params_hash)) => Some(ApprovalBinding {
                call_id,
                params_hash,
            }),
            (None, None) => None,
            _ => {
                return Err(RpcError::params(
                    "give both callId and paramsHash to bind the decision, or neither",
                ));
            }
        };
        let outcome = self
            .broker
            .try_resolve(&p.id, decision, binding.as_ref())
            .map_err(approvals_error)?;
        Ok(ApprovalsResolveResponse {
            id: p.id,
            outcome: outcome.as_str().to_owned(),
            applied: outcome == ResolveOutcome::Applied,
        })
    }
}

/// A store failure: `unavailable` when the shared database cannot be
/// reached (nothing was decided; retry), internal otherwise.
fn approvals_error(e: talon_hooks::Error) -> RpcError {
    if e.is_unavailable() {
        RpcError::unavailable(format!("approvals: {e}"))
    } else {
        RpcError::internal(format!("approvals: {e}"))
    }
}
