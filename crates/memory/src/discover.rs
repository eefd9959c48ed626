//! Which files are memory files, and finding them through a file bridge.
//!
//! Memory files are `MEMORY.md` (or `memory.md`) at the workspace root,
//! every `*.md` under `memory/`, and the configured extra paths (a
//! Markdown file, or a directory whose `*.md` files count). Symbolic links
//! are never followed while walking, and nothing is read except through
//! the run's [`FsBridge`], so a sandboxed run sees its sandbox's files and
//! a path the file tools may not read is skipped with the bridge's reason.

use std::time::UNIX_EPOCH;

use talon_fs_bridge::{FileKind, FsBridge};

/// The deepest directory level walked under `memory/` or an extra path.
const MAX_DEPTH: usize = 16;
/// The most memory files one index takes (more are skipped, with a notice).
pub const MAX_FILES: usize = 100_000;

/// A memory file found by a walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// The path as the index stores it: relative to the workspace
    /// (`memory/2026-01-02.md`), or an extra path as configured.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Modification time in ns since the epoch (0 when unknown).
    pub mtime_ns: i64,
}

/// A path the walk could not take, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Skipped {
    /// The path.
    pub path: String,
    /// A stable code: `memory.file_too_large`, `memory.invalid_utf8`,
    /// `memory.unreadable`, `memory.extra_path`, `memory.too_many_files`.
    pub code: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// `path` with `./` prefixes and duplicate slashes removed; `None` when it
