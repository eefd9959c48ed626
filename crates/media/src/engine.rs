//! Running a local engine (poppler, espeak-ng): through
//! `talon_hooks::process::run_bounded` (a [`talon_proc_tree::ChildCommand`]
//! with an exact environment, its own process group, a timeout, capped
//! output), under `/bin/sh` `ulimit`s for address space, CPU time and
//! file size, in a private directory.
//!
//! [`EngineRunner::run_isolated`] (poppler) also runs the engine in
//! bubblewrap when it works on this host ([`Isolation`]): no network (a
//! new, empty network namespace), a read-only view of the system dirs
//! only (no home, no state dir, no `/etc` beyond fonts and the loader
//! cache), the private directory as the only writable place, new PID,
//! IPC and UTS namespaces, every capability dropped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use talon_hooks::process::{BoundedCommand, BoundedOutput, RunError, run_bounded};
use talon_tool_catalog::CancellationToken;

use crate::error::{Error, Result};

/// The wrapper that sets the limits, then `exec`s the engine
/// (`$0` is the engine, `$@` its arguments).
const LIMITS_SCRIPT: &str = "ulimit -v \"$TALON_MEDIA_AS_KB\" && ulimit -t \"$TALON_MEDIA_CPU_S\" && ulimit -f \"$TALON_MEDIA_FSIZE_KB\" && unset TALON_MEDIA_AS_KB TALON_MEDIA_CPU_S TALON_MEDIA_FSIZE_KB && exec \"$0\" \"$@\"";

/// Resource limits of one engine run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineLimits {
    /// Wall-clock limit (the whole process group is killed after it).
    pub timeout: Duration,
    /// Address-space limit in bytes (`ulimit -v`).
    pub memory_bytes: u64,
    /// Largest file the engine may write, in bytes (`ulimit -f`).
    pub file_bytes: u64,
    /// Bytes of stdout (and of stderr) kept.
    pub max_output: usize,
}

impl Default for EngineLimits {
    fn default() -> Self {
        EngineLimits {
            timeout: Duration::from_secs(30),
            memory_bytes: 1024 * 1024 * 1024,
            file_bytes: 256 * 1024 * 1024,
            max_output: 16 * 1024 * 1024,
        }
    }
}

/// Where [`EngineRunner::run_isolated`] runs an engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Isolation {
    /// In bubblewrap at this path when it runs a command on this host
    /// (checked once per runner), else directly (the default, with
    /// [`DEFAULT_BWRAP`]).
    Auto(PathBuf),
    /// Always in bubblewrap at this path: when it cannot run, the engine
    /// does not run either.
    Bwrap(PathBuf),
    /// Directly, as [`EngineRunner::run`].
    Off,
}

/// Debian's bubblewrap.
pub const DEFAULT_BWRAP: &str = "/usr/bin/bwrap";

/// Where an isolated engine's private directory is, inside bubblewrap.
const ISOLATED_DIR: &str = "/work";

/// How engines are started: the environment (built by the caller from
/// the exec-env policy) and the limits.
#[derive(Debug, Clone)]
pub struct EngineRunner {
    env: BTreeMap<String, String>,
    limits: EngineLimits,
    isolation: Isolation,
    /// Whether bubblewrap works here (`Auto`, checked once).
    probed: std::sync::Arc<tokio::sync::OnceCell<bool>>,
}

impl EngineRunner {
    /// A runner giving each engine exactly `env` (its `PATH` finds the
    /// engines).
    pub fn new(env: BTreeMap<String, String>, limits: EngineLimits) -> Self {
        EngineRunner {
            env,
            limits,
            isolation: Isolation::Auto(PathBuf::from(DEFAULT_BWRAP)),
            probed: std::sync::Arc::default(),
        }
    }

    /// The same runner with another [`Isolation`].
    pub fn with_isolation(mut self, isolation: Isolation) -> Self {
        self.isolation = isolation;
        self.probed = std::sync::Arc::default();
        self
    }

    /// The bubblewrap [`EngineRunner::run_isolated`] uses, if any
    /// (`Auto`: checked once by running `true` in it).
    pub async fn isolation_in_use(&self) -> Option<PathBuf> {
        match &self.isolation {
            Isolation::Off => None,
            Isolation::Bwrap(bwrap) => Some(bwrap.clone()),
            Isolation::Auto(bwrap) => {
                let works = *self
                    .probed
                    .get_or_init(|| async {
                        if !bwrap.is_file() {
                            return false;
                        }
                        let Ok(dir) = tempfile::tempdir() else {
                            return false;
                        };
                        let cmd = BoundedCommand {
                            program: bwrap.to_string_lossy().into_owned(),
                            args: bwrap_args(dir.path(), &["/bin/true".to_owned()]),
                            cwd: Some(dir.path().to_path_buf()),
                            env: BTreeMap::from([("PATH".to_owned(), "/usr/bin:/bin".to_owned())]),
                            stdin: Vec::new(),
                            timeout: Duration::from_secs(10),
                            max_output: 4096,
                        };
                        matches!(
                            run_bounded(&cmd, &CancellationToken::new()).await,
                            Ok(out) if out.code == Some(0)
                        )
                    })
                    .await;
                works.then(|| bwrap.clone())
            }
        }
    }

