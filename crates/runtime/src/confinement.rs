//! A child run is never less confined than its parent.
//!
//! A child (a sub-agent session, or any run created on behalf of another)
//! may name any session key or agent. Whatever it names, its sandbox must
//! be at most its parent's: [`check_child_confinement`] compares the two
//! decisions and refuses a child that would widen any of the mode (sandboxed
//! or not), the backend, the workspace access, the agent whose files it
//! sees, the network or the binds. Its tools are capped separately (the
//! policy's `inherited` layer).

use talon_sandbox_core::WorkspaceAccess;

use crate::sandbox_decision::RunSandbox;

/// What a child would widen, naming the parent's and the child's value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfinementError {
    /// The parent is sandboxed and the child would run on the host.
    #[error(
        "a child of the sandboxed session `{parent_session}` would run unsandboxed ({reason}); give the child a session key and agent that the configuration sandboxes, or spawn it from an unsandboxed parent"
    )]
    NotSandboxed {
        /// The parent's session key.
        parent_session: String,
        /// Why the configuration would not sandbox the child.
        reason: String,
    },
    /// The child's sandbox setting differs where it may only match or
    /// narrow.
    #[error(
        "a child of the sandboxed session `{parent_session}` would widen its sandbox: {what} is `{child}` for the child but `{parent}` for the parent; a child may only keep or narrow it"
    )]
    Wider {
        /// The parent's session key.
        parent_session: String,
        /// The setting (`backend`, `workspaceAccess`, `agent`, `network`,
        /// `binds`).
        what: &'static str,
        /// The parent's value.
        parent: String,
        /// The child's value.
        child: String,
    },
}

impl ConfinementError {
    /// A stable machine code for the wire.
    pub fn code(&self) -> &'static str {
        match self {
            ConfinementError::NotSandboxed { .. } => "child_unsandboxed",
            ConfinementError::Wider { .. } => "child_sandbox_wider",
        }
    }
}

fn rank(access: WorkspaceAccess) -> u8 {
    match access {
        WorkspaceAccess::None => 0,
        WorkspaceAccess::Ro => 1,
        WorkspaceAccess::Rw => 2,
    }
}

/// Refuse a child whose sandbox is wider than its parent's.
///
/// An unsandboxed parent has nothing to protect (its child may be anything
/// the configuration gives it). A sandboxed parent's child must be
/// sandboxed, on the same backend, with no more workspace access, on the
/// same agent unless the child sees no agent files at all
/// (`workspaceAccess: none`), on the parent's network (or `none`), and with
/// only binds the parent has, none of them writable where the parent's is
/// read-only.
pub fn check_child_confinement(
    parent: &RunSandbox,
    child: &RunSandbox,
) -> Result<(), ConfinementError> {
    if !parent.sandboxed {
        return Ok(());
    }
    let parent_session = parent.status.session_key.clone();
    if !child.sandboxed {
        return Err(ConfinementError::NotSandboxed {
            parent_session,
            reason: child.reason.clone(),
        });
    }
    let wider = |what, p: &str, c: &str| ConfinementError::Wider {
        parent_session: parent_session.clone(),
        what,
        parent: p.to_owned(),
        child: c.to_owned(),
    };
    let (p, c) = (&parent.config, &child.config);
    if p.backend != c.backend {
        return Err(wider("backend", &p.backend, &c.backend));
    }
    if rank(c.workspace_access) > rank(p.workspace_access) {
        return Err(wider(
            "workspaceAccess",
            p.workspace_access.as_str(),
            c.workspace_access.as_str(),
        ));
    }
    if p.agent_id != c.agent_id && c.workspace_access != WorkspaceAccess::None {
        return Err(wider("agent", &p.agent_id, &c.agent_id));
    }
    let (pn, cn) = (p.docker.network.trim(), c.docker.network.trim());
    if !cn.eq_ignore_ascii_case("none") && !cn.eq_ignore_ascii_case(pn) {
        return Err(wider("network", pn, cn));
    }
    for bind in &c.docker.binds {
        if !parent_allows_bind(&p.docker.binds, bind) {
            return Err(wider("binds", &p.docker.binds.join(", "), bind));
        }
    }
    Ok(())
}

/// Whether `bind` is one of the parent's binds, or a read-only version of
/// one of them.
fn parent_allows_bind(parent: &[String], bind: &str) -> bool {
    let bind = bind.trim();
    parent.iter().map(|b| b.trim()).any(|b| {
        b == bind
            || bind
                .strip_suffix(":ro")
                .is_some_and(|base| b == base || b.strip_suffix(":rw") == Some(base))
    })
}

#[cfg(test)]
#[path = "confinement_tests.rs"]
mod tests;