/// has a `..` component or is empty.
pub fn normalize(path: &str) -> Option<String> {
    let mut parts = Vec::new();
    let absolute = path.starts_with('/');
    for part in path.split('/') {
        match part {
            "" | "." => continue,
            ".." => return None,
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return None;
    }
    let joined = parts.join("/");
    Some(if absolute {
        format!("/{joined}")
    } else {
        joined
    })
}

fn is_markdown(name: &str) -> bool {
    // Compared as bytes: a name is untrusted, and its last three bytes
    // need not start at a character boundary (`a€x`).
    let bytes = name.as_bytes();
    bytes.len() > 3 && bytes[bytes.len() - 3..].eq_ignore_ascii_case(b".md")
}

/// Whether `path` (normalised, relative to the workspace or absolute) is a
/// memory file given the configured `extra` paths (normalised).
pub fn is_memory_path(path: &str, extra: &[String]) -> bool {
    if !is_markdown(path) {
        return false;
    }
    if path == "MEMORY.md" || path == "memory.md" {
        return true;
    }
    if path.starts_with("memory/") {
        return true;
    }
    extra.iter().any(|e| {
        path == e
            || path
                .strip_prefix(e.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// Turn a bridge path (absolute in the bridge's namespace) into the form
/// the index uses: relative to `cwd` when beneath it.
pub(crate) fn relative_to_cwd(container_path: &str, cwd: &str) -> String {
    let cwd = cwd.trim_end_matches('/');
    match container_path.strip_prefix(cwd) {
        Some(rest) if rest.starts_with('/') => rest.trim_start_matches('/').to_owned(),
        _ => container_path.to_owned(),
    }
}

fn mtime_ns(stat: &talon_fs_bridge::FileStat) -> i64 {
    stat.modified
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Every memory file visible through `bridge`, sorted by path, and the
/// paths skipped on the way.
pub(crate) async fn discover(
    bridge: &dyn FsBridge,
    extra: &[String],
) -> (Vec<Found>, Vec<Skipped>) {
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    let cwd = bridge.cwd().to_owned();
    match bridge.list(&cwd).await {
        Ok(entries) => {
            for e in entries {
                let memory_root_file = e.name == "MEMORY.md" || e.name == "memory.md";
                if memory_root_file && e.kind == FileKind::File {
                    add_file(bridge, &e.name, &mut found, &mut skipped).await;
                } else if e.name == "memory" && e.kind == FileKind::Directory {
                    walk(bridge, "memory", 0, &mut found, &mut skipped).await;
                }
            }
        }
        Err(err) => skipped.push(Skipped {
            path: cwd.clone(),
            code: "memory.unreadable".into(),
            message: format!("the workspace cannot be listed: {err}"),
        }),
    }
    for raw in extra {
        let Some(path) = normalize(raw) else {
            skipped.push(Skipped {
                path: raw.clone(),
                code: "memory.extra_path".into(),
                message: format!(
                    "agents.defaults.memorySearch.extraPaths: `{raw}` is empty or has a `..` component; name the file or directory directly"
                ),
            });
            continue;
        };
        match bridge.stat(&path).await {
            Ok(st) if st.kind == FileKind::Directory => {
                walk(bridge, &path, 0, &mut found, &mut skipped).await;
            }
            Ok(st) if st.kind == FileKind::File && is_markdown(&path) => {
                found.push(Found {
                    path: path.clone(),
                    size: st.size,
                    mtime_ns: mtime_ns(&st),
                });
            }
            Ok(_) => skipped.push(Skipped {
                path: path.clone(),
                code: "memory.extra_path".into(),
                message: format!(
                    "agents.defaults.memorySearch.extraPaths: `{path}` is neither a directory nor a Markdown (.md) file"
                ),
            }),
            Err(err) => skipped.push(Skipped {
                path: path.clone(),
                code: "memory.extra_path".into(),
                message: format!(
                    "agents.defaults.memorySearch.extraPaths: `{path}` cannot be read through this run's file bridge: {err}"
                ),
            }),
        }
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found.dedup_by(|a, b| a.path == b.path);
    if found.len() > MAX_FILES {
        skipped.push(Skipped {
            path: found[MAX_FILES].path.clone(),
            code: "memory.too_many_files".into(),
            message: format!(
                "more than {MAX_FILES} memory files; the ones after this path (by name) are not indexed"
            ),
        });
        found.truncate(MAX_FILES);
    }
    (found, skipped)
}

async fn add_file(
    bridge: &dyn FsBridge,
    path: &str,
    found: &mut Vec<Found>,
    skipped: &mut Vec<Skipped>,
) {
    match bridge.stat(path).await {
        Ok(st) => found.push(Found {
            path: path.to_owned(),
            size: st.size,
            mtime_ns: mtime_ns(&st),
        }),
        Err(err) => skipped.push(Skipped {
            path: path.to_owned(),
            code: "memory.unreadable".into(),
            message: format!("{err}"),
        }),
    }
}

fn walk<'a>(
    bridge: &'a dyn FsBridge,
    dir: &'a str,
    depth: usize,
    found: &'a mut Vec<Found>,
    skipped: &'a mut Vec<Skipped>,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'a>> {
    Box::pin(async move {
        if depth > MAX_DEPTH || found.len() > MAX_FILES {
            return;
        }
        let entries = match bridge.list(dir).await {
            Ok(e) => e,
            Err(err) => {
                skipped.push(Skipped {
                    path: dir.to_owned(),
                    code: "memory.unreadable".into(),
                    message: format!("{err}"),
                });
                return;
            }
        };
        for e in entries {
            let path = format!("{}/{}", dir.trim_end_matches('/'), e.name);
            match e.kind {
                FileKind::File if is_markdown(&e.name) => {
                    add_file(bridge, &path, found, skipped).await;
                }
                FileKind::Directory if !e.name.starts_with('.') => {
                    walk(bridge, &path, depth + 1, found, skipped).await;
                }
                // Symbolic links are not followed; other files are not
                // memory.
                _ => {}
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_ending_inside_a_multibyte_character_is_not_markdown_and_does_not_panic() {
        assert!(!is_markdown("a€x"));
        assert!(!is_memory_path("memory/a€x", &[]));
        assert!(is_markdown("été.MD"));
    }

    #[test]
    fn memory_paths() {
        let extra = vec!["notes".to_owned(), "/abs/x.md".to_owned()];
        assert!(is_memory_path("MEMORY.md", &extra));
        assert!(is_memory_path("memory/a/b.md", &extra));
        assert!(is_memory_path("notes/n.md", &extra));
        assert!(is_memory_path("/abs/x.md", &extra));
        assert!(!is_memory_path("memory/a.txt", &extra));
        assert!(!is_memory_path("notesx/n.md", &extra));
        assert!(!is_memory_path("README.md", &extra));
        assert_eq!(normalize("./memory//a.md").as_deref(), Some("memory/a.md"));
        assert_eq!(normalize("memory/../.env"), None);
        assert_eq!(relative_to_cwd("/ws/memory/a.md", "/ws"), "memory/a.md");
        assert_eq!(relative_to_cwd("/other/a.md", "/ws"), "/other/a.md");
    }
}
