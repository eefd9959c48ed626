//! [`RemoteBridge`]: the [`FsBridge`] over SFTP for a sandbox's remote
//! copy, with the local bridge's guarantees and error codes.
//!
//! Paths are remote absolute paths (or relative to the remote workdir).
//! Each path is normalised lexically, mapped to a mount (longest prefix),
//! then resolved on the server: SFTP `realpath` of the path (OpenSSH's
//! server resolves every symlink and allows a missing last component), or,
//! when an inner component is missing, of its deepest existing ancestor
//! with the missing rest appended (whose first component must really be
//! missing, not a dangling symlink). The real path must lie under a
//! mount's real root: an absolute, relative, chained or dangling symlink
//! that leads out is refused with `escape`. Mutations re-resolve
//! immediately before they act (and refuse when the answer changed), act
//! on the resolved real path, and write through a temp file in the same
//! directory renamed into place. A read-only mount refuses every mutation
//! (`read-only`), whichever path reaches it.
//!
//! Known limit: SFTP has no `openat`, so a symlink swapped in by a remote
//! process between the last re-check and the operation itself (a window
//! of one round trip) is not caught; the local bridge closes that window
//! with `openat2`, this one narrows it.

use std::sync::Arc;

use bytes::BytesMut;
use openssh_sftp_client::Sftp;
use openssh_sftp_client::error::SftpErrorKind;
use openssh_sftp_client::metadata::MetaData;
use talon_fs_bridge::path_rules::{
    check_entry_name, demands_directory, directory_not_file, mount_root_refused,
    trailing_slash_creates_no_file, trailing_slash_on_non_directory,
};
use talon_fs_bridge::{
    Access, DirEntry, EditFn, FileContents, FileKind, FileStat, FsBridge, FsError, FsErrorCode,
    ResolvedPath, WriteOptions, WriteReport, normalize_path,
};

use crate::connection::SshConnection;
use crate::sync::{mkdir_p, permissions, temp_sibling};

/// One remote mount: a directory of the sandbox's remote copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteMount {
    /// The remote directory (absolute, as the sandbox sees it).
    pub path: String,
    /// Whether every mutation under it is refused.
    pub read_only: bool,
}

#[derive(Debug, Clone)]
struct OpenMount {
    path: String,
    /// The canonical remote path (symlinks in the root resolved once).
    real: String,
    read_only: bool,
}

/// The file bridge over a sandbox's remote copy (see the module docs).
#[derive(Debug)]
pub struct RemoteBridge {
    conn: Arc<SshConnection>,
    cwd: String,
    mounts: Vec<OpenMount>,
}

