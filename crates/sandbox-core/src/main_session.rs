//! Which session is an agent's main one: OpenClaw's session-key grammar
//! (`agent:<agentId>:<mainKey>`), `session.mainKey` and `session.scope`.
//!
//! This is the only place Talon decides it. The sandbox's `non-main` mode
//! ([`crate::ResolvedSandboxConfig::should_sandbox`]) and
//! [`crate::explain_runtime_status`] both ask [`MainSession`].

/// The main key used when `session.mainKey` is not set.
pub const DEFAULT_MAIN_KEY: &str = "main";
/// The main session key of every agent when `session.scope` is `global`.
pub const GLOBAL_SESSION_KEY: &str = "global";

/// How main sessions are named: `session.mainKey` (normalised) and whether
/// `session.scope` is `global`.
///
/// A session key is compared trimmed and lowercased. These are aliases of
/// an agent's main session: the empty key, `main`, the configured main key,
/// `agent:<id>:main` and `agent:<id>:<mainKey>`. Under the `global` scope
/// every alias (and `global` itself) is the one main session, `global`.
/// Anything else — a group, channel or DM key
/// (`agent:<id>:telegram:group:42`), a cron or sub-agent key, another
/// agent's main key — is not the main session.
///
/// ```
/// use talon_sandbox_core::MainSession;
///
/// let custom = MainSession::new(Some(" Work "), false);
/// assert!(custom.is_main_session("main", "agent:main:work"));
/// assert!(custom.is_main_session("main", " WORK "));
/// assert!(!custom.is_main_session("main", "agent:main:telegram:group:42"));
/// assert_eq!(custom.main_session_key("Ops"), "agent:ops:work");
///
/// let global = MainSession::new(None, true);
/// assert_eq!(global.main_session_key("main"), "global");
/// assert!(global.is_main_session("main", "agent:main:main"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MainSession {
    main_key: String,
    global: bool,
}

impl Default for MainSession {
    fn default() -> Self {
        MainSession {
            main_key: DEFAULT_MAIN_KEY.to_owned(),
            global: false,
        }
    }
}

/// Trim and lowercase an agent id.
fn normalize_agent(agent_id: &str) -> String {
    agent_id.trim().to_lowercase()
}

/// `session.mainKey` as OpenClaw normalises it: trimmed, lowercased, and
/// `main` when empty or absent.
pub fn normalize_main_key(raw: Option<&str>) -> String {
    let key = raw.map(|k| k.trim().to_lowercase()).unwrap_or_default();
    if key.is_empty() {
        DEFAULT_MAIN_KEY.to_owned()
    } else {
        key
    }
}

impl MainSession {
    /// From `session.mainKey` (normalised with [`normalize_main_key`]) and
    /// whether `session.scope` is `global`.
    pub fn new(main_key: Option<&str>, global: bool) -> Self {
        MainSession {
            main_key: normalize_main_key(main_key),
            global,
        }
    }

    /// The normalised main key (`main` by default).
    pub fn main_key(&self) -> &str {
        &self.main_key
    }

    /// Whether `session.scope` is `global`.
    pub fn is_global(&self) -> bool {
        self.global
    }

    /// The agent's main session key: `agent:<id>:<mainKey>`, or `global`
    /// under the global scope.
    pub fn main_session_key(&self, agent_id: &str) -> String {
        if self.global {
            GLOBAL_SESSION_KEY.to_owned()
        } else {
            format!("agent:{}:{}", normalize_agent(agent_id), self.main_key)
        }
    }

    /// The key a session is compared by: trimmed and lowercased, with every
    /// alias of the agent's main session replaced by
    /// [`MainSession::main_session_key`].
    pub fn comparable_session_key(&self, agent_id: &str, session_key: &str) -> String {
        let key = session_key.trim().to_lowercase();
        let agent = normalize_agent(agent_id);
        let is_alias = key.is_empty()
            || key == DEFAULT_MAIN_KEY
            || key == self.main_key
            || key == format!("agent:{agent}:{DEFAULT_MAIN_KEY}")
            || key == format!("agent:{agent}:{}", self.main_key);
        if is_alias {
            self.main_session_key(&agent)
        } else {
            key
        }
    }

    /// Whether `session_key` names the agent's main session.
    pub fn is_main_session(&self, agent_id: &str, session_key: &str) -> bool {
        self.comparable_session_key(agent_id, session_key) == self.main_session_key(agent_id)
    }
}

#[cfg(test)]
#[path = "main_session_tests.rs"]
mod tests;
