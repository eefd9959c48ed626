//! Who is calling, decided by the gateway: the owner list, a session's
//! `senderIsOwner`, the requester the hooks see, and the per-call owner
//! check for sessions several callers share.
//!
//! The rule: a caller is the owner when its token has the owner
//! capability (`owner` or `operator` scope), or when a `runner` token
//! relays a sender that is in the owner list (`gateway.auth.ownerAllowFrom`
//! and OpenClaw's `commands.ownerAllowFrom`). A client never decides it:
//! `senderIsOwner: true` from a caller that is not the owner is refused.

use serde_json::json;
use talon_config::TalonConfig;
use talon_gateway_protocol::SessionParams;
use talon_hooks::Requester;

use crate::auth::Identity;
use crate::rpc::{FORBIDDEN, RpcError};

/// The owner list, normalised (trimmed, lowercase).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct OwnerList {
    senders: Vec<String>,
    wildcard: bool,
}

impl OwnerList {
    /// The list of a configuration.
    pub(crate) fn from_config(config: &TalonConfig) -> Self {
        let mut list = OwnerList::default();
        for s in config.owner_allow_from() {
            if s == "*" {
                list.wildcard = true;
            } else {
                list.senders.push(s.to_lowercase());
            }
        }
        list
    }

    /// Whether `sender` is the owner (listed, case-insensitively, or the
    /// list holds `*`). An empty sender never is.
    pub(crate) fn contains(&self, sender: &str) -> bool {
        let sender = sender.trim().to_lowercase();
        !sender.is_empty() && (self.wildcard || self.senders.contains(&sender))
    }
}

/// A session's `senderIsOwner`, decided from who creates it:
///
/// - an owner-capable token (`owner`, `operator`): the claim as given
///   (`false` narrows), absent means `true`;
/// - any other token: `true` only when the relayed `sender` is in the
///   owner list; a claim of `true` otherwise is refused, never silently
///   kept or dropped.
pub(crate) fn resolve_sender_is_owner(
    caller: &Identity,
    params: &SessionParams,
    owners: &OwnerList,
) -> Result<bool, RpcError> {
    if caller.is_owner() {
        return Ok(params.sender_is_owner.unwrap_or(true));
    }
    let listed = params.sender.as_deref().is_some_and(|s| owners.contains(s));
    match params.sender_is_owner {
        Some(true) if !listed => Err(RpcError::new(
            FORBIDDEN,
            format!(
                "senderIsOwner: token `{}` has the {} scope, which is not the owner, and {}; only an owner or operator token, or a runner relaying a sender listed in gateway.auth.ownerAllowFrom (or commands.ownerAllowFrom), opens an owner session. Omit senderIsOwner to get a non-owner session",
                caller.id,
                caller.scope,
                match params.sender.as_deref() {
                    Some(s) => format!("sender `{s}` is not in the owner list"),
                    None => "no sender is named".to_owned(),
                }
            ),
        )
        .with_data(json!({
            "param": "senderIsOwner",
            "errorCode": "session.owner_claim_refused",
            "tokenId": caller.id,
            "scope": caller.scope.as_str(),
        }))),
        Some(false) => Ok(false),
        _ => Ok(listed),
    }
}

/// The requester a session's hooks see: the channel (default `gateway`),
/// the caller's token id as `accountId` and its scope, the relayed sender
/// and the decided `senderIsOwner`.
pub(crate) fn requester(caller: &Identity, params: &SessionParams) -> Requester {
    Requester {
        channel: Some(
            params
                .channel
                .clone()
                .unwrap_or_else(|| "gateway".to_owned()),
        ),
        account_id: Some(caller.id.clone()),
        scope: Some(caller.scope.as_str().to_owned()),
        sender_id: params.sender.clone(),
        sender_is_owner: params.sender_is_owner,
        role_ids: params.role_ids.clone(),
    }
}

/// Whether `caller` may run an owner-only tool in a session opened with
/// `params`: an owner-capable token may; another caller only in a session
/// whose relayed sender is (still, under the active configuration) in the
/// owner list.
pub(crate) fn may_use_owner_tools(
    caller: &Identity,
    params: &SessionParams,
    owners: &OwnerList,
) -> bool {
    caller.is_owner()
        || (params.sender_is_owner != Some(false)
            && params.sender.as_deref().is_some_and(|s| owners.contains(s)))
}

#[cfg(test)]
#[path = "identity_tests.rs"]
mod tests;
