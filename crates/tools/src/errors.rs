//! The errors of the crates the tools sit on, as tool errors that keep
//! their codes: one conversion per source, each mapping every code.

use talon_fs_bridge::{FsError, FsErrorCode};
use talon_sandbox_core::{SandboxError, SandboxErrorKind};
use talon_tool_catalog::{ToolError, ToolErrorCode};

/// A sandbox error as a tool error: the sandbox kind becomes the code
/// (`sandbox.engine_unavailable`, `sandbox.timeout`, ...), which decides
/// the tool error's kind; the message is the sandbox error's.
pub fn sandbox_error(e: SandboxError) -> ToolError {
    ToolError::new(sandbox_code(e.kind()), e.to_string())
}

/// The tool error code of a sandbox error kind (one for one).
pub fn sandbox_code(kind: SandboxErrorKind) -> ToolErrorCode {
    match kind {
        SandboxErrorKind::EngineUnavailable => ToolErrorCode::SandboxEngineUnavailable,
        SandboxErrorKind::ImageMissing => ToolErrorCode::SandboxImageMissing,
        SandboxErrorKind::Config => ToolErrorCode::SandboxConfig,
        SandboxErrorKind::BackendMissing => ToolErrorCode::SandboxBackendMissing,
        SandboxErrorKind::Exec => ToolErrorCode::SandboxExec,
        SandboxErrorKind::Gone => ToolErrorCode::SandboxGone,
        SandboxErrorKind::Timeout => ToolErrorCode::SandboxTimeout,
        SandboxErrorKind::Io => ToolErrorCode::SandboxIo,
        // A kind added to the sandbox crate and not mapped here yet.
        _ => ToolErrorCode::SandboxExec,
    }
}

/// A bridge error as a tool error: the bridge's code becomes the tool
/// error's code ([`fs_code`]), which decides the kind (a refusal caused by
/// the path the model gave is an input error naming `param`; an
/// unreachable backend is unavailable; an I/O failure is an execution
/// failure). The path goes into `details`, the message stays the bridge's.
pub fn fs_error(param: &str, err: FsError) -> ToolError {
    let code = fs_code(err.code);
    let e = ToolError::new(code, err.message).with_detail("path", err.path);
    if e.is_input() { e.with_param(param) } else { e }
}

/// The tool error code of a bridge error code (one for one).
pub fn fs_code(code: FsErrorCode) -> ToolErrorCode {
    match code {
        FsErrorCode::OutsideMounts => ToolErrorCode::FsOutsideMounts,
        FsErrorCode::Escape => ToolErrorCode::FsEscape,
        FsErrorCode::ReadOnly => ToolErrorCode::FsReadOnly,
        FsErrorCode::NotFound => ToolErrorCode::FsNotFound,
        FsErrorCode::NotAFile => ToolErrorCode::FsNotAFile,
        FsErrorCode::NotADirectory => ToolErrorCode::FsNotADirectory,
        FsErrorCode::AlreadyExists => ToolErrorCode::FsAlreadyExists,
        FsErrorCode::InvalidPath => ToolErrorCode::FsInvalidPath,
        FsErrorCode::TooLarge => ToolErrorCode::FsTooLarge,
        FsErrorCode::PathTooLong => ToolErrorCode::FsPathTooLong,
        FsErrorCode::MountRoot => ToolErrorCode::FsMountRoot,
        FsErrorCode::Rejected => ToolErrorCode::FsRejected,
        FsErrorCode::Unavailable => ToolErrorCode::FsUnavailable,
        FsErrorCode::Io => ToolErrorCode::FsIo,
        // A code added to the bridge and not mapped here yet: an
        // execution failure, never an authority-widening success.
        _ => ToolErrorCode::FsIo,
    }
}

#[cfg(test)]
#[path = "errors_tests.rs"]
mod tests;
