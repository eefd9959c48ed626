//! `skills.*` and `sandbox.*`.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};

use crate::gateway::Gateway;
use crate::rpc::{INVALID_PARAMS, METHOD_NOT_FOUND, RpcError};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AgentRef {
    #[serde(default)]
    agent_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SessionRef {
    session_key: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RecreateParams {
    name: String,
    #[serde(default)]
    backend: Option<String>,
}

fn parse<T: serde::de::DeserializeOwned>(method: &str, params: Value) -> Result<T, RpcError> {
    let params = if params.is_null() { json!({}) } else { params };
    serde_json::from_value(params)
        .map_err(|e| RpcError::new(INVALID_PARAMS, format!("{method}: invalid params: {e}")))
}

impl Gateway {
    pub(crate) async fn extra_method(
        &self,
        method: &str,
        params: Value,
    ) -> Result<Value, RpcError> {
        match method {
            "skills.list" => {
                let p: AgentRef = parse(method, params)?;
                let (set, _) = self.load_skills(p.agent_id.as_deref());
                let skills: Vec<Value> = set
                    .skills
                    .iter()
                    .map(talon_skills::Skill::summary_json)
                    .collect();
                let rejected: Vec<Value> = set
                    .rejected
                    .iter()
                    .map(|r| json!({"location": r.location, "source": r.source.label(), "reason": r.message}))
                    .collect();
                Ok(json!({"skills": skills, "rejected": rejected}))
            }
            "skills.prompt" => {
                let p: AgentRef = parse(method, params)?;
                let (set, config) = self.load_skills(p.agent_id.as_deref());
                let rendered = talon_skills::prompt::render_prompt(
                    &set.skills,
                    &talon_skills::config_limits(&config),
                );
                Ok(json!(rendered))
            }
            "sandbox.explain" => {
                let p: SessionRef = parse(method, params)?;
                let s = self.session_or_main(&p.session_key)?;
                let g = self.generation();
                let built = s.table(g.id, &g.runtime).await;
                let resolved = g.config.resolved_sandbox(&s.info.agent_id);
                let sandboxed = built.table.sandbox().sandboxed;
                // Names only, never values (talon_exec_env::EnvPolicyExplain).
                let exec_env = match g.config.exec_env_policy(&s.info.agent_id) {
                    Ok(policy) => json!(policy.explain_run(sandboxed)),
                    Err(e) => json!({"error": format!("tools.exec.env.{e}")}),
                };
                let removed: Vec<Value> = built
                    .table
                    .policy()
                    .layers
                    .iter()
                    .filter(|l| l.id.contains("sandbox"))
                    .flat_map(|l| {
                        l.removed
                            .iter()
                            .map(move |r| json!({"layer": l.id, "removal": r}))
                    })
                    .collect();
                Ok(json!({
                    "sessionKey": s.info.session_key,
                    "agentId": s.info.agent_id,
                    "sandboxed": sandboxed,
                    "decision": built.table.sandbox().summary(),
                    "sandbox": resolved,
                    "removedBySandboxPolicy": removed,
                    "execEnv": exec_env,
                }))
            }
            "sandbox.list" => {
                let g = self.generation();
                let Some(registry) = g.runtime.sandbox_backends() else {
                    return Ok(json!({"sandboxes": [], "errors": []}));
                };
                let mut sandboxes = Vec::new();
                let mut errors = Vec::new();
                for id in registry.ids() {
                    let Some(b) = registry.get(&id) else { continue };
                    match tokio::time::timeout(std::time::Duration::from_secs(10), b.list_owned())
                        .await
                    {
                        Ok(Ok(list)) => sandboxes.extend(list.into_iter().map(|s| json!(s))),
                        Ok(Err(e)) => errors.push(json!({"backend": id, "error": e.to_string()})),
                        Err(_) => errors.push(json!({"backend": id, "error": "timed out"})),
                    }
                }
                Ok(json!({"sandboxes": sandboxes, "errors": errors}))
            }
            "sandbox.recreate" => {
                let p: RecreateParams = parse(method, params)?;
                let g = self.generation();
                let registry = g
                    .runtime
                    .sandbox_backends()
                    .ok_or_else(|| RpcError::internal("no sandbox backends in this runtime"))?;
                let ids = registry.ids();
                let id = match p.backend {
                    Some(b) => b,
                    None if ids.len() == 1 => ids.first().cloned().unwrap_or_default(),
                    None => {
                        return Err(RpcError::params(format!(
                            "name the backend (one of: {})",
                            ids.join(", ")
                        )));
                    }
                };
                let backend = registry
                    .get(&id)
                    .ok_or_else(|| RpcError::not_found(format!("no sandbox backend `{id}`")))?;
                // Only sandboxes this gateway owns may be removed.
                let owned = backend
                    .list_owned()
                    .await
                    .map_err(|e| RpcError::internal(e.to_string()))?;
                if !owned.iter().any(|s| s.name == p.name) {
                    return Err(RpcError::not_found(format!(
                        "`{}` is not a sandbox owned by Talon on `{id}` (sandbox.list shows them)",
                        p.name
                    )));
                }
                backend
                    .remove(&p.name)
                    .await
                    .map_err(|e| RpcError::internal(e.to_string()))?;
                Ok(
                    json!({"removed": p.name, "backend": id, "note": "the next sandboxed call recreates it with the current config"}),
                )
            }
            other => Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!("no method `{other}`"),
            )),
        }
    }

    fn load_skills(
        &self,
        agent: Option<&str>,
    ) -> (talon_skills::SkillSet, talon_skills::SkillsConfig) {
        let g = self.generation();
        let config = &g.config;
        let agent = agent.map_or_else(|| config.default_agent_id(), |a| a.trim().to_lowercase());
        let skills_config = config.skills_config();
        let base = self.config_dir();
        let extra: Vec<PathBuf> = skills_config
            .load
            .as_ref()
            .and_then(|l| l.extra_dirs.clone())
            .unwrap_or_default()
            .iter()
            .map(|d| base.join(d))
            .collect();
        let state = talon_config::state_dir();
        let workspace = config.agent_workspace_dir(&agent, &base, &state);
        let bundled = std::env::var_os("TALON_BUNDLED_SKILLS_DIR")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        let roots = talon_skills::SkillRoots::resolve(
            Some(&workspace),
            &state,
            talon_config::home_dir().as_deref(),
            extra,
            bundled,
        );
        let json = serde_json::to_value(&**config).unwrap_or(Value::Null);
        let eligibility = talon_skills::default_eligibility_context(json);
        let set = talon_skills::load_skills_with_config(&roots, &skills_config, &eligibility);
        (set, skills_config)
    }

    pub(crate) fn config_dir(&self) -> PathBuf {
        match self.inner.location.path() {
            Some(p) => p
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| PathBuf::from(".")),
            None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        }
    }
}

/// Sandbox containers this gateway knows of (sessions running sandboxed
/// with a built table).
pub(crate) fn sandbox_container_count(gw: &Gateway) -> usize {
    gw.inner
        .sessions
        .list()
        .iter()
        .filter(|s| {
            s.current_table()
                .is_some_and(|built| built.table.sandbox().sandboxed)
        })
        .count()
}