    /// [`EngineRunner::run`] in bubblewrap when [`Isolation`] says so
    /// (see the module doc): `dir` is the working directory and the only
    /// writable one, and the only host files visible beside the system
    /// dirs; `args` must name files relative to it.
    pub async fn run_isolated(
        &self,
        program: &str,
        package: &str,
        args: &[String],
        dir: &Path,
        stdin: Vec<u8>,
        abort: &CancellationToken,
    ) -> Result<BoundedOutput> {
        match self.isolation_in_use().await {
            Some(bwrap) => {
                self.run_in(Some(&bwrap), program, package, args, dir, stdin, abort)
                    .await
            }
            None => self.run(program, package, args, dir, stdin, abort).await,
        }
    }

    /// The limits.
    pub fn limits(&self) -> EngineLimits {
        self.limits
    }

    /// The same runner with other limits.
    pub fn with_limits(mut self, limits: EngineLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Where `program` is in the environment's `PATH`, or
    /// [`Error::EngineMissing`] naming `package`.
    pub fn locate(&self, program: &str, package: &str) -> Result<PathBuf> {
        let path = self
            .env
            .get("PATH")
            .map(String::as_str)
            .unwrap_or("/usr/local/bin:/usr/bin:/bin");
        path.split(':')
            .filter(|d| !d.is_empty())
            .map(|d| Path::new(d).join(program))
            .find(|p| p.is_file())
            .ok_or_else(|| Error::EngineMissing {
                program: program.to_owned(),
                package: package.to_owned(),
            })
    }

    /// Run `program` (installed by `package`) with `args` in `dir`,
    /// `stdin` written to it; a non-zero exit is returned, not an error.
    pub async fn run(
        &self,
        program: &str,
        package: &str,
        args: &[String],
        dir: &Path,
        stdin: Vec<u8>,
        abort: &CancellationToken,
    ) -> Result<BoundedOutput> {
        self.run_in(None, program, package, args, dir, stdin, abort)
            .await
    }

    #[allow(clippy::too_many_arguments, reason = "run's arguments and the wrapper")]
    async fn run_in(
        &self,
        bwrap: Option<&Path>,
        program: &str,
        package: &str,
        args: &[String],
        dir: &Path,
        stdin: Vec<u8>,
        abort: &CancellationToken,
    ) -> Result<BoundedOutput> {
        let binary = self.locate(program, package)?;
        let mut env = self.env.clone();
        env.insert(
            "TALON_MEDIA_AS_KB".to_owned(),
            (self.limits.memory_bytes / 1024).max(1).to_string(),
        );
        env.insert(
            "TALON_MEDIA_CPU_S".to_owned(),
            self.limits.timeout.as_secs().max(1).to_string(),
        );
        env.insert(
            "TALON_MEDIA_FSIZE_KB".to_owned(),
            (self.limits.file_bytes / 1024).max(1).to_string(),
        );
        let mut argv = vec![
            "-c".to_owned(),
            LIMITS_SCRIPT.to_owned(),
            binary.to_string_lossy().into_owned(),
        ];
        argv.extend(args.iter().cloned());
        let (program_path, argv) = match bwrap {
            None => ("/bin/sh".to_owned(), argv),
            Some(bwrap) => {
                let mut inner = vec!["/bin/sh".to_owned()];
                inner.extend(argv);
                (
                    bwrap.to_string_lossy().into_owned(),
                    bwrap_args(dir, &inner),
                )
            }
        };
        let cmd = BoundedCommand {
            program: program_path,
            args: argv,
            cwd: Some(dir.to_path_buf()),
            env,
            stdin,
            timeout: self.limits.timeout,
            max_output: self.limits.max_output,
        };
        match run_bounded(&cmd, abort).await {
            Ok(out) => Ok(out),
            Err(RunError::TimedOut(_)) => Err(Error::Timeout {
                program: program.to_owned(),
                seconds: self.limits.timeout.as_secs().max(1),
            }),
            Err(RunError::Aborted) => Err(Error::Aborted),
            Err(e) => Err(Error::EngineFailed {
                program: program.to_owned(),
                message: e.to_string(),
            }),
        }
    }
}

/// bubblewrap's arguments to run `command` with `dir` as the only
/// writable directory (at [`ISOLATED_DIR`], also the working directory),
/// no network and a read-only view of the system dirs.
fn bwrap_args(dir: &Path, command: &[String]) -> Vec<String> {
    let mut args: Vec<String> = [
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    for system in [
        "/usr",
        "/bin",
        "/sbin",
        "/lib",
        "/lib32",
        "/lib64",
        "/etc/fonts",
        "/etc/ld.so.cache",
        "/etc/alternatives",
    ] {
        args.extend([
            "--ro-bind-try".to_owned(),
            system.to_owned(),
            system.to_owned(),
        ]);
    }
    args.extend(
        [
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--bind",
        ]
        .iter()
        .map(|s| (*s).to_owned()),
    );
    args.push(dir.to_string_lossy().into_owned());
    args.extend([
        ISOLATED_DIR.to_owned(),
        "--chdir".to_owned(),
        ISOLATED_DIR.to_owned(),
        "--setenv".to_owned(),
        "HOME".to_owned(),
        "/tmp".to_owned(),
        "--".to_owned(),
    ]);
    args.extend(command.iter().cloned());
    args
}

/// The first non-empty line of stderr, for messages.
pub(crate) fn first_line(stderr: &[u8]) -> String {
    String::from_utf8_lossy(stderr)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no message")
        .chars()
        .take(300)
        .collect()
}

/// How a run that exited non-zero ended, for messages.
pub(crate) fn exit_text(out: &BoundedOutput) -> String {
    match out.code {
        Some(code) => format!("exit {code}: {}", first_line(&out.stderr)),
        None => format!(
            "killed by a signal (a resource limit?): {}",
            first_line(&out.stderr)
        ),
    }
}
