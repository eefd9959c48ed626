//! [`EnvPolicy`]: the compiled environment policy every child environment
//! is built from.

use std::collections::BTreeMap;
use std::ffi::OsString;

use serde::Serialize;

use crate::base::{self, DEFAULT_EXCLUDES, TALON_READ};
use crate::classify::trim_key;
use crate::config::{AgentExecEnvConfig, EnvConfigError, ExecEnvConfig, InheritMode};
use crate::inherited::filter_inherited_env;
use crate::pattern::{NamePattern, any_match};

/// Why an inherited variable is not passed on (for `sandbox explain` and
/// tests; never logged with a value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Withheld {
    /// `inherit` is `none`, or `core` and the name is not a core one.
    NotInherited,
    /// It matches a built-in credential pattern.
    DefaultExclude,
    /// Talon itself reads it.
    TalonRead,
    /// It matches a configured `exclude`.
    Exclude,
    /// It matches no configured `includeOnly` pattern.
    NotIncluded,
    /// OpenClaw's host env lists block it.
    Blocked,
}

/// The environment policy of one agent: the inherited base (`inherit`,
/// then the built-in excludes, Talon's own variables, the configured
/// excludes and `includeOnly`, then OpenClaw's blocked lists), then the
/// configured `set` variables. A model's own `env` is checked separately
/// ([`check_model_env`](crate::check_model_env)) and layered on top by the
/// caller.
///
/// ```
/// use talon_exec_env::EnvPolicy;
///
/// let policy = EnvPolicy::default();
/// let env = policy.host_env([
///     ("PATH".to_owned(), "/usr/bin".to_owned()),
///     ("OPENAI_API_KEY".to_owned(), "sk-fake".to_owned()),
///     ("TALON_GATEWAY_TOKEN".to_owned(), "t".to_owned()),
///     ("EDITOR".to_owned(), "vi".to_owned()),
/// ]);
/// assert_eq!(env.keys().collect::<Vec<_>>(), ["PATH"]);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct EnvPolicy {
    inherit: InheritMode,
    default_exclude: Vec<NamePattern>,
    talon_read: Vec<NamePattern>,
    exclude: Vec<NamePattern>,
    /// Each layer (global, agent) that gave `includeOnly`; a name must
    /// match every layer.
    include_only: Vec<Vec<NamePattern>>,
    set: BTreeMap<String, String>,
}

