//! Docker bind specs (`source:target[:options]`) and host path
//! normalisation.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// One parsed bind spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindSpec {
    /// The host source as written (trimmed).
    pub source: String,
    /// The container target as written (trimmed).
    pub target: String,
    /// The options after the target (`ro`, `ro,z`), if any.
    pub options: Option<String>,
}

impl BindSpec {
    /// Split at the first `:` (a leading Windows drive `X:\` / `X:/` is
    /// part of the source); the options are whatever follows the next
    /// `:`. `None` when there is no target.
    pub fn parse(spec: &str) -> Option<BindSpec> {
        let spec = spec.trim();
        let bytes = spec.as_bytes();
        let skip = if bytes.len() >= 3
            && bytes[0].is_ascii_alphabetic()
            && bytes[1] == b':'
            && (bytes[2] == b'\\' || bytes[2] == b'/')
        {
            2
        } else {
            0
        };
        let colon = spec[skip..].find(':')? + skip;
        let source = spec[..colon].trim().to_owned();
        let rest = &spec[colon + 1..];
        let (target, options) = match rest.find(':') {
            Some(i) => (rest[..i].trim(), Some(rest[i + 1..].trim().to_owned())),
            None => (rest.trim(), None),
        };
        if target.is_empty() {
            return None;
        }
        Some(BindSpec {
            source,
            target: target.to_owned(),
            options: options.filter(|o| !o.is_empty()),
        })
    }

    /// Whether the options make the mount read-only (`ro` among them).
    pub fn read_only(&self) -> bool {
        self.options.as_deref().is_some_and(|o| {
            o.split(',')
                .any(|opt| opt.trim().eq_ignore_ascii_case("ro"))
        })
    }
}

/// Lexically normalise an absolute POSIX path: collapse `//`, drop `.`,
/// resolve `..` (never above `/`), strip a trailing `/`. `None` for a
/// relative path.
pub fn normalize_absolute(path: &str) -> Option<PathBuf> {
    let cleaned = path.trim().replace('\\', "/");
    let p = Path::new(&cleaned);
    if !p.is_absolute() {
        return None;
    }
    let mut out = PathBuf::from("/");
    for comp in p.components() {
        match comp {
            Component::Normal(part) => out.push(part),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    Some(out)
}

/// `path` equals `base` or lies beneath it (component-wise).
pub(crate) fn is_within(path: &Path, base: &Path) -> bool {
    path.starts_with(base)
}

/// Resolve a host path the way the kernel would, through the deepest
/// existing ancestor: walk it component by component from `/`, following
/// every symlink met (dangling ones included, so a link to
/// `/etc/nothing-yet` resolves under `/etc`), applying `..` to the
/// *resolved* parent (so `link/..` with `link → /etc/ssl` is `/etc`), and
/// appending the components that do not exist as written. A relative path
/// is taken from `/`. After 40 symlinks a link is kept as a plain name.
pub fn realpath_through_existing(path: &Path) -> PathBuf {
    let mut pending: VecDeque<OsString> = parts(path);
    let mut current = PathBuf::from("/");
    let mut hops = 0usize;
    while let Some(part) = pending.pop_front() {
        if part == ".." {
            current.pop();
            continue;
        }
        let candidate = current.join(&part);
        let is_link =
            std::fs::symlink_metadata(&candidate).is_ok_and(|m| m.file_type().is_symlink());
        if is_link
            && hops < MAX_LINK_HOPS
            && let Ok(target) = std::fs::read_link(&candidate)
        {
            hops += 1;
            if target.is_absolute() {
                current = PathBuf::from("/");
            }
            let mut next = parts(&target);
            next.extend(pending);
            pending = next;
            continue;
        }
        current = candidate;
    }
    current
}

/// The normal and `..` components of a path (`.`, `/` and prefixes
/// dropped).
fn parts(path: &Path) -> VecDeque<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(p) => Some(p.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect()
}

/// Symlink hops followed before giving up (as the kernel's ELOOP limit).
const MAX_LINK_HOPS: usize = 40;

#[cfg(test)]
#[path = "bind_spec_tests.rs"]
mod tests;
