//! Running a local engine (poppler, espeak-ng): through
//! `talon_hooks::process::run_bounded` (a [`talon_proc_tree::ChildCommand`]
//! with an exact environment, its own process group, a timeout, capped
//! output), under `/bin/sh` `ulimit`s for address space, CPU time and
//! file size, in a private directory.

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

/// How engines are started: the environment (built by the caller from
/// the exec-env policy) and the limits.
#[derive(Debug, Clone)]
pub struct EngineRunner {
    env: BTreeMap<String, String>,
    limits: EngineLimits,
}

impl EngineRunner {
    /// A runner giving each engine exactly `env` (its `PATH` finds the
    /// engines).
    pub fn new(env: BTreeMap<String, String>, limits: EngineLimits) -> Self {
        EngineRunner { env, limits }
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
        let cmd = BoundedCommand {
            program: "/bin/sh".to_owned(),
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
