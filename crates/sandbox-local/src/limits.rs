//! The resource limits of a local sandbox's commands: `docker.memory`,
//! `docker.pidsLimit` and `docker.cpus` of the resolved config.

use serde::Serialize;
use talon_proc_tree::{LimitKind, Limits, ProcTreeError};
use talon_sandbox_core::{DockerOrigins, DockerSettings, SandboxError, SizeValue};

use crate::protections::Protection;

/// The limits one command's process tree gets (`None`: unlimited).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestedLimits {
    /// `docker.memory`, in bytes.
    pub memory_bytes: Option<u64>,
    /// `docker.pidsLimit` (only values > 0 count, as with Docker).
    pub pids: Option<u64>,
    /// `docker.cpus` (only values > 0 count, as with Docker).
    pub cpus: Option<f64>,
    /// A value that could not be read, with its field (`memory`).
    #[serde(skip)]
    pub invalid: Option<(&'static str, &'static str)>,
}

impl RequestedLimits {
    /// Whether no limit is set.
    pub fn is_empty(&self) -> bool {
        self.memory_bytes.is_none() && self.pids.is_none() && self.cpus.is_none()
    }
}

impl RequestedLimits {
    /// As `talon-proc-tree` limits.
    pub(crate) fn to_limits(self) -> Limits {
        Limits {
            memory_bytes: self.memory_bytes,
            pids: self.pids,
            cpus: self.cpus,
        }
    }
}

/// The `docker.*` field a limit comes from.
pub(crate) fn field_of(kind: LimitKind) -> &'static str {
    match kind {
        LimitKind::Memory => "memory",
        LimitKind::Pids => "pidsLimit",
        LimitKind::Cpus => "cpus",
        _ => "memory/pidsLimit/cpus",
    }
}

/// A leaf that could not be made, naming the setting behind it.
pub(crate) fn leaf_error(e: ProcTreeError) -> SandboxError {
    leaf_error_keyed(e, None)
}

/// [`leaf_error`] with the full config key of the limit.
pub(crate) fn leaf_error_keyed(e: ProcTreeError, origins: Option<&DockerOrigins>) -> SandboxError {
    let key = |kind: LimitKind| match origins {
        Some(o) => o.key(field_of(kind)),
        None => format!("docker.{}", field_of(kind)),
    };
    let mapped = match &e {
        ProcTreeError::LimitUnavailable { limit, reason }
        | ProcTreeError::InvalidLimit { limit, reason } => SandboxError::config(format!(
            "{}: this limit cannot be enforced here ({reason}); the local sandbox backend \
                 needs a writable cgroup hierarchy with the {} controller (run Talon as root or \
                 in a delegated cgroup), or remove the limit",
            key(*limit),
            limit.controller()
        )),
        _ => SandboxError::io(format!(
            "cannot set up the cgroup for a local sandbox command: {e}"
        )),
    };
    mapped.with_source(e)
}

/// Parse a Docker size (`1024`, `512m`, `1.5g`, `64MiB`) into bytes.
pub(crate) fn size_bytes(value: &SizeValue) -> Option<u64> {
    let text = match value {
        SizeValue::Bytes(n) => return u64::try_from(*n).ok(),
        SizeValue::Text(text) => text.trim().to_ascii_lowercase(),
    };
    let digits_end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits_end);
    let number: f64 = number.parse().ok()?;
    let unit = unit.trim();
    let unit = unit
        .strip_suffix("ib")
        .or_else(|| unit.strip_suffix('b'))
        .unwrap_or(unit);
    let factor: f64 = match unit {
        "" => 1.0,
        "k" => 1024.0,
        "m" => 1024.0 * 1024.0,
        "g" => 1024.0 * 1024.0 * 1024.0,
        "t" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let bytes = (number * factor).round();
    if !bytes.is_finite() || bytes <= 0.0 || bytes > u64::MAX as f64 {
        return None;
    }
    Some(bytes as u64)
}

/// The limits `docker` asks for, or an error naming the key of one that
/// cannot be read.
pub(crate) fn requested_checked(
    docker: &DockerSettings,
    origins: &DockerOrigins,
) -> Result<RequestedLimits, SandboxError> {
    let limits = requested(docker);
    match limits.invalid {
        Some((field, why)) => Err(SandboxError::config(format!(
            "{}: {why}",
            origins.key(field)
        ))),
        None => Ok(limits),
    }
}

/// The limits `docker` asks for.
pub fn requested(docker: &DockerSettings) -> RequestedLimits {
    let mut out = RequestedLimits::default();
    if let Some(memory) = &docker.memory {
        match size_bytes(memory) {
            Some(bytes) => out.memory_bytes = Some(bytes),
            None => {
                out.invalid = Some((
                    "memory",
                    "is not a size; use bytes or a number with k, m, g or t (`512m`)",
                ));
            }
        }
    }
    out.pids = docker
        .pids_limit
        .filter(|n| *n > 0)
        .and_then(|n| u64::try_from(n).ok());
    out.cpus = docker
        .cpus
        .as_ref()
        .and_then(serde_json::Number::as_f64)
        .filter(|c| *c > 0.0);
    out
}

/// How `explain` shows the limits.
pub(crate) fn protection(limits: &RequestedLimits) -> Protection {
    if limits.is_empty() {
        return Protection {
            applied: false,
            detail: "none configured (docker.memory, docker.pidsLimit, docker.cpus)".to_owned(),
        };
    }
    let mut parts = Vec::new();
    if let Some(m) = limits.memory_bytes {
        parts.push(format!("memory {m} bytes"));
    }
    if let Some(p) = limits.pids {
        parts.push(format!("pids {p}"));
    }
    if let Some(c) = limits.cpus {
        parts.push(format!("cpus {c}"));
    }
    Protection {
        applied: true,
        detail: format!(
            "{} per command, in a cgroup of its own (a limit this host cannot enforce fails the \
             command)",
            parts.join(", ")
        ),
    }
}
