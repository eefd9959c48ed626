//! Shared fixtures: a temp tree with a workspace, a read-only agent dir, a
//! read-only skills overlay nested in the workspace, and an outside dir
//! holding a secret, plus symlinks of every escape class.
#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use talon_fs_bridge::{Mount, MountBridge};

pub const SECRET: &[u8] = b"TOP-SECRET";

pub struct Fixture {
    pub tmp: tempfile::TempDir,
    pub bridge: MountBridge,
}

impl Fixture {
    pub fn root(&self) -> PathBuf {
        self.tmp.path().canonicalize().unwrap()
    }
    pub fn ws(&self) -> PathBuf {
        self.root().join("ws")
    }
    pub fn outside(&self) -> PathBuf {
        self.root().join("outside")
    }
    /// Every file under `outside/` with its bytes (to prove nothing changed).
    pub fn outside_snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        snapshot(&self.outside())
    }
}

pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let ft = entry.file_type().unwrap();
            if ft.is_dir() {
                out.insert(entry.path(), b"<dir>".to_vec());
                todo.push(entry.path());
            } else if ft.is_symlink() {
                out.insert(entry.path(), b"<link>".to_vec());
            } else {
                out.insert(entry.path(), std::fs::read(entry.path()).unwrap());
            }
        }
    }
    out
}

/// Build the tree; `kernel` picks the openat2 fast path or the walker,
/// `nested` adds the read-only `/workspace/skills` overlay (with it the fast
/// path refuses symlinks under `/workspace` and hands them to the walker).
///
/// ```text
/// outside/secret.txt              TOP-SECRET
/// outside/sub/deeper.txt
/// ws/ (/workspace, rw)
///   inside.txt, sub/file.txt, skills/SKILL.md (host copy, not the mount)
///   link_in -> sub/file.txt                 (relative, inside)
///   link_in_abs -> /workspace/sub/file.txt  (absolute in the namespace)
///   link_dir_in -> sub
///   chain_in_a -> chain_in_b -> sub/file.txt
///   esc_file_abs -> <root>/outside/secret.txt
///   esc_file_rel -> ../outside/secret.txt
///   esc_dir_abs  -> <root>/outside
///   esc_dir_rel  -> ../outside
///   deep/esc_dir_rel2 -> ../../outside
///   chain_a -> chain_b -> chain_c -> ../outside/secret.txt
///   dchain_a -> dchain_b -> esc_dir_rel
///   magic -> /proc/self/root
///   dangling_out -> <root>/outside/missing
///   to_skills -> skills                     (into the nested ro mount)
/// skills_src/ (/workspace/skills, ro) SKILL.md
/// agent/ (/agent, ro) notes.md
/// ```
pub fn fixture_cfg(kernel: bool, nested: bool) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let ws = root.join("ws");
    let outside = root.join("outside");
    std::fs::create_dir_all(outside.join("sub")).unwrap();
    std::fs::write(outside.join("secret.txt"), SECRET).unwrap();
    std::fs::write(outside.join("sub/deeper.txt"), SECRET).unwrap();
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::create_dir_all(ws.join("deep")).unwrap();
    std::fs::create_dir_all(ws.join("skills")).unwrap();
    std::fs::write(ws.join("skills/SKILL.md"), b"host copy").unwrap();
    std::fs::write(ws.join("inside.txt"), b"inside").unwrap();
    std::fs::write(ws.join("sub/file.txt"), b"sub file").unwrap();
    std::fs::create_dir_all(root.join("skills_src")).unwrap();
    std::fs::write(root.join("skills_src/SKILL.md"), b"skill source").unwrap();
    std::fs::create_dir_all(root.join("agent")).unwrap();
    std::fs::write(root.join("agent/notes.md"), b"notes").unwrap();

    symlink("sub/file.txt", ws.join("link_in")).unwrap();
    symlink("/workspace/sub/file.txt", ws.join("link_in_abs")).unwrap();
    symlink("sub", ws.join("link_dir_in")).unwrap();
    symlink("chain_in_b", ws.join("chain_in_a")).unwrap();
    symlink("sub/file.txt", ws.join("chain_in_b")).unwrap();
    symlink(outside.join("secret.txt"), ws.join("esc_file_abs")).unwrap();
    symlink("../outside/secret.txt", ws.join("esc_file_rel")).unwrap();
    symlink(&outside, ws.join("esc_dir_abs")).unwrap();
    symlink("../outside", ws.join("esc_dir_rel")).unwrap();
    symlink("../../outside", ws.join("deep/esc_dir_rel2")).unwrap();
    symlink("chain_b", ws.join("chain_a")).unwrap();
    symlink("chain_c", ws.join("chain_b")).unwrap();
    symlink("../outside/secret.txt", ws.join("chain_c")).unwrap();
    symlink("dchain_b", ws.join("dchain_a")).unwrap();
    symlink("esc_dir_rel", ws.join("dchain_b")).unwrap();
    symlink("/proc/self/root", ws.join("magic")).unwrap();
    symlink(outside.join("missing"), ws.join("dangling_out")).unwrap();
    symlink("skills", ws.join("to_skills")).unwrap();

    let mut mounts = vec![
        Mount::writable("/workspace", &ws),
        Mount::read_only("/agent", root.join("agent")),
    ];
    if nested {
        mounts.push(Mount::read_only(
            "/workspace/skills",
            root.join("skills_src"),
        ));
    }
    let bridge = MountBridge::new(mounts, "/workspace").unwrap();
    bridge.set_kernel_resolution(kernel);
    Fixture { tmp, bridge }
}

/// The nested-overlay fixture with the fast path on.
pub fn fixture(kernel: bool) -> Fixture {
    fixture_cfg(kernel, true)
}

/// (kernel, nested): openat2 alone, openat2 + walker for symlinks under a
/// mount with a nested mount, walker alone.
pub const CONFIGS: [(bool, bool); 3] = [(true, false), (true, true), (false, false)];

/// Both resolution strategies.
pub const MODES: [bool; 2] = [true, false];
