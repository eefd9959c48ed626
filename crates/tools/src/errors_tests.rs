use pretty_assertions::assert_eq;
use talon_fs_bridge::{FsError, FsErrorCode};
use talon_tool_catalog::{ToolErrorCode, ToolErrorKind};

use super::*;

#[test]
fn every_sandbox_kind_keeps_its_name_as_the_code() {
    let cases = [
        (
            SandboxError::engine_unavailable("d"),
            ToolErrorKind::Unavailable,
        ),
        (SandboxError::image_missing("i"), ToolErrorKind::Unavailable),
        (SandboxError::config("c"), ToolErrorKind::Input),
        (
            SandboxError::backend_missing("b"),
            ToolErrorKind::Unavailable,
        ),
        (SandboxError::exec("e"), ToolErrorKind::Execution),
        (SandboxError::gone("g"), ToolErrorKind::Unavailable),
        (SandboxError::timeout("t"), ToolErrorKind::TimedOut),
        (SandboxError::io("io"), ToolErrorKind::Execution),
    ];
    for (e, kind) in cases {
        let sandbox_kind = e.kind();
        let message = e.to_string();
        let t = sandbox_error(e);
        assert_eq!(
            t.code().as_str(),
            format!("sandbox.{}", sandbox_kind.as_str())
        );
        assert_eq!(t.kind(), kind, "{message}");
        assert_eq!(t.message(), message);
    }
}

#[test]
fn every_fs_code_keeps_its_name_and_the_path() {
    let codes = [
        FsErrorCode::OutsideMounts,
        FsErrorCode::Escape,
        FsErrorCode::ReadOnly,
        FsErrorCode::NotFound,
        FsErrorCode::NotAFile,
        FsErrorCode::NotADirectory,
        FsErrorCode::AlreadyExists,
        FsErrorCode::InvalidPath,
        FsErrorCode::TooLarge,
        FsErrorCode::PathTooLong,
        FsErrorCode::MountRoot,
        FsErrorCode::Rejected,
        FsErrorCode::Unavailable,
        FsErrorCode::Io,
    ];
    for code in codes {
        let t = fs_error("path", FsError::new(code, "a/b.txt", "refused"));
        assert_eq!(
            t.code().as_str(),
            format!("fs.{}", code.as_str().replace('-', "_")),
            "{code}"
        );
        assert_eq!(t.message(), "refused", "the code is not a message prefix");
        assert_eq!(
            t.details().and_then(|d| d.get("path")),
            Some(&serde_json::json!("a/b.txt"))
        );
        match code {
            FsErrorCode::Unavailable => assert_eq!(t.kind(), ToolErrorKind::Unavailable),
            FsErrorCode::Io => assert_eq!(t.kind(), ToolErrorKind::Execution),
            _ => {
                assert_eq!(t.kind(), ToolErrorKind::Input, "{code}");
                assert_eq!(t.param(), Some("path"));
            }
        }
    }
    assert_eq!(
        fs_error("path", FsError::new(FsErrorCode::Escape, "x", "m")).code(),
        ToolErrorCode::FsEscape
    );
}
