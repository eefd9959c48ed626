//! The bounds every path the bridge takes, resolves or creates stays
//! within: the host's `PATH_MAX` and `NAME_MAX`, and a depth cap.
//!
//! The bridge resolves with `*at` calls on pinned directory fds, so the
//! kernel's own `ENAMETOOLONG` never fires on a long path: without these
//! checks a model could name, walk and create trees thousands of levels
//! deep that nothing else on the host (shells, `rm -r` with paths, editors)
//! can handle. The checks run before anything is touched, and every one
//! fails with [`path-too-long`](FsErrorCode::PathTooLong).

use crate::error::{FsError, FsErrorCode};

/// Longest path, in bytes, the bridge accepts or lets a mutation create
/// (Linux `PATH_MAX` is 4096 including the terminating NUL). It bounds the
/// path as given, the normalised path in the bridge's namespace, and the
/// host path of anything created.
pub const MAX_PATH_BYTES: usize = 4095;

/// Longest single name, in bytes (Linux `NAME_MAX`).
pub const MAX_NAME_BYTES: usize = 255;

/// Most path components (directory levels) a path may have: in the
/// bridge's namespace, beneath a mount root while resolving, and for
/// anything a mutation creates. 256 is far above any real source tree
/// (and is what the recursive remove already descended), and keeps every
/// such path far below `PATH_MAX` for short names.
pub const MAX_PATH_DEPTH: usize = 256;

/// How much of a too-long path a message quotes.
const SHOWN: usize = 80;

/// `given` cut to [`SHOWN`] bytes on a character boundary, for messages
/// (a refused path can be megabytes long).
pub(crate) fn shown(given: &str) -> String {
    if given.len() <= SHOWN {
        return given.to_owned();
    }
    let mut end = SHOWN;
    while end > 0 && !given.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &given[..end], given.len())
}

fn too_long(given: &str, what: String) -> FsError {
    let path = shown(given);
    FsError::new(
        FsErrorCode::PathTooLong,
        path.clone(),
        format!("`{path}` {what}; use a shorter, shallower path"),
    )
}

/// The path as given: at most [`MAX_PATH_BYTES`].
pub(crate) fn check_given(given: &str) -> Result<(), FsError> {
    if given.len() > MAX_PATH_BYTES {
        return Err(too_long(
            given,
            format!(
                "is {} bytes long; paths are limited to {MAX_PATH_BYTES} bytes (PATH_MAX)",
                given.len()
            ),
        ));
    }
    Ok(())
}

/// A normalised path's components: each at most [`MAX_NAME_BYTES`], at
/// most [`MAX_PATH_DEPTH`] of them, joined at most [`MAX_PATH_BYTES`].
pub(crate) fn check_segments(given: &str, segments: &[&str]) -> Result<(), FsError> {
    if let Some(long) = segments.iter().find(|s| s.len() > MAX_NAME_BYTES) {
        return Err(too_long(
            given,
            format!(
                "has a name of {} bytes (`{}`); names are limited to {MAX_NAME_BYTES} bytes (NAME_MAX)",
                long.len(),
                shown(long)
            ),
        ));
    }
    if segments.len() > MAX_PATH_DEPTH {
        return Err(too_long(
            given,
            format!(
                "is {} levels deep; paths are limited to {MAX_PATH_DEPTH} levels",
                segments.len()
            ),
        ));
    }
    let joined: usize = segments.iter().map(|s| s.len() + 1).sum();
    if joined > MAX_PATH_BYTES {
        return Err(too_long(
            given,
            format!(
                "normalises to {joined} bytes; paths are limited to {MAX_PATH_BYTES} bytes (PATH_MAX)"
            ),
        ));
    }
    Ok(())
}

/// Resolution went deeper than [`MAX_PATH_DEPTH`] (through symbolic links,
/// or into a tree something else built).
pub(crate) fn resolves_too_deep(given: &str) -> FsError {
    too_long(
        given,
        format!(
            "resolves more than {MAX_PATH_DEPTH} levels deep (through symbolic links or an existing deep tree)"
        ),
    )
}

/// What a mutation would create: `depth` levels below the mount root and
/// `host_len` bytes of host path.
pub(crate) fn check_created(given: &str, depth: usize, host_len: usize) -> Result<(), FsError> {
    if depth > MAX_PATH_DEPTH {
        return Err(too_long(
            given,
            format!(
                "would create an entry {depth} levels below its mount root; the limit is {MAX_PATH_DEPTH}"
            ),
        ));
    }
    if host_len > MAX_PATH_BYTES {
        return Err(too_long(
            given,
            format!(
                "would create a host path of {host_len} bytes; the limit is {MAX_PATH_BYTES} (PATH_MAX)"
            ),
        ));
    }
    Ok(())
}
