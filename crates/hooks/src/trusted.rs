//! Trusted tool policies: host-level gates that run before ordinary
//! `before_tool_call` handlers (built-ins first, then plugins in
//! registration order).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::error::{Error, HookError, Result};
use crate::event::{ApprovalSpec, BeforeToolCallEvent, HookContext};
use crate::registration::{DEFAULT_BEFORE_TOOL_CALL_TIMEOUT, ToolMatcher};

/// What a trusted policy decides. All fields absent means no decision.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrustedDecision {
    /// `Some(false)` blocks, with `reason` or `blocked by <id>`.
    pub allow: Option<bool>,
    /// `Some(true)` blocks (terminal).
    pub block: Option<bool>,
    /// The reason shown when blocking.
    pub reason: Option<String>,
    /// Replacement parameters for later policies and hooks.
    pub params: Option<Map<String, Value>>,
    /// Ask a human first (the first request wins).
    pub require_approval: Option<ApprovalSpec>,
}

impl TrustedDecision {
    /// A block with a reason.
    pub fn block(reason: impl Into<String>) -> Self {
        TrustedDecision {
            block: Some(true),
            reason: Some(reason.into()),
            ..Self::default()
        }
    }
}

/// A host-level policy.
#[async_trait::async_trait]
pub trait TrustedToolPolicy: Send + Sync {
    /// Decide on one call. An error blocks the call (fail closed).
    async fn evaluate(
        &self,
        event: &BeforeToolCallEvent,
        ctx: &HookContext,
    ) -> std::result::Result<Option<TrustedDecision>, HookError>;
}

/// What a plugin declares in its manifest about trusted policies.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PluginDeclaration {
    /// The plugin id.
    pub id: String,
    /// Whether the operator enabled the plugin explicitly.
    pub enabled: bool,
    /// The policy ids it may register (`contracts.trustedToolPolicies`).
    pub trusted_policy_ids: Vec<String>,
}

pub(crate) struct RegisteredPolicy {
    /// `builtin/<id>` or `<plugin>/<id>`.
    pub(crate) full_id: String,
    pub(crate) matcher: ToolMatcher,
    pub(crate) timeout: Duration,
    pub(crate) policy: Arc<dyn TrustedToolPolicy>,
}

/// The trusted policies, in run order.
#[derive(Default)]
pub struct TrustedPolicies {
    builtin: Vec<RegisteredPolicy>,
    plugins: Vec<RegisteredPolicy>,
}

impl std::fmt::Debug for TrustedPolicies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.ids()).finish()
    }
}

impl TrustedPolicies {
    /// Register a built-in policy (runs before every plugin policy).
    pub fn register_builtin(
        &mut self,
        id: &str,
        matcher: ToolMatcher,
        policy: Arc<dyn TrustedToolPolicy>,
    ) -> Result<()> {
        let full_id = format!("builtin/{id}");
        self.check_unique(&full_id)?;
        self.builtin.push(RegisteredPolicy {
            full_id,
            matcher,
            timeout: DEFAULT_BEFORE_TOOL_CALL_TIMEOUT,
            policy,
        });
        Ok(())
    }

    /// Register a plugin's policy. Refused unless the plugin is enabled and
    /// declared `policy_id`; ids are scoped by plugin, so two plugins may
    /// reuse a local id.
    pub fn register(
        &mut self,
        plugin: &PluginDeclaration,
        policy_id: &str,
        matcher: ToolMatcher,
        policy: Arc<dyn TrustedToolPolicy>,
    ) -> Result<()> {
        if !plugin.enabled {
            return Err(Error::Registration(format!(
                "plugin `{}` is not enabled; only explicitly enabled plugins may register trusted tool policies",
                plugin.id
            )));
        }
        if !plugin.trusted_policy_ids.iter().any(|p| p == policy_id) {
            return Err(Error::UndeclaredTrustedPolicy {
                plugin_id: plugin.id.clone(),
                policy_id: policy_id.to_owned(),
            });
        }
        let full_id = format!("{}/{policy_id}", plugin.id);
        self.check_unique(&full_id)?;
        self.plugins.push(RegisteredPolicy {
            full_id,
            matcher,
            timeout: DEFAULT_BEFORE_TOOL_CALL_TIMEOUT,
            policy,
        });
        Ok(())
    }

    fn check_unique(&self, full_id: &str) -> Result<()> {
        if self.ids().any(|id| id == full_id) {
            return Err(Error::Registration(format!(
                "trusted tool policy `{full_id}` is already registered"
            )));
        }
        Ok(())
    }

    /// The registered ids in run order.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.builtin
            .iter()
            .chain(self.plugins.iter())
            .map(|p| p.full_id.as_str())
    }

    /// Whether none is registered.
    pub fn is_empty(&self) -> bool {
        self.builtin.is_empty() && self.plugins.is_empty()
    }

    pub(crate) fn in_order(&self) -> impl Iterator<Item = &RegisteredPolicy> {
        self.builtin.iter().chain(self.plugins.iter())
    }
}
