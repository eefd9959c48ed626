//! Fake tools (the shared probe tool) and families.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use talon_runtime::{RunSpec, ToolFamily};
use talon_test_support::probe_tool::{ProbeTool, Reply};
use talon_tool_catalog::{Tool, ToolError, ToolSpec};

/// The shared probe tool as the core tool `name`, echoing its params
/// (`{"tool", "params"}`; a `fail` param fails); counts calls.
pub(crate) fn echo_tool(name: &str) -> ProbeTool {
    ProbeTool::core(name, Reply::EchoParams).recorded()
}

/// The same as a tool of `plugin` with the schema `parameters`.
pub(crate) fn echo_plugin(name: &str, plugin: &str, parameters: Value) -> ProbeTool {
    let description = format!("{name} from {plugin}");
    ProbeTool::plugin(name, plugin, &description, parameters, Reply::EchoParams).recorded()
}

/// A family whose tools are built on first use; counts constructions.
pub(crate) struct LazyFamily {
    pub(crate) built: Arc<AtomicUsize>,
}

impl ToolFamily for LazyFamily {
    fn id(&self) -> &str {
        "lazy-shell"
    }

    fn specs(&self, _run: &RunSpec) -> Vec<ToolSpec> {
        vec![
            ToolSpec::core("exec").unwrap(),
            ToolSpec::core("process").unwrap(),
        ]
    }

    fn construct(&self, name: &str, _run: &RunSpec) -> Result<Arc<dyn Tool>, ToolError> {
        self.built.fetch_add(1, Ordering::SeqCst);
        Ok(Arc::new(echo_tool(name)))
    }

    fn lazy(&self) -> bool {
        true
    }
}

/// A cron runner that refuses every run (the tests only add and list jobs).
#[cfg(feature = "sqlite-state")]
#[derive(Debug)]
pub(crate) struct Refuse;

#[cfg(feature = "sqlite-state")]
#[async_trait::async_trait]
impl talon_cron::AgentRunner for Refuse {
    async fn run_isolated(
        &self,
        _run: talon_cron::IsolatedRun,
    ) -> Result<talon_cron::RunReport, talon_cron::RunFailure> {
        Err(talon_cron::RunFailure::permanent("test runner"))
    }
    async fn system_event(
        &self,
        _e: talon_cron::SystemEventRequest,
    ) -> Result<(), talon_cron::RunFailure> {
        Ok(())
    }
}
