//! A temp tree with a workspace `ws/` and a sibling `outside/` holding a
//! secret, the four tools on a host bridge over `ws/`, and helpers.
#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Map, Value};
use talon_fs_bridge::{
    Access, DirEntry, EditFn, FileContents, FileStat, FsBridge, FsError, FsErrorCode, MountBridge,
    ResolvedPath, WriteOptions, WriteReport,
};
use talon_tool_catalog::{CancellationToken, Tool, ToolCall, ToolContext, ToolError, ToolResult};
use talon_tools::{ApplyPatchTool, EditTool, ReadLimits, ReadTool, WriteTool};

pub const SECRET: &[u8] = b"TOP-SECRET\n";

pub struct Ws {
    pub tmp: tempfile::TempDir,
    pub bridge: Arc<dyn FsBridge>,
}

impl Ws {
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("ws")).unwrap();
        std::fs::create_dir(tmp.path().join("outside")).unwrap();
        std::fs::write(tmp.path().join("outside/secret.txt"), SECRET).unwrap();
        let bridge = MountBridge::host(tmp.path().join("ws")).unwrap();
        Ws {
            tmp,
            bridge: Arc::new(bridge),
        }
    }

    pub fn root(&self) -> PathBuf {
        self.tmp.path().canonicalize().unwrap()
    }
    pub fn ws(&self) -> PathBuf {
        self.root().join("ws")
    }
    pub fn outside(&self) -> PathBuf {
        self.root().join("outside")
    }
    pub fn put(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let p = self.ws().join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(p, bytes).unwrap();
    }
    pub fn get(&self, rel: &str) -> String {
        std::fs::read_to_string(self.ws().join(rel)).unwrap()
    }
    pub fn exists(&self, rel: &str) -> bool {
        self.ws().join(rel).symlink_metadata().is_ok()
    }
    /// Every file, dir and link of the whole temp tree with its bytes.
    pub fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        snapshot(&self.root())
    }
    pub fn read_tool(&self) -> ReadTool {
        ReadTool::new(self.bridge.clone(), ReadLimits::default())
    }
    pub fn write_tool(&self) -> WriteTool {
        WriteTool::new(self.bridge.clone())
    }
    pub fn edit_tool(&self) -> EditTool {
        EditTool::new(self.bridge.clone())
    }
    pub fn patch_tool(&self) -> ApplyPatchTool {
        ApplyPatchTool::new(self.bridge.clone())
    }
}

pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let ft = entry.file_type().unwrap();
            if ft.is_symlink() {
                let target = std::fs::read_link(entry.path()).unwrap();
                out.insert(
                    entry.path(),
                    format!("<link {}>", target.display()).into_bytes(),
                );
            } else if ft.is_dir() {
                out.insert(entry.path(), b"<dir>".to_vec());
                todo.push(entry.path());
            } else {
                out.insert(entry.path(), std::fs::read(entry.path()).unwrap());
            }
        }
    }
    out
}

pub fn params(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("params must be an object, got {other}"),
    }
}

pub async fn call(tool: &dyn Tool, args: Value) -> Result<ToolResult, ToolError> {
    let call = ToolCall {
        id: "call-1".into(),
        name: tool.spec().name.clone(),
        params: params(args),
    };
    tool.execute(
        &call,
        &ToolContext::new("main", "agent:main:main"),
        &CancellationToken::new(),
    )
    .await
}

/// The error of a call that must fail.
pub async fn fail(tool: &dyn Tool, args: Value) -> ToolError {
    match call(tool, args).await {
        Ok(r) => panic!("expected an error, got {}", r.text()),
        Err(e) => e,
    }
}

/// A 1x1 PNG.
pub const TINY_PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0xF8, 0xCF, 0xC0, 0xF0,
    0x1F, 0x00, 0x05, 0x00, 0x01, 0xFF, 0x89, 0x99, 0x3D, 0x1D, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
];

/// A bridge that forwards to another and fails every mutation (write,
/// edit, remove, rename) from the `fail_from`-th one on (1-based): the
/// trait seam where a disk-full or a dying container shows up.
#[derive(Debug)]
pub struct FailingBridge {
    pub inner: Arc<dyn FsBridge>,
    pub fail_from: usize,
    pub fail_until: usize,
    pub mutations: AtomicUsize,
}

impl FailingBridge {
    pub fn new(inner: Arc<dyn FsBridge>, fail_from: usize, fail_until: usize) -> Self {
        FailingBridge {
            inner,
            fail_from,
            fail_until,
            mutations: AtomicUsize::new(0),
        }
    }
    fn gate(&self, path: &str) -> Result<(), FsError> {
        let n = self.mutations.fetch_add(1, Ordering::SeqCst) + 1;
        if n >= self.fail_from && n <= self.fail_until {
            return Err(FsError::new(
                FsErrorCode::Io,
                path,
                format!("injected failure of mutation {n}: no space left on device"),
            ));
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl FsBridge for FailingBridge {
    fn cwd(&self) -> &str {
        self.inner.cwd()
    }
    async fn resolve(&self, path: &str, access: Access) -> Result<ResolvedPath, FsError> {
        self.inner.resolve(path, access).await
    }
    async fn read(&self, path: &str, max_bytes: Option<u64>) -> Result<FileContents, FsError> {
        self.inner.read(path, max_bytes).await
    }
    async fn write(
        &self,
        path: &str,
        data: &[u8],
        options: WriteOptions,
    ) -> Result<WriteReport, FsError> {
        self.gate(path)?;
        self.inner.write(path, data, options).await
    }
    async fn edit(&self, path: &str, edit: &EditFn<'_>) -> Result<WriteReport, FsError> {
        self.gate(path)?;
        self.inner.edit(path, edit).await
    }
    async fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        self.inner.stat(path).await
    }
    async fn list(&self, path: &str) -> Result<Vec<DirEntry>, FsError> {
        self.inner.list(path).await
    }
    async fn mkdir(&self, path: &str, recursive: bool) -> Result<(), FsError> {
        self.gate(path)?;
        self.inner.mkdir(path, recursive).await
    }
    async fn remove(&self, path: &str, recursive: bool) -> Result<(), FsError> {
        self.gate(path)?;
        self.inner.remove(path, recursive).await
    }
    async fn rename(&self, from: &str, to: &str, overwrite: bool) -> Result<(), FsError> {
        self.gate(from)?;
        self.inner.rename(from, to, overwrite).await
    }
}