/// The `set` values are not shown (they may be expanded secrets): only
/// their names.
impl std::fmt::Debug for EnvPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnvPolicy")
            .field("inherit", &self.inherit)
            .field("exclude", &self.exclude)
            .field("include_only", &self.include_only)
            .field("set", &self.set.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Default for EnvPolicy {
    /// `inherit: core`, the built-in excludes, nothing set.
    fn default() -> Self {
        EnvPolicy {
            inherit: InheritMode::Core,
            default_exclude: base::default_excludes(),
            talon_read: base::talon_read(),
            exclude: Vec::new(),
            include_only: Vec::new(),
            set: BTreeMap::new(),
        }
    }
}

fn compile(list: &[String], key: &str) -> Result<Vec<NamePattern>, EnvConfigError> {
    list.iter()
        .enumerate()
        .map(|(i, p)| {
            NamePattern::parse(p).map_err(|e| EnvConfigError {
                key: format!("{key}[{i}]"),
                message: e.to_string(),
            })
        })
        .collect()
}

impl EnvPolicy {
    /// The policy of `global` with an agent's section layered over it.
    /// Fails on the first problem [`ExecEnvConfig::validate`] reports
    /// (a loaded config has none).
    pub fn from_config(
        global: &ExecEnvConfig,
        agent: Option<&AgentExecEnvConfig>,
    ) -> Result<Self, EnvConfigError> {
        if let Some(first) = global.validate().into_iter().next() {
            return Err(first);
        }
        if let Some(first) = agent.and_then(|a| a.validate().into_iter().next()) {
            return Err(first);
        }
        let mut policy = EnvPolicy {
            inherit: global.inherit,
            exclude: compile(&global.exclude, "exclude")?,
            set: global.set.clone(),
            ..EnvPolicy::default()
        };
        if let Some(list) = &global.include_only {
            policy.include_only.push(compile(list, "includeOnly")?);
        }
        if let Some(agent) = agent {
            if let Some(mode) = agent.inherit {
                policy.inherit = mode;
            }
            policy.exclude.extend(compile(&agent.exclude, "exclude")?);
            if let Some(list) = &agent.include_only {
                policy.include_only.push(compile(list, "includeOnly")?);
            }
            policy
                .set
                .extend(agent.set.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        Ok(policy)
    }

    /// The inherit mode.
    pub fn inherit(&self) -> InheritMode {
        self.inherit
    }

    /// The configured variables every child gets.
    pub fn set_vars(&self) -> &BTreeMap<String, String> {
        &self.set
    }

    /// The policy with every `set` value passed through `expand` (the
    /// config's `${secret:NAME}` and `${VAR}` references, which this crate
    /// does not resolve itself). A value referring to Talon's reserved
    /// namespace (`${TALON_…}`, `${OPENCLAW_…}`: the gateway's own
    /// settings), one `expand` refuses, or one that expands to a NUL byte
    /// is an error at `set.NAME`; nothing is dropped.
    pub fn expand_set<E: std::fmt::Display>(
        mut self,
        expand: impl Fn(&str) -> Result<String, E>,
    ) -> Result<EnvPolicy, EnvConfigError> {
        for (name, value) in &mut self.set {
            let error = |message: String| EnvConfigError {
                key: format!("set.{name}"),
                message,
            };
            let upper = value.to_uppercase();
            if crate::config::RESERVED_PREFIXES
                .iter()
                .any(|p| upper.contains(&format!("${{{p}")))
            {
                return Err(error(
                    "a reference to Talon's reserved namespace (TALON_*, OPENCLAW_*) would hand Talon's own settings to every exec child; use another variable or a ${secret:NAME}"
                        .to_owned(),
                ));
            }
            let expanded = expand(value).map_err(|e| error(e.to_string()))?;
            if expanded.contains('\0') {
                return Err(error(
                    "the value a reference gave contains a NUL byte, which no environment can carry"
                        .to_owned(),
                ));
            }
            *value = expanded;
        }
        Ok(self)
    }

    /// Why the inherited variable `name` is withheld, or `None` when the
    /// policy's own rules pass it (OpenClaw's lists are applied after, by
    /// [`EnvPolicy::inherited`]).
    pub fn withheld(&self, name: &str) -> Option<Withheld> {
        let name = trim_key(name);
        let upper = name.to_uppercase();
        let inherited = match self.inherit {
            InheritMode::None => false,
            InheritMode::Core => base::is_core(&upper),
            InheritMode::All => true,
        };
        if !inherited {
            return Some(Withheld::NotInherited);
        }
        if any_match(&self.talon_read, name) {
            return Some(Withheld::TalonRead);
        }
        if any_match(&self.default_exclude, name) {
            return Some(Withheld::DefaultExclude);
        }
        if any_match(&self.exclude, name) {
            return Some(Withheld::Exclude);
        }
        if self
            .include_only
            .iter()
            .any(|layer| !any_match(layer, name))
        {
            return Some(Withheld::NotIncluded);
        }
        None
    }

    /// The part of `vars` (a host environment) a host child inherits:
    /// what [`EnvPolicy::withheld`] passes, then OpenClaw's inherited-key
    /// filter (which also drops names with `=` or NUL and tames
    /// `GIT_ALLOW_PROTOCOL`).
    pub fn inherited(
        &self,
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> BTreeMap<String, String> {
        filter_inherited_env(
            vars.into_iter()
                .filter(|(key, _)| self.withheld(key).is_none()),
        )
    }

    /// A host child's base environment: [`EnvPolicy::inherited`] from
    /// `vars`, then the configured `set` variables.
    pub fn host_env(
        &self,
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> BTreeMap<String, String> {
        let mut env = self.inherited(vars);
        env.extend(self.set.iter().map(|(k, v)| (k.clone(), v.clone())));
        env
    }

    /// [`EnvPolicy::explain`] for a run: a sandboxed run inherits no host
    /// variable (its `inheritedNames` is empty), a host run this process's
    /// environment.
    pub fn explain_run(&self, sandboxed: bool) -> EnvPolicyExplain {
        if sandboxed {
            EnvPolicyExplain {
                sandboxed: true,
                ..self.explain(Vec::new())
            }
        } else {
            self.explain(process_env())
        }
    }

    /// What `talon sandbox explain` shows: the mode, the patterns, the
    /// names (never values) of the configured variables and of the
    /// variables of `vars` that would be inherited.
    pub fn explain(&self, vars: impl IntoIterator<Item = (String, String)>) -> EnvPolicyExplain {
        EnvPolicyExplain {
            sandboxed: false,
            inherit: self.inherit,
            default_exclude: DEFAULT_EXCLUDES.iter().map(|p| (*p).to_owned()).collect(),
            talon_read: TALON_READ.iter().map(|p| (*p).to_owned()).collect(),
            exclude: self.exclude.iter().map(|p| p.to_string()).collect(),
            include_only: self
                .include_only
                .iter()
                .map(|layer| layer.iter().map(|p| p.to_string()).collect())
                .collect(),
            set_names: self.set.keys().cloned().collect(),
            inherited_names: self.inherited(vars).into_keys().collect(),
        }
    }
}

/// The effective environment policy, names only (never a value).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvPolicyExplain {
    /// Whether this is for a sandboxed run, which inherits no host
    /// variable whatever `inherit` says.
    pub sandboxed: bool,
    /// The inherit mode.
    pub inherit: InheritMode,
    /// The built-in credential patterns (always applied).
    pub default_exclude: Vec<String>,
    /// The variables Talon reads (never inherited).
    pub talon_read: Vec<String>,
    /// The configured exclude patterns.
    pub exclude: Vec<String>,
    /// The configured `includeOnly` layers (global, agent).
    pub include_only: Vec<Vec<String>>,
    /// The names of the configured `set` variables.
    pub set_names: Vec<String>,
    /// The names of the host variables a host child would inherit now.
    pub inherited_names: Vec<String>,
}

/// This process's environment, the entries that are UTF-8 on both sides
/// (a non-UTF-8 entry is never passed on).
pub fn process_env() -> Vec<(String, String)> {
    std::env::vars_os().filter_map(utf8_pair).collect()
}

fn utf8_pair((key, value): (OsString, OsString)) -> Option<(String, String)> {
    Some((key.into_string().ok()?, value.into_string().ok()?))
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
