//! The spelling rules every file bridge applies the same way (the local
//! [`MountBridge`](crate::MountBridge) and remote ones such as the SSH
//! backend's): a trailing `/` names a directory, mount roots are never
//! removed or renamed, a mutation names an entry. Each returns the
//! [`FsError`] with the same code and wording on every bridge.

use crate::error::{FsError, FsErrorCode};

/// Refuse a mutation target whose last segment is empty, `.` or `..`.
pub fn check_entry_name(given: &str) -> Result<(), FsError> {
    let base = given.rsplit('/').next().unwrap_or("");
    if base.is_empty() || base == "." || base == ".." {
        return Err(FsError::new(
            FsErrorCode::InvalidPath,
            given,
            format!(
                "`{given}` does not name an entry (it ends in `/`, `.` or `..`); give the full name of the file or directory"
            ),
        ));
    }
    Ok(())
}

/// Whether `given` ends in `/` or `/.` after a name: it then names a
/// directory, and a file there is "not a directory" (POSIX `ENOTDIR`), never
/// the file itself.
pub fn demands_directory(given: &str) -> bool {
    let mut rest = given;
    let mut stripped = false;
    loop {
        if let Some(r) = rest.strip_suffix('/') {
            rest = r;
        } else if let Some(r) = rest.strip_suffix("/.") {
            rest = r;
        } else {
            break;
        }
        stripped = true;
    }
    let base = rest.rsplit('/').next().unwrap_or("");
    stripped && !base.is_empty() && base != "." && base != ".."
}

/// `not-a-directory`: `given` ends in `/` but names an existing
/// non-directory.
pub fn trailing_slash_on_non_directory(given: &str) -> FsError {
    let name = given.trim_end_matches(['/', '.']);
    FsError::new(
        FsErrorCode::NotADirectory,
        given,
        format!(
            "`{given}` ends in `/`, so it names a directory, but `{name}` is not one; drop the trailing `/` to name the file"
        ),
    )
}

/// `not-a-directory`: a write to a new name that ends in `/` (only a
/// file can be written, and the slash names a directory).
pub fn trailing_slash_creates_no_file(given: &str) -> FsError {
    FsError::new(
        FsErrorCode::NotADirectory,
        given,
        format!(
            "`{given}` ends in `/`, so it names a directory, and only a file can be written; drop the trailing `/` to name the file"
        ),
    )
}

/// `mount-root`: `action` ("remove or rename", "create") on a mount
/// root.
pub fn mount_root_refused(given: &str, action: &str) -> FsError {
    FsError::new(
        FsErrorCode::MountRoot,
        given,
        format!(
            "cannot {action} `{given}`: it is a mount root, which the file tools never remove, rename or replace; name an entry inside it"
        ),
    )
}

/// `not-a-file`: `given` is a directory where a regular file is needed.
pub fn directory_not_file(given: &str) -> FsError {
    FsError::new(
        FsErrorCode::NotAFile,
        given,
        format!("`{given}` is a directory; give the path of a regular file"),
    )
}
