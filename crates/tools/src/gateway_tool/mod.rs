//! The read-only `gateway` tool: the running config (secrets redacted) and
//! the JSON Schema of a config path. Writes and restarts are not offered.

mod redact;
mod schema_lookup;

use std::fmt;
use std::sync::Arc;

use serde_json::{Value, json};
use talon_tool_catalog::params::{StringOpts, lookup, read_string};
use talon_tool_catalog::{
    CancelExt, CancellationToken, Section, Tool, ToolCall, ToolContext, ToolError, ToolFamily,
    ToolResult, ToolSpec, json_result,
};

pub use self::redact::{REDACTED, is_secret_key, redact_secrets};

/// Returns the running config as JSON (the integrator wires the config
/// crate's current snapshot here).
pub type ConfigSnapshotFn = Arc<dyn Fn() -> Value + Send + Sync>;

/// Actions that exist on OpenClaw's gateway tool but change things; named
/// so the refusal can say why.
const WRITE_ACTIONS: [&str; 6] = [
    "config.apply",
    "config.patch",
    "config.set",
    "restart",
    "update.run",
    "update",
];

const DESCRIPTION: &str = "Read the running gateway configuration (secrets shown as __REDACTED__) \
or look up the JSON Schema of one config path. Read-only: writing the config (config.apply, \
config.patch) and restarting or updating the gateway are not available through this tool; ask \
the operator for those.";

/// The `gateway` tool.
pub struct GatewayTool {
    spec: ToolSpec,
    snapshot: ConfigSnapshotFn,
    schema: Arc<Value>,
}

impl fmt::Debug for GatewayTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GatewayTool")
            .field("spec", &self.spec.name)
            .finish_non_exhaustive()
    }
}

impl GatewayTool {
    /// The tool: `snapshot` is called on every `config.get` (so reloads are
    /// seen); `schema` is the config file's JSON Schema.
    pub fn new(snapshot: impl Fn() -> Value + Send + Sync + 'static, schema: Value) -> Self {
        let base = ToolSpec::core("gateway").unwrap_or_else(|| {
            ToolSpec::new(
                "gateway",
                ToolFamily::Core {
                    section: Section::Automation,
                },
            )
            .owner_only(true)
        });
        let spec = base
            .with_description(DESCRIPTION)
            .with_parameters(json!({
                "type": "object",
                "properties": {
                    "action": {
                        "type": "string",
                        "enum": ["config.get", "config.schema.lookup"],
                        "description": "config.get reads the running config; config.schema.lookup returns the JSON Schema of one path."
                    },
                    "path": {
                        "type": "string",
                        "description": "Dotted config path, e.g. tools.web.fetch or agents.list[0]; optional for config.get, required for config.schema.lookup."
                    }
                },
                "required": ["action"]
            }));
        GatewayTool {
            spec,
            snapshot: Arc::new(snapshot),
            schema: Arc::new(schema),
        }
    }

    fn config_get(&self, path: Option<&str>) -> Result<Value, ToolError> {
        let config = redact_secrets(&(self.snapshot)());
        let Some(path) = path else {
            return Ok(json!({ "ok": true, "config": config }));
        };
        let segments = schema_lookup::split_path(path)?;
        let mut node = &config;
        for (i, seg) in segments.iter().enumerate() {
            let next = match node {
                Value::Object(map) => map.get(seg),
                Value::Array(items) => seg.parse::<usize>().ok().and_then(|i| items.get(i)),
                _ => None,
            };
            node = match next {
                Some(n) => n,
                None => {
                    let at = if i == 0 {
                        "the config root".to_owned()
                    } else {
                        format!("`{}`", segments[..i].join("."))
                    };
                    let hint = match node {
                        Value::Object(map) => {
                            let keys: Vec<&str> = map.keys().map(String::as_str).take(40).collect();
                            format!("keys set there: {}", keys.join(", "))
                        }
                        Value::Array(items) => format!("it is a list of {} items", items.len()),
                        _ => "it is a plain value".to_owned(),
                    };
                    return Err(ToolError::input(
                        "path",
                        format!("config path `{path}` is not set: no `{seg}` in {at} ({hint})"),
                    ));
                }
            };
        }
        Ok(json!({ "ok": true, "path": path, "config": node }))
    }
}

#[async_trait::async_trait]
impl Tool for GatewayTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(
        &self,
        call: &ToolCall,
        _ctx: &ToolContext,
        abort: &CancellationToken,
    ) -> Result<ToolResult, ToolError> {
        abort.check()?;
        for param in ["gatewayUrl", "gatewayToken"] {
            if lookup(&call.params, param).is_some_and(|v| !v.is_null()) {
                return Err(ToolError::input(
                    param,
                    format!(
                        "{param} is not accepted: this tool reads the gateway it runs in; omit {param}"
                    ),
                ));
            }
        }
        let action =
            read_string(&call.params, "action", StringOpts::required())?.unwrap_or_default();
        let path = read_string(&call.params, "path", StringOpts::default())?;
        match action.as_str() {
            "config.get" => Ok(json_result(self.config_get(path.as_deref())?)),
            "config.schema.lookup" => {
                let Some(path) = path else {
                    return Err(ToolError::input(
                        "path",
                        "path required for config.schema.lookup, e.g. tools.web.fetch",
                    ));
                };
                let (schema, keys) = schema_lookup::lookup_schema(&self.schema, &path)?;
                let mut payload = json!({ "ok": true, "path": path, "schema": schema });
                if !keys.is_empty()
                    && let Value::Object(map) = &mut payload
                {
                    map.insert("keys".into(), json!(keys));
                }
                Ok(json_result(payload))
            }
            other if WRITE_ACTIONS.contains(&other) => Err(ToolError::unauthorized(format!(
                "gateway action `{other}` is not available: this tool is read-only (config.get, config.schema.lookup); writes and restarts are done by the operator"
            ))),
            other => Err(ToolError::input(
                "action",
                format!("unknown action `{other}`; use config.get or config.schema.lookup"),
            )),
        }
    }
}
