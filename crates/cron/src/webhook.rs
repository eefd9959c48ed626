//! The egress rules for `delivery.mode: "webhook"`: a job's webhook URL
//! passes the same guard as every other outbound connection, when the job
//! is stored and again when a run hands it to the runner, so a runner is
//! never told to post a run's result to a private or metadata address.

use std::sync::Arc;

use talon_egress::{AllowlistError, EgressGuard, SsrfAllowlistConfig, SsrfPolicy};

use crate::error::{CronError, Result};
use crate::job::{Delivery, DeliveryMode};

/// The config key that opens private webhook targets.
pub const WEBHOOK_ALLOWLIST_KEY: &str = "cron.webhookSsrfAllowlist";

/// The compiled webhook rules (`cron.webhookSsrfAllowlist`). A broken
/// allowlist refuses every webhook with its error: it never falls back to
/// anything wider.
#[derive(Debug, Clone)]
pub struct WebhookGuard {
    guard: std::result::Result<EgressGuard, AllowlistError>,
}

impl Default for WebhookGuard {
    fn default() -> Self {
        Self::from_config(None)
    }
}

impl WebhookGuard {
    /// The rules from `cron.webhookSsrfAllowlist` (strict when unset).
    pub fn from_config(allow: Option<&SsrfAllowlistConfig>) -> Self {
        let policy = match allow {
            None => Ok(SsrfPolicy::strict()),
            Some(a) => SsrfPolicy::from_config_at(a, WEBHOOK_ALLOWLIST_KEY),
        };
        WebhookGuard {
            guard: policy.map(|p| {
                EgressGuard::new(Arc::new(p), Arc::new(talon_egress::SystemResolver)).with_opt_in(
                    format!(
                        "add its host to `{WEBHOOK_ALLOWLIST_KEY}.hosts` or its network to `{WEBHOOK_ALLOWLIST_KEY}.cidrs`"
                    ),
                )
            }),
        }
    }

    /// Check a job's delivery: a webhook URL must parse and pass the
    /// egress guard's URL rules (scheme, userinfo, blocked and metadata
    /// names, IP literals). `field` is where the delivery was read
    /// (`delivery`, `patch.delivery`, `job.delivery`).
    pub fn vet(&self, delivery: Option<&Delivery>, field: &str) -> Result<()> {
        let Some(d) = delivery.filter(|d| d.mode == DeliveryMode::Webhook) else {
            return Ok(());
        };
        let field = format!("{field}.to");
        let to = d.to.as_deref().unwrap_or("");
        let url = url::Url::parse(to).map_err(|e| {
            CronError::invalid(
                field.clone(),
                format!("`{to}` is not a URL ({e}); write e.g. `https://hooks.example.com/cron`"),
            )
        })?;
        let guard = self.guard.as_ref().map_err(|e| {
            CronError::invalid(
                field.clone(),
                format!("webhook targets cannot be checked: {e}"),
            )
        })?;
        guard
            .check_url(&url)
            .map_err(|blocked| CronError::Egress { field, blocked })
    }
}
