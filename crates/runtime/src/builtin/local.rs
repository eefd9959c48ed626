//! The local backend (`backend: "local"`), set up on first use: a runtime
//! made from a config always knows `local`, but looks for bubblewrap and
//! compiles the seccomp filter only when a sandboxed run first touches a
//! file or runs a command, so a machine without bubblewrap runs
//! unsandboxed (or Docker-sandboxed) agents as before. A missing `bwrap`
//! fails that run with the fix; it never falls back to the host.
//!
//! A `network: "bridge"` sandbox reaches out through the egress proxy
//! under `web_fetch`'s SSRF rules (`tools.web.fetch.ssrfAllowlist`).

use std::sync::Arc;

use talon_egress::{AllowlistError, SsrfAllowlistConfig, SsrfPolicy};
use talon_sandbox_core::{
    OwnedSandbox, SandboxBackend, SandboxError, SandboxHandle, SandboxRequest,
};
use talon_sandbox_local::{LocalBackend, wants_egress};
use tokio::sync::OnceCell;

/// `local`, built on first use; a failed build is retried by the next call.
#[derive(Debug)]
pub(crate) struct LazyLocalBackend {
    backend: OnceCell<Arc<LocalBackend>>,
    /// The egress proxy's rules: `web_fetch`'s, from
    /// `tools.web.fetch.ssrfAllowlist`. An invalid allowlist fails every
    /// `network: "bridge"` sandbox with its key (never a silent default).
    egress_policy: Result<Arc<SsrfPolicy>, AllowlistError>,
}

impl LazyLocalBackend {
    /// The backend, with the egress rules of `allowlist` (`None`: strict).
    pub(crate) fn new(allowlist: Option<&SsrfAllowlistConfig>) -> Self {
        let egress_policy = match allowlist {
            Some(allow) => SsrfPolicy::from_config(allow).map(Arc::new),
            None => Ok(Arc::new(SsrfPolicy::strict())),
        };
        LazyLocalBackend {
            backend: OnceCell::new(),
            egress_policy,
        }
    }

    async fn backend(&self) -> Result<&Arc<LocalBackend>, SandboxError> {
        let policy = match &self.egress_policy {
            Ok(policy) => Arc::clone(policy),
            // Only `bridge` sandboxes use it, and those are refused below.
            Err(_) => Arc::new(SsrfPolicy::strict()),
        };
        self.backend
            .get_or_try_init(|| async {
                LocalBackend::new().map(|b| Arc::new(b.with_egress_policy(policy)))
            })
            .await
    }
}

#[async_trait::async_trait]
impl SandboxBackend for LazyLocalBackend {
    fn id(&self) -> &str {
        "local"
    }

    async fn ensure(
        &self,
        request: &SandboxRequest,
    ) -> Result<Arc<dyn SandboxHandle>, SandboxError> {
        if wants_egress(&request.config)
            && let Err(e) = &self.egress_policy
        {
            return Err(SandboxError::config(format!(
                "{e} (the local sandbox's network \"bridge\" goes through the same SSRF rules \
                 as web_fetch, so it cannot start until the allowlist is fixed)"
            ))
            .with_source(e.clone()));
        }
        self.backend().await?.ensure(request).await
    }

    /// Nothing to list, and no need for bubblewrap to say so (so
    /// `sandbox.list` on a machine without it reports no error).
    async fn list_owned(&self) -> Result<Vec<OwnedSandbox>, SandboxError> {
        Ok(Vec::new())
    }

    async fn remove(&self, name: &str) -> Result<(), SandboxError> {
        Err(talon_sandbox_local::nothing_to_remove(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_egress_rules_are_web_fetchs_allowlist() {
        let allow = SsrfAllowlistConfig {
            hosts: vec!["intranet.example".to_owned()],
            cidrs: vec!["10.1.0.0/16".to_owned()],
        };
        let lazy = LazyLocalBackend::new(Some(&allow));
        let Ok(policy) = &lazy.egress_policy else {
            panic!("a valid allowlist was refused");
        };
        assert!(policy.host_allowed("intranet.example"));
        assert!(policy.ip_refusal("10.1.2.3".parse().unwrap()).is_none());
        assert!(policy.ip_refusal("10.2.0.1".parse().unwrap()).is_some());
        let strict = LazyLocalBackend::new(None);
        let Ok(policy) = &strict.egress_policy else {
            panic!("strict was refused");
        };
        assert!(policy.ip_refusal("10.1.2.3".parse().unwrap()).is_some());
        let bad = LazyLocalBackend::new(Some(&SsrfAllowlistConfig {
            hosts: vec![],
            cidrs: vec!["not-a-cidr".to_owned()],
        }));
        assert!(bad.egress_policy.is_err());
    }
}
