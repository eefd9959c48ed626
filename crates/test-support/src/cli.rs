//! One runner for the `talon` binary (or any CLI under test).
//!
//! A [`Cli`] never reads the developer's own configuration: it removes
//! `TALON_CONFIG` and closes stdin. Point `HOME` and the state directory at
//! a temp dir with [`Cli::home`] and [`Cli::state_dir`].

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

/// A command line being built for the binary under test.
#[derive(Debug)]
pub struct Cli {
    cmd: Command,
}

/// What one run printed and how it exited.
#[derive(Debug)]
pub struct Run {
    /// The exit code (`-1` when killed by a signal).
    pub code: i32,
    /// Standard output, lossily decoded.
    pub stdout: String,
    /// Standard error, lossily decoded.
    pub stderr: String,
}

impl Run {
    /// Standard output parsed as JSON; panics with the text when it is not.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", self.stdout, self.stderr))
    }
}

impl Cli {
    /// The binary at `bin` (for `talon`: `env!("CARGO_BIN_EXE_talon")`),
    /// with `TALON_CONFIG` removed and stdin closed.
    pub fn new(bin: impl AsRef<OsStr>) -> Cli {
        let mut cmd = Command::new(bin);
        cmd.env_remove("TALON_CONFIG").stdin(Stdio::null());
        Cli { cmd }
    }

    /// `--config <path>`, before the arguments that follow.
    pub fn config(mut self, path: impl AsRef<Path>) -> Cli {
        self.cmd.arg("--config").arg(path.as_ref());
        self
    }

    /// `HOME` for the run.
    pub fn home(self, dir: impl AsRef<Path>) -> Cli {
        self.env("HOME", dir.as_ref())
    }

    /// `TALON_STATE_DIR` for the run.
    pub fn state_dir(self, dir: impl AsRef<Path>) -> Cli {
        self.env("TALON_STATE_DIR", dir.as_ref())
    }

    /// One argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Cli {
        self.cmd.arg(arg);
        self
    }

    /// Arguments, in order.
    pub fn args<I, S>(mut self, args: I) -> Cli
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.cmd.args(args);
        self
    }

    /// An environment variable for the run.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Cli {
        self.cmd.env(key, value);
        self
    }

    /// Remove an environment variable for the run.
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Cli {
        self.cmd.env_remove(key);
        self
    }

    /// The command, for a test that needs to spawn it itself (stdin, a
    /// running child).
    pub fn command(self) -> Command {
        self.cmd
    }

    /// Run to completion; panics when the binary cannot be started.
    pub fn run(mut self) -> Run {
        let out = self
            .cmd
            .output()
            .unwrap_or_else(|e| panic!("cannot run {:?}: {e}", self.cmd.get_program()));
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}
