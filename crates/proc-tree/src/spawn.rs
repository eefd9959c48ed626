//! The one way Talon builds a child process.
//!
//! Every library and binary spawn site starts from [`ChildCommand::new`]
//! (clippy's `disallowed-methods` refuses `Command::new` anywhere else), so
//! every child is built the same way:
//!
//! - its environment is what the caller passes ([`ChildEnv::Exact`], built
//!   by the `talon-exec-env` policy or a fixed set), never this process's
//!   by accident; the parent's whole environment is an explicit
//!   [`ChildEnv::InheritParent`], for a program that re-executes Talon
//!   itself or becomes the command whose environment was already built;
//! - its standard input is `/dev/null` unless the caller sets it;
//! - whether it leads a process group of its own is a [`ProcessGroup`]
//!   chosen at construction (a tokio caller converts with
//!   `tokio::process::Command::from(cmd.into_std())` and chooses
//!   `kill_on_drop` there);
//! - a program that is missing or not executable is a [`SpawnError`]
//!   with a [`SpawnErrorKind`] and the program's name.
//!
//! ```
//! use talon_proc_tree::spawn::{ChildCommand, ChildEnv, ProcessGroup};
//!
//! let env = ChildEnv::exact([("PATH", "/usr/bin:/bin")]);
//! let out = ChildCommand::new("/bin/sh", env, ProcessGroup::Own)
//!     .args(["-c", "echo $PATH"])
//!     .output()?;
//! assert_eq!(out.stdout, b"/usr/bin:/bin\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, ExitStatus, Output, Stdio};

/// The environment a child gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChildEnv {
    /// Exactly these variables and nothing of this process's environment
    /// (the child starts from an empty one).
    Exact(Vec<(OsString, OsString)>),
    /// This process's whole environment. Only for a child that is Talon
    /// itself again (a re-exec, the gateway daemon) or that becomes the
    /// command whose environment was already built by the policy (the
    /// sandbox helper inside bubblewrap); never for a command a user,
    /// model, hook or server configuration names.
    InheritParent,
}

impl ChildEnv {
    /// Exactly the variables in `vars`.
    pub fn exact<I, K, V>(vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        ChildEnv::Exact(
            vars.into_iter()
                .map(|(k, v)| (k.as_ref().to_owned(), v.as_ref().to_owned()))
                .collect(),
        )
    }

    /// No variable at all.
    pub fn empty() -> Self {
        ChildEnv::Exact(Vec::new())
    }
}

/// Whether the child leads a process group of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessGroup {
    /// A new process group whose id is the child's pid, so a signal to the
    /// group reaches it and everything it starts (and a terminal's signals
    /// do not).
    Own,
    /// This process's group (the child is signalled with it).
    Parent,
}

/// A [`Command`] built by the one spawn helper. Its builder methods
/// (`arg`, `args`, `env`, `current_dir`, stdio) chain on the helper, so the
/// chain ends in its own `spawn`, `status`, `output` or `exec`, which give a
/// [`SpawnError`] naming the program; it dereferences to the [`Command`]
/// for anything else (an extension trait, `uid`, ...).
#[derive(Debug)]
pub struct ChildCommand {
    program: OsString,
    cmd: Command,
}

impl ChildCommand {
    /// A command for `program` with exactly the environment `env`, standard
    /// input `/dev/null` (set it to change that) and the process group
    /// `group`.
    pub fn new(program: impl AsRef<OsStr>, env: ChildEnv, group: ProcessGroup) -> Self {
        let program = program.as_ref().to_owned();
        // The one call of `Command::new` in Talon's code (clippy.toml).
        #[allow(clippy::disallowed_methods)]
        let mut cmd = Command::new(&program);
        match env {
            ChildEnv::Exact(vars) => {
                cmd.env_clear().envs(vars);
            }
            ChildEnv::InheritParent => {}
        }
        cmd.stdin(Stdio::null());
        match group {
            ProcessGroup::Own => {
                cmd.process_group(0);
            }
            ProcessGroup::Parent => {}
        }
        ChildCommand { program, cmd }
    }

    /// Adds an argument.
    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Self {
        self.cmd.arg(arg);
        self
    }

    /// Adds arguments.
    pub fn args<I>(&mut self, args: I) -> &mut Self
    where
        I: IntoIterator,
        I::Item: AsRef<OsStr>,
    {
        self.cmd.args(args);
        self
    }

    /// Adds or replaces one variable of the child's environment.
    pub fn env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Self {
        self.cmd.env(key, value);
        self
    }

    /// Sets the working directory.
    pub fn current_dir(&mut self, dir: impl AsRef<std::path::Path>) -> &mut Self {
        self.cmd.current_dir(dir);
        self
    }

