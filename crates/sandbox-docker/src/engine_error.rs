//! Turning `bollard` errors into [`SandboxError`]s an operator can act on.

use bollard::errors::Error as BollardError;
use talon_sandbox_core::SandboxError;

/// How to get an engine running, appended to every "unreachable" error.
/// It names both ways to keep sandboxing: start the engine, or switch to
/// the daemon-less `local` backend.
pub(crate) const START_HINT: &str = "start the Docker engine (`cargo xtask docker-up` in a Talon \
     checkout, `systemctl start docker`, or `dockerd &` as root), or set \
     agents.defaults.sandbox.backend to \"local\" to sandbox with bubblewrap instead (no daemon \
     needed), or set agents.defaults.sandbox.mode=off to run tools on the host";

/// The HTTP status of an engine response, when the error is one.
pub(crate) fn status_of(err: &BollardError) -> Option<u16> {
    match err {
        BollardError::DockerResponseServerError { status_code, .. } => Some(*status_code),
        _ => None,
    }
}

/// Whether the error means "no such object".
pub(crate) fn is_not_found(err: &BollardError) -> bool {
    status_of(err) == Some(404)
}

/// Whether the error means the engine could not be talked to at all
/// (socket missing, connection refused or reset, timeout).
pub(crate) fn is_transport(err: &BollardError) -> bool {
    matches!(
        err,
        BollardError::SocketNotFoundError(_)
            | BollardError::HyperLegacyError { .. }
            | BollardError::HyperResponseError { .. }
            | BollardError::IOError { .. }
            | BollardError::RequestTimeoutError
    )
}

/// The engine at `addr` is unreachable while doing `what`.
pub(crate) fn unavailable(addr: &str, what: &str, detail: &dyn std::fmt::Display) -> SandboxError {
    SandboxError::engine_unavailable(format!(
        "cannot reach the Docker engine at {addr} to {what} ({detail}); {START_HINT}"
    ))
}

/// Map any engine error met while doing `what` (a verb phrase such as
/// `create container talon-sbx-x`); the bollard error is kept as the
/// source.
pub(crate) fn engine_error(addr: &str, what: &str, err: BollardError) -> SandboxError {
    let mapped = if is_transport(&err) {
        unavailable(addr, what, &err)
    } else {
        match &err {
            BollardError::DockerResponseServerError {
                status_code,
                message,
            } => SandboxError::io(format!(
                "the Docker engine refused to {what} (HTTP {status_code}): {}",
                message.trim()
            )),
            other => SandboxError::io(format!(
                "Docker engine error while trying to {what}: {other}"
            )),
        }
    };
    mapped.with_source(err)
}

/// The image is not there; say which one and how to get it.
pub(crate) fn image_missing(image: &str) -> SandboxError {
    SandboxError::image_missing(format!(
        "image `{image}` is not present in the Docker engine and Talon never pulls or \
         substitutes one; build it (for OpenClaw's default image run OpenClaw's \
         `scripts/sandbox-setup.sh`, or `docker build -t {image} .` from a Dockerfile based on \
         debian:bookworm-slim, see the Talon README), or set agents.defaults.sandbox.docker.image \
         to an image you have (`docker images`)"
    ))
}

#[cfg(test)]
#[path = "engine_error_tests.rs"]
mod tests;
