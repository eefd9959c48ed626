//! Reading where the cgroup hierarchies are mounted (`/proc/self/mountinfo`)
//! and which cgroup this process is in (`/proc/self/cgroup`), and joining
//! the two into directories.

use std::path::{Path, PathBuf};

/// One cgroup mount.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CgroupMount {
    /// The cgroup path (inside the hierarchy) that is mounted here.
    pub(crate) root: String,
    /// Where it is mounted.
    pub(crate) mount_point: PathBuf,
    /// `true` for cgroup2, `false` for a v1 hierarchy.
    pub(crate) unified: bool,
    /// A v1 hierarchy's controllers (from the super options; `name=...`
    /// entries are kept as written). Empty for cgroup2.
    pub(crate) controllers: Vec<String>,
}

/// Every cgroup and cgroup2 mount in a `mountinfo` text, in file order.
/// Lines that are not well formed are skipped.
pub(crate) fn parse_mountinfo(text: &str) -> Vec<CgroupMount> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<CgroupMount> {
    // id parent major:minor root mount-point options [optional...] - fstype source super-options
    let (left, right) = line.split_once(" - ")?;
    let mut left = left.split(' ');
    let root = unescape(left.nth(3)?);
    let mount_point = PathBuf::from(unescape(left.next()?));
    let mut right = right.split(' ');
    let fstype = right.next()?;
    let _source = right.next()?;
    let options = right.next().unwrap_or("");
    match fstype {
        "cgroup2" => Some(CgroupMount {
            root,
            mount_point,
            unified: true,
            controllers: Vec::new(),
        }),
        "cgroup" => {
            let controllers = options
                .split(',')
                .filter(|o| !matches!(*o, "rw" | "ro") && !o.is_empty())
                .filter(|o| !o.contains('=') || o.starts_with("name="))
                .filter(|o| {
                    !matches!(
                        *o,
                        "noprefix" | "clone_children" | "xattr" | "cpuset_v2_mode"
                    )
                })
                .map(str::to_owned)
                .collect();
            Some(CgroupMount {
                root,
                mount_point,
                unified: false,
                controllers,
            })
        }
        _ => None,
    }
}

/// Undoes the kernel's octal escapes (`\040` for a space, ...).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 3 < bytes.len() {
            let digits = &bytes[i + 1..i + 4];
            if digits.iter().all(|d| (b'0'..=b'7').contains(d)) {
                let value = digits
                    .iter()
                    .fold(0u32, |acc, d| acc * 8 + u32::from(d - b'0'));
                if let Ok(byte) = u8::try_from(value) {
                    out.push(byte);
                    i += 4;
                    continue;
                }
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// This process's membership in one hierarchy (`/proc/self/cgroup`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Membership {
    /// `true` for the cgroup2 line (`0::/path`).
    pub(crate) unified: bool,
    /// A v1 line's controllers.
    pub(crate) controllers: Vec<String>,
    /// The cgroup path, absolute inside the hierarchy.
    pub(crate) path: String,
}

/// Every line of a `/proc/<pid>/cgroup` text.
pub(crate) fn parse_proc_cgroup(text: &str) -> Vec<Membership> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            let id = parts.next()?;
            let controllers = parts.next()?;
            let path = parts.next()?.to_owned();
            let unified = id == "0" && controllers.is_empty();
            Some(Membership {
                unified,
                controllers: if unified {
                    Vec::new()
                } else {
                    controllers.split(',').map(str::to_owned).collect()
                },
                path,
            })
        })
        .collect()
}

/// The directory of cgroup `path` under `mount`, when the mount shows it
/// (the mounted root must be `path` or one of its ancestors).
pub(crate) fn cgroup_dir(mount: &CgroupMount, path: &str) -> Option<PathBuf> {
    let root = mount.root.trim_end_matches('/');
    let rest = if root.is_empty() {
        path
    } else if path == root {
        ""
    } else {
        let tail = path.strip_prefix(root)?;
        if !tail.starts_with('/') {
            return None;
        }
        tail
    };
    let rest = rest.trim_start_matches('/');
    if rest.split('/').any(|c| c == "..") {
        return None;
    }
    Some(if rest.is_empty() {
        mount.mount_point.clone()
    } else {
        Path::new(&mount.mount_point).join(rest)
    })
}

#[cfg(test)]
#[path = "mountinfo_tests.rs"]
mod tests;