fn is_under(path: &str, prefix: &str) -> bool {
    if prefix == "/" {
        return true;
    }
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

fn parent_of(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

fn join(base: &str, rest: &str) -> String {
    if rest.is_empty() {
        base.to_owned()
    } else if base == "/" {
        format!("/{rest}")
    } else {
        format!("{base}/{rest}")
    }
}

fn sftp_code(err: &openssh_sftp_client::Error) -> FsErrorCode {
    match err {
        openssh_sftp_client::Error::SftpError(SftpErrorKind::NoSuchFile, _) => {
            FsErrorCode::NotFound
        }
        openssh_sftp_client::Error::SftpError(..) => FsErrorCode::Io,
        _ => FsErrorCode::Unavailable,
    }
}

fn is_not_found(err: &openssh_sftp_client::Error) -> bool {
    sftp_code(err) == FsErrorCode::NotFound
}

fn kind_of(meta: &MetaData) -> FileKind {
    match meta.file_type() {
        Some(t) if t.is_dir() => FileKind::Directory,
        Some(t) if t.is_file() => FileKind::File,
        Some(t) if t.is_symlink() => FileKind::Symlink,
        _ => FileKind::Other,
    }
}

/// A path after resolution.
#[derive(Debug, Clone)]
struct Resolved {
    /// Normalised path as given.
    norm: String,
    /// The real remote path.
    real: String,
    /// The mount holding the real path.
    mount: usize,
    /// `lstat` of the real path, when something exists there.
    meta: Option<MetaData>,
}

impl RemoteBridge {
    /// A bridge over `mounts` with relative paths starting at `cwd`.
    /// Resolves each mount root on the server once (they must exist).
    pub async fn new(
        conn: Arc<SshConnection>,
        mounts: Vec<RemoteMount>,
        cwd: &str,
    ) -> Result<Self, FsError> {
        if mounts.is_empty() {
            return Err(FsError::new(
                FsErrorCode::InvalidPath,
                "",
                "the remote mount table is empty",
            ));
        }
        let sftp = sftp_of(&conn, cwd).await?;
        let mut open = Vec::new();
        for m in mounts {
            let path = normalize_path(&m.path, "/")?;
            let real = sftp
                .fs()
                .canonicalize(&path)
                .await
                .map_err(|e| {
                    FsError::new(
                        sftp_code(&e),
                        path.clone(),
                        format!("remote mount `{path}` cannot be resolved: {e}"),
                    )
                })?
                .to_string_lossy()
                .into_owned();
            open.push(OpenMount {
                path,
                real,
                read_only: m.read_only,
            });
        }
        open.sort_by(|a, b| a.path.cmp(&b.path));
        let cwd = normalize_path(cwd, "/")?;
        Ok(RemoteBridge {
            conn,
            cwd,
            mounts: open,
        })
    }

    fn lexical_mount(&self, norm: &str) -> Option<usize> {
        self.mounts
            .iter()
            .enumerate()
            .filter(|(_, m)| is_under(norm, &m.path) || is_under(norm, &m.real))
            .max_by_key(|(_, m)| {
                if is_under(norm, &m.path) {
                    m.path.len()
                } else {
                    m.real.len()
                }
            })
            .map(|(i, _)| i)
    }

    fn real_mount(&self, real: &str) -> Option<usize> {
        self.mounts
            .iter()
            .enumerate()
            .filter(|(_, m)| is_under(real, &m.real))
            .max_by_key(|(_, m)| m.real.len())
            .map(|(i, _)| i)
    }

    /// Whether `path` (normalised or real) is a mount root.
    fn is_mount_root(&self, path: &str) -> bool {
        self.mounts.iter().any(|m| m.path == path || m.real == path)
    }

    fn list_mounts(&self) -> String {
        self.mounts
            .iter()
            .map(|m| m.path.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    async fn sftp(&self, path: &str) -> Result<Arc<Sftp>, FsError> {
        sftp_of(&self.conn, path).await
    }

    /// Map an SFTP failure: connection errors drop the channel so the
    /// next call reconnects.
    async fn fail(&self, path: &str, what: &str, err: openssh_sftp_client::Error) -> FsError {
        let code = sftp_code(&err);
        if code == FsErrorCode::Unavailable {
            self.conn.drop_sftp().await;
        }
        let message = match code {
            FsErrorCode::NotFound => format!("`{path}` does not exist on the remote host"),
            FsErrorCode::Unavailable => format!(
                "the remote host cannot be reached to {what} `{path}` ({err}); the next call \
                 reconnects"
            ),
            _ => format!("could not {what} `{path}` on the remote host: {err}"),
        };
        FsError::new(code, path, message)
    }

    /// Resolve `path` beneath the mounts (module docs).
    async fn resolve_inner(&self, path: &str, access: Access) -> Result<Resolved, FsError> {
        let norm = normalize_path(path, &self.cwd)?;
        let Some(lexical) = self.lexical_mount(&norm) else {
            return Err(FsError::new(
                FsErrorCode::OutsideMounts,
                path,
                format!(
                    "`{norm}` is outside the sandbox's remote directories ({}); use a path inside \
                     one",
                    self.list_mounts()
                ),
            ));
        };
        let sftp = self.sftp(path).await?;
        let mut ancestor = norm.clone();
        let mut tail: Vec<String> = Vec::new();
        let real_ancestor = loop {
            match sftp.fs().canonicalize(&ancestor).await {
                Ok(real) => break real.to_string_lossy().into_owned(),
                Err(e) if is_not_found(&e) && ancestor != "/" => {
                    let (parent, name) = match ancestor.rsplit_once('/') {
                        Some((p, n)) => (if p.is_empty() { "/" } else { p }, n),
                        None => ("/", ancestor.as_str()),
                    };
                    tail.insert(0, name.to_owned());
                    ancestor = parent.to_owned();
                }
                Err(e) => return Err(self.fail(path, "resolve", e).await),
            }
        };
        if let Some(first) = tail.first() {
            // The first missing component must be missing, not a
            // dangling symlink the server could not resolve.
            let probe = join(&real_ancestor, first);
            match sftp.fs().symlink_metadata(&probe).await {
                Err(e) if is_not_found(&e) => {}
                Ok(_) => {
                    return Err(FsError::new(
                        FsErrorCode::Escape,
                        path,
                        format!(
                            "`{norm}` goes through a symlink whose target does not exist \
                             (`{probe}`); it could lead outside the sandbox, so it is refused"
                        ),
                    ));
                }
                Err(e) => return Err(self.fail(path, "resolve", e).await),
            }
        }
        let real = join(&real_ancestor, &tail.join("/"));
        let Some(mount) = self.real_mount(&real) else {
            return Err(FsError::new(
                FsErrorCode::Escape,
                path,
                format!(
                    "`{norm}` resolves to `{real}`, outside the sandbox's remote directories (a \
                     symlink leads out); refused"
                ),
            ));
        };
        if access == Access::Write
            && (self.mounts[mount].read_only || self.mounts[lexical].read_only)
        {
            let ro = if self.mounts[mount].read_only {
                mount
            } else {
                lexical
            };
            return Err(FsError::new(
                FsErrorCode::ReadOnly,
                path,
                format!(
                    "`{norm}` is in the read-only `{}`; write inside a writable directory",
                    self.mounts[ro].path
                ),
            ));
        }
        let meta = if tail.is_empty() {
            match sftp.fs().symlink_metadata(&real).await {
                Ok(meta) => Some(meta),
                Err(e) if is_not_found(&e) => None,
                Err(e) => return Err(self.fail(path, "stat", e).await),
            }
        } else {
            None
        };
        if let Some(meta) = &meta
            && kind_of(meta) == FileKind::Symlink
        {
            return Err(FsError::new(
                FsErrorCode::Escape,
                path,
                format!("`{norm}` is a symlink that does not resolve; refused"),
            ));
        }
        if demands_directory(path)
            && meta
                .as_ref()
                .is_some_and(|m| kind_of(m) != FileKind::Directory)
        {
            return Err(trailing_slash_on_non_directory(path));
        }
        Ok(Resolved {
            norm,
            real,
            mount,
            meta,
        })
    }

    /// Re-resolve immediately before a mutation; refuse when the path
    /// now lands elsewhere.
    async fn recheck(&self, path: &str, before: &Resolved) -> Result<Resolved, FsError> {
        let now = self.resolve_inner(path, Access::Write).await?;
        if now.real != before.real {
            return Err(FsError::new(
                FsErrorCode::Escape,
                path,
                format!(
                    "`{}` changed while it was being written (it now resolves to `{}`); refused",
                    before.norm, now.real
                ),
            ));
        }
        Ok(now)
    }

    /// The parent of `path` resolved for a mutation of the entry itself
    /// (remove / rename act on a symlink, not its target): `(real parent,
    /// name, lstat of the entry)`.
    async fn resolve_entry(
        &self,
        path: &str,
    ) -> Result<(String, String, Option<MetaData>, String), FsError> {
        let norm = normalize_path(path, &self.cwd)?;
        let Some((parent, name)) = norm.rsplit_once('/') else {
            return Err(FsError::new(
                FsErrorCode::InvalidPath,
                path,
                "not an absolute path",
            ));
        };
        if self.is_mount_root(&norm) {
            return Err(mount_root_refused(path, "remove or rename"));
        }
        if demands_directory(path) {
            // `link/` names what the link points to, which may be a mount
            // root; a file there is not-a-directory (from resolution).
            let target = self.resolve_inner(path, Access::Read).await?;
            if target.meta.is_some() && self.is_mount_root(&target.real) {
                return Err(mount_root_refused(path, "remove or rename"));
            }
        }
        check_entry_name(path)?;
        let parent = if parent.is_empty() { "/" } else { parent };
        let resolved_parent =
            self.resolve_inner(parent, Access::Write)
                .await
                .map_err(|mut e| {
                    e.path = path.to_owned();
                    e
                })?;
        if self
            .lexical_mount(&norm)
            .is_some_and(|i| self.mounts[i].read_only)
        {
            return Err(FsError::new(
                FsErrorCode::ReadOnly,
                path,
                format!("`{norm}` is in a read-only directory of the sandbox"),
            ));
        }
        let entry = join(&resolved_parent.real, name);
        let sftp = self.sftp(path).await?;
        let meta = match sftp.fs().symlink_metadata(&entry).await {
            Ok(m) => Some(m),
            Err(e) if is_not_found(&e) => None,
            Err(e) => return Err(self.fail(path, "stat", e).await),
        };
        Ok((resolved_parent.real, name.to_owned(), meta, norm))
    }

    async fn read_real(
        &self,
        path: &str,
        real: &str,
        max_bytes: Option<u64>,
    ) -> Result<(Vec<u8>, u64), FsError> {
        let sftp = self.sftp(path).await?;
        let mut file = match sftp.open(real).await {
            Ok(f) => f,
            Err(e) => return Err(self.fail(path, "open", e).await),
        };
        let total = match file.metadata().await {
            Ok(m) => m.len().unwrap_or(0),
            Err(e) => return Err(self.fail(path, "stat", e).await),
        };
        let limit = max_bytes.unwrap_or(u64::MAX);
        let mut out = Vec::new();
        while (out.len() as u64) < limit {
            let want = (limit - out.len() as u64).min(64 * 1024) as u32;
            match file
                .read(want, BytesMut::with_capacity(want as usize))
                .await
            {
                Ok(Some(chunk)) => out.extend_from_slice(&chunk),
                Ok(None) => break,
                Err(e) => return Err(self.fail(path, "read", e).await),
            }
        }
        let _ = file.close().await;
        Ok((out, total))
    }

    async fn write_real(
        &self,
        path: &str,
        resolved: &Resolved,
        data: &[u8],
        mode: u32,
    ) -> Result<(), FsError> {
        let sftp = self.sftp(path).await?;
        let temp = temp_sibling(&resolved.real);
        let result = async {
            let mut file = sftp
                .options()
                .write(true)
                .create_new(true)
                .open(&temp)
                .await
                .map_err(|e| ("create a temp file for", e))?;
            file.write_all(data).await.map_err(|e| ("write", e))?;
            file.set_permissions(permissions(mode))
                .await
                .map_err(|e| ("set the mode of", e))?;
            file.close().await.map_err(|e| ("close", e))?;
            Ok::<_, (&str, openssh_sftp_client::Error)>(())
        }
        .await;
        if let Err((what, e)) = result {
            let _ = sftp.fs().remove_file(&temp).await;
            return Err(self.fail(path, what, e).await);
        }
        // Immediately before the rename: the target must still resolve
        // to the same place.
        if let Err(e) = self.recheck(path, resolved).await {
            let _ = sftp.fs().remove_file(&temp).await;
            return Err(e);
        }
        if let Err(e) = sftp.fs().rename(&temp, &resolved.real).await {
            let _ = sftp.fs().remove_file(&temp).await;
            return Err(self.fail(path, "replace", e).await);
        }
        Ok(())
    }

    async fn remove_tree(&self, sftp: &Sftp, path: &str, real: &str) -> Result<(), FsError> {
        let mut stack = vec![(real.to_owned(), false)];
        while let Some((dir, visited)) = stack.pop() {
            if visited {
                if let Err(e) = sftp.fs().remove_dir(&dir).await {
                    return Err(self.fail(path, "remove", e).await);
                }
                continue;
            }
            stack.push((dir.clone(), true));
            let handle = match sftp.fs().open_dir(&dir).await {
                Ok(h) => h,
                Err(e) => return Err(self.fail(path, "list", e).await),
            };
            let entries = list_dir(handle).await.map_err(|e| {
                FsError::new(
                    FsErrorCode::Io,
                    path,
                    format!("could not list `{dir}`: {e}"),
                )
            })?;
            for (name, kind, _) in entries {
                let child = join(&dir, &name);
                if kind == FileKind::Directory {
                    stack.push((child, false));
                } else if let Err(e) = sftp.fs().remove_file(&child).await {
                    return Err(self.fail(path, "remove", e).await);
                }
            }
        }
        Ok(())
    }
}

async fn sftp_of(conn: &SshConnection, path: &str) -> Result<Arc<Sftp>, FsError> {
    conn.sftp().await.map_err(|e| {
        FsError::new(
            FsErrorCode::Unavailable,
            path,
            format!("the sandbox's remote host is not reachable: {e}"),
        )
    })
}

async fn list_dir(
    dir: openssh_sftp_client::fs::Dir,
) -> Result<Vec<(String, FileKind, u64)>, openssh_sftp_client::Error> {
    use futures::StreamExt;
    let mut out = Vec::new();
    let mut stream = std::pin::pin!(dir.read_dir());
    while let Some(entry) = stream.next().await {
        let entry = entry?;
        let name = entry.filename().to_string_lossy().into_owned();
        if name == "." || name == ".." {
            continue;
        }
        let meta = entry.metadata();
        let kind = kind_of(&meta);
        let size = if kind == FileKind::File {
            meta.len().unwrap_or(0)
        } else {
            0
        };
        out.push((name, kind, size));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

fn not_found(path: &str, norm: &str) -> FsError {
    FsError::new(
        FsErrorCode::NotFound,
        path,
        format!("`{norm}` does not exist in the sandbox"),
    )
}

#[async_trait::async_trait]
impl FsBridge for RemoteBridge {
    fn cwd(&self) -> &str {
        &self.cwd
    }

    async fn resolve(&self, path: &str, access: Access) -> Result<ResolvedPath, FsError> {
        let r = self.resolve_inner(path, access).await?;
        let m = &self.mounts[r.mount];
        Ok(ResolvedPath {
            container_path: r.real.clone(),
            host_path: None,
            mount: m.path.clone(),
            read_only: m.read_only,
            exists: r.meta.is_some(),
        })
    }

    async fn read(&self, path: &str, max_bytes: Option<u64>) -> Result<FileContents, FsError> {
        let r = self.resolve_inner(path, Access::Read).await?;
        let Some(meta) = &r.meta else {
            return Err(not_found(path, &r.norm));
        };
        if kind_of(meta) != FileKind::File {
            return Err(FsError::new(
                FsErrorCode::NotAFile,
                path,
                format!("`{}` is not a regular file", r.norm),
            ));
        }
        let (bytes, total) = self.read_real(path, &r.real, max_bytes).await?;
        let truncated = (bytes.len() as u64) < total;
        Ok(FileContents {
            bytes,
            total_size: total,
            truncated,
        })
    }

    async fn write(
        &self,
        path: &str,
        data: &[u8],
        options: WriteOptions,
    ) -> Result<WriteReport, FsError> {
        if demands_directory(path) {
            // A trailing `/` names a directory: nothing is written.
            let r = self.resolve_inner(path, Access::Read).await?;
            return Err(match r.meta {
                Some(_) => directory_not_file(path),
                None => trailing_slash_creates_no_file(path),
            });
        }
        let mut r = self.resolve_inner(path, Access::Write).await?;
        let mut mode = 0o644;
        if let Some(meta) = &r.meta {
            if options.create_new {
                return Err(FsError::new(
                    FsErrorCode::AlreadyExists,
                    path,
                    format!("`{}` already exists", r.norm),
                ));
            }
            if kind_of(meta) != FileKind::File {
                return Err(FsError::new(
                    FsErrorCode::NotAFile,
                    path,
                    format!("`{}` is not a regular file", r.norm),
                ));
            }
            mode = meta
                .permissions()
                .map_or(0o644, |p| p.as_raw().bits() & 0o777);
        }
        let created = r.meta.is_none();
        let parent = parent_of(&r.real).to_owned();
        let sftp = self.sftp(path).await?;
        if sftp.fs().metadata(&parent).await.is_err() {
            if !options.create_parents {
                return Err(FsError::new(
                    FsErrorCode::NotFound,
                    path,
                    format!("the directory of `{}` does not exist", r.norm),
                ));
            }
            // Every new directory lies under the checked real ancestor.
            mkdir_p(&sftp, &parent).await.map_err(|e| {
                FsError::new(
                    FsErrorCode::Io,
                    path,
                    format!("could not create `{parent}`: {e}"),
                )
            })?;
            r = self.recheck(path, &r).await?;
        }
        self.write_real(path, &r, data, mode).await?;
        Ok(WriteReport {
            container_path: r.real,
            created,
            bytes: data.len() as u64,
        })
    }

    async fn edit(&self, path: &str, edit: &EditFn<'_>) -> Result<WriteReport, FsError> {
        let r = self.resolve_inner(path, Access::Write).await?;
        let Some(meta) = &r.meta else {
            return Err(not_found(path, &r.norm));
        };
        if kind_of(meta) != FileKind::File {
            return Err(FsError::new(
                FsErrorCode::NotAFile,
                path,
                format!("`{}` is not a regular file", r.norm),
            ));
        }
        let mode = meta
            .permissions()
            .map_or(0o644, |p| p.as_raw().bits() & 0o777);
        let (bytes, _) = self.read_real(path, &r.real, None).await?;
        let new = edit(&bytes)?;
        self.write_real(path, &r, &new, mode).await?;
        Ok(WriteReport {
            container_path: r.real,
            created: false,
            bytes: new.len() as u64,
        })
    }

    async fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        let r = self.resolve_inner(path, Access::Read).await?;
        let Some(meta) = r.meta else {
            return Err(not_found(path, &r.norm));
        };
        Ok(FileStat {
            kind: kind_of(&meta),
            size: meta.len().unwrap_or(0),
            mode: meta.permissions().map_or(0, |p| p.as_raw().bits() & 0o7777),
            modified: meta.modified().map(|t| t.as_system_time()),
        })
    }

    async fn list(&self, path: &str) -> Result<Vec<DirEntry>, FsError> {
        let r = self.resolve_inner(path, Access::Read).await?;
        let Some(meta) = &r.meta else {
            return Err(not_found(path, &r.norm));
        };
        if kind_of(meta) != FileKind::Directory {
            return Err(FsError::new(
                FsErrorCode::NotADirectory,
                path,
                format!("`{}` is not a directory", r.norm),
            ));
        }
        let sftp = self.sftp(path).await?;
        let dir = match sftp.fs().open_dir(&r.real).await {
            Ok(d) => d,
            Err(e) => return Err(self.fail(path, "list", e).await),
        };
        let entries = match list_dir(dir).await {
            Ok(e) => e,
            Err(e) => return Err(self.fail(path, "list", e).await),
        };
        Ok(entries
            .into_iter()
            .map(|(name, kind, size)| DirEntry { name, kind, size })
            .collect())
    }

    async fn mkdir(&self, path: &str, recursive: bool) -> Result<(), FsError> {
        let r = self.resolve_inner(path, Access::Write).await?;
        if let Some(meta) = &r.meta {
            if kind_of(meta) == FileKind::Directory && recursive {
                return Ok(());
            }
            return Err(FsError::new(
                FsErrorCode::AlreadyExists,
                path,
                format!("`{}` already exists", r.norm),
            ));
        }
        let sftp = self.sftp(path).await?;
        let r = self.recheck(path, &r).await?;
        if recursive {
            mkdir_p(&sftp, &r.real).await.map_err(|e| {
                FsError::new(
                    FsErrorCode::Io,
                    path,
                    format!("could not create `{}`: {e}", r.norm),
                )
            })
        } else {
            match sftp.fs().create_dir(&r.real).await {
                Ok(()) => Ok(()),
                Err(e) => Err(self.fail(path, "create", e).await),
            }
        }
    }

    async fn remove(&self, path: &str, recursive: bool) -> Result<(), FsError> {
        let (parent, name, meta, norm) = self.resolve_entry(path).await?;
        let Some(meta) = meta else {
            return Err(not_found(path, &norm));
        };
        let entry = join(&parent, &name);
        let sftp = self.sftp(path).await?;
        match kind_of(&meta) {
            FileKind::Directory => {
                if recursive {
                    self.remove_tree(&sftp, path, &entry).await
                } else {
                    match sftp.fs().remove_dir(&entry).await {
                        Ok(()) => Ok(()),
                        Err(e) => Err(self.fail(path, "remove (is it empty?)", e).await),
                    }
                }
            }
            _ => match sftp.fs().remove_file(&entry).await {
                Ok(()) => Ok(()),
                Err(e) => Err(self.fail(path, "remove", e).await),
            },
        }
    }

    async fn rename(&self, from: &str, to: &str, overwrite: bool) -> Result<(), FsError> {
        let (from_parent, from_name, from_meta, from_norm) = self.resolve_entry(from).await?;
        if from_meta.is_none() {
            return Err(not_found(from, &from_norm));
        }
        let (to_parent, to_name, to_meta, to_norm) = self.resolve_entry(to).await?;
        if to_meta.is_some() && !overwrite {
            return Err(FsError::new(
                FsErrorCode::AlreadyExists,
                to,
                format!("`{to_norm}` already exists"),
            ));
        }
        let sftp = self.sftp(from).await?;
        match sftp
            .fs()
            .rename(join(&from_parent, &from_name), join(&to_parent, &to_name))
            .await
        {
            Ok(()) => Ok(()),
            Err(e) => Err(self.fail(from, "rename", e).await),
        }
    }
}