    /// Sets standard input (`/dev/null` until set).
    pub fn stdin(&mut self, cfg: impl Into<Stdio>) -> &mut Self {
        self.cmd.stdin(cfg);
        self
    }

    /// Sets standard output.
    pub fn stdout(&mut self, cfg: impl Into<Stdio>) -> &mut Self {
        self.cmd.stdout(cfg);
        self
    }

    /// Sets standard error.
    pub fn stderr(&mut self, cfg: impl Into<Stdio>) -> &mut Self {
        self.cmd.stderr(cfg);
        self
    }

    /// The program as given to [`ChildCommand::new`].
    pub fn program(&self) -> &OsStr {
        &self.program
    }

    /// Starts the child.
    pub fn spawn(&mut self) -> Result<Child, SpawnError> {
        self.cmd
            .spawn()
            .map_err(|e| SpawnError::new(&self.program, e))
    }

    /// Runs the child to its end and returns its exit status.
    pub fn status(&mut self) -> Result<ExitStatus, SpawnError> {
        self.cmd
            .status()
            .map_err(|e| SpawnError::new(&self.program, e))
    }

    /// Runs the child to its end and collects its output (stdout and
    /// stderr piped unless set otherwise; stdin stays as set).
    pub fn output(&mut self) -> Result<Output, SpawnError> {
        self.cmd
            .output()
            .map_err(|e| SpawnError::new(&self.program, e))
    }

    /// Replaces this process with the child; returns only on failure.
    pub fn exec(&mut self) -> SpawnError {
        let e = self.cmd.exec();
        SpawnError::new(&self.program, e)
    }

    /// The built [`Command`], to hand to something that takes one
    /// (`tokio::process::Command::from`, an fd-mapping extension). Map a
    /// later spawn failure with [`SpawnError::new`].
    pub fn into_std(self) -> Command {
        self.cmd
    }
}

impl Deref for ChildCommand {
    type Target = Command;

    fn deref(&self) -> &Command {
        &self.cmd
    }
}

impl DerefMut for ChildCommand {
    fn deref_mut(&mut self) -> &mut Command {
        &mut self.cmd
    }
}

/// What kind of failure kept a child from starting.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpawnErrorKind {
    /// The program (or its interpreter, or the working directory) does not
    /// exist.
    NotFound,
    /// The program exists but cannot be executed (permission bits, mount
    /// options, not an executable format).
    NotExecutable,
    /// Anything else (out of processes or memory, a bad descriptor, ...).
    Other,
}

impl SpawnErrorKind {
    /// A stable machine code for the kind.
    pub fn code(self) -> &'static str {
        match self {
            SpawnErrorKind::NotFound => "spawn.not_found",
            SpawnErrorKind::NotExecutable => "spawn.not_executable",
            SpawnErrorKind::Other => "spawn.failed",
        }
    }

    fn of(e: &std::io::Error) -> Self {
        match e.kind() {
            std::io::ErrorKind::NotFound => SpawnErrorKind::NotFound,
            std::io::ErrorKind::PermissionDenied => SpawnErrorKind::NotExecutable,
            _ if e.raw_os_error() == Some(nix::libc::ENOEXEC) => SpawnErrorKind::NotExecutable,
            _ => SpawnErrorKind::Other,
        }
    }
}

impl fmt::Display for SpawnErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SpawnErrorKind::NotFound => {
                "it was not found (give its full path or put it on the child's PATH)"
            }
            SpawnErrorKind::NotExecutable => {
                "it is not executable (check its permission bits and that it is a program)"
            }
            SpawnErrorKind::Other => "the system refused to start it",
        })
    }
}

/// A child that could not be started: its kind, the program and the OS
/// error as `source()`.
#[derive(Debug, thiserror::Error)]
#[error("cannot start `{program}`: {kind}")]
pub struct SpawnError {
    kind: SpawnErrorKind,
    program: String,
    #[source]
    source: std::io::Error,
}

impl SpawnError {
    /// The error for `program` failing to start with `source`.
    pub fn new(program: impl AsRef<OsStr>, source: std::io::Error) -> Self {
        SpawnError {
            kind: SpawnErrorKind::of(&source),
            program: program.as_ref().to_string_lossy().into_owned(),
            source,
        }
    }

    /// What kind of failure it was.
    pub fn kind(&self) -> SpawnErrorKind {
        self.kind
    }

    /// The program (lossily as text).
    pub fn program(&self) -> &str {
        &self.program
    }

    /// The OS error.
    pub fn io_error(&self) -> &std::io::Error {
        &self.source
    }

    /// The OS error, taken out.
    pub fn into_io_error(self) -> std::io::Error {
        self.source
    }
}

#[cfg(test)]
#[path = "spawn_tests.rs"]
mod tests;
