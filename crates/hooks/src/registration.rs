//! How a handler is registered: plugin id, priority, matcher, timeout.

use std::time::Duration;

use talon_tool_catalog::normalize_tool_name;

/// The default timeout of a `before_tool_call` handler. OpenClaw has none;
/// Talon sets one so that a hung hook blocks the call instead of hanging the
/// run (a timed-out handler counts as a block).
pub const DEFAULT_BEFORE_TOOL_CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The default timeout of an observe-only handler (`after_tool_call`).
pub const DEFAULT_AFTER_TOOL_CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Which tool ids a handler or policy applies to. Entries are normalised
/// tool ids (`bash` → `exec`); `*` matches every tool. No matcher means
/// every tool.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolMatcher {
    ids: Option<Vec<String>>,
}

impl ToolMatcher {
    /// Matches every tool.
    pub fn all() -> Self {
        ToolMatcher { ids: None }
    }

    /// Matches the given tool ids (normalised).
    pub fn ids<I, S>(ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let ids: Vec<String> = ids
            .into_iter()
            .map(|s| normalize_tool_name(s.as_ref()))
            .collect();
        if ids.iter().any(|id| id == "*") {
            ToolMatcher { ids: None }
        } else {
            ToolMatcher { ids: Some(ids) }
        }
    }

    /// Whether `tool` (already normalised) is matched.
    pub fn matches(&self, tool: &str) -> bool {
        match &self.ids {
            None => true,
            Some(ids) => ids.iter().any(|id| id == tool),
        }
    }
}

/// The registration of one handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    /// The plugin (or command hook) id; stamped on approvals it requests.
    pub plugin_id: String,
    /// Higher runs first; ties keep registration order.
    pub priority: i32,
    /// The tools it applies to.
    pub matcher: ToolMatcher,
    /// How long it may take; `None` uses the hook's default.
    pub timeout: Option<Duration>,
}

impl Registration {
    /// A registration for `plugin_id` with priority 0, every tool, the
    /// default timeout.
    pub fn new(plugin_id: impl Into<String>) -> Self {
        Registration {
            plugin_id: plugin_id.into(),
            priority: 0,
            matcher: ToolMatcher::all(),
            timeout: None,
        }
    }

    /// Builder: priority.
    pub fn priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }

    /// Builder: matcher.
    pub fn matcher(mut self, matcher: ToolMatcher) -> Self {
        self.matcher = matcher;
        self
    }

    /// Builder: timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

/// Insert keeping the list sorted by priority descending, stable for ties.
pub(crate) fn insert_by_priority<T>(list: &mut Vec<(Registration, T)>, reg: Registration, item: T) {
    let at = list
        .iter()
        .position(|(r, _)| r.priority < reg.priority)
        .unwrap_or(list.len());
    list.insert(at, (reg, item));
}
