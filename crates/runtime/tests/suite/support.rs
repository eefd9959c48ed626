//! Fake tools and families.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use talon_runtime::{RunSpec, ToolFamily};
use talon_tool_catalog::{
    CancellationToken, Tool, ToolCall, ToolContext, ToolError, ToolFamily as Family, ToolResult,
    ToolSpec, json_result,
};

/// Echoes its params; counts calls.
pub(crate) struct Echo {
    pub(crate) spec: ToolSpec,
    pub(crate) calls: Arc<AtomicUsize>,
}

impl Echo {
    pub(crate) fn core(name: &str) -> Self {
        Echo {
            spec: ToolSpec::core(name).unwrap_or_else(|| panic!("{name} is not core")),
            calls: Arc::new(AtomicUsize::new(0)),
        }
    }

    pub(crate) fn plugin(name: &str, plugin: &str, parameters: Value) -> Self {
        let mut spec = ToolSpec::new(
            name,
            Family::Plugin {
                plugin_id: plugin.into(),
            },
        );
        spec.description = format!("{name} from {plugin}");
        spec.parameters = parameters;
        Echo {
            spec,
            calls: Arc::new(AtomicUsize::new(0)),
        }
    }
}

#[async_trait::async_trait]
impl Tool for Echo {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(
        &self,
        call: &ToolCall,
        _ctx: &ToolContext,
        _abort: &CancellationToken,
    ) -> Result<ToolResult, ToolError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if call.params.get("fail").is_some() {
            return Err(ToolError::execution("it failed"));
        }
        Ok(json_result(
            json!({"tool": call.name, "params": Value::Object(call.params.clone())}),
        ))
    }
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
        Ok(Arc::new(Echo::core(name)))
    }

    fn lazy(&self) -> bool {
        true
    }
}
