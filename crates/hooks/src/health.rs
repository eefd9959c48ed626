//! The load-time check of the command hooks (`tools.hooks`): every hook
//! that cannot run is found when the configuration is loaded, not on the
//! first call it blocks.
//!
//! [`HooksConfig::check`] resolves each hook exactly as
//! [`Hooks::add_command_hooks_with_env`](crate::Hooks::add_command_hooks_with_env)
//! does (program path against the config directory, `cwd`, the environment
//! built by the exec-env policy, so the `PATH` the program is looked up on)
//! and answers a [`HookProblem`] for each one whose program is missing, is
//! not an executable regular file, names a missing `#!` interpreter, whose
//! working directory is not a directory, or whose configuration is refused
//! by [`HooksConfig::validate`].
//!
//! The check changes nothing at call time: a broken hook stays registered
//! and fails the way it always did (a `before_tool_call` hook blocks every
//! call it matches, fail closed; a `resolve_exec_env` hook is skipped and
//! named in the exec result's `pluginEnvFailed`; an `after_tool_call`
//! observer's failure is logged). Messages name paths and config keys,
//! never environment values: the `PATH` searched is described by how many
//! directories it has, not by its contents.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use rustix::fs::{Access, AtFlags, CWD, accessat};
use serde::Serialize;
use talon_exec_env::EnvPolicy;

use crate::command::CommandHook;
use crate::config::{CommandHookConfig, HooksConfig};

/// What is wrong with a configured hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[non_exhaustive]
pub enum HookProblemKind {
    /// The program (or the interpreter its `#!` line names) does not
    /// exist: not at its path, or on no directory of the hook's `PATH`.
    #[serde(rename = "hook.missing_program")]
    MissingProgram,
    /// The program exists but cannot be executed by this process: not a
    /// regular file, no execute permission, or not reachable.
    #[serde(rename = "hook.not_executable")]
    NotExecutable,
    /// The hook's working directory (`cwd`, default the config file's
    /// directory) is missing or not a directory.
    #[serde(rename = "hook.bad_cwd")]
    BadCwd,
    /// The hook's configuration is refused (empty id or command, bad
    /// matcher, timeout out of range, refused `env` key, ...).
    #[serde(rename = "hook.bad_config")]
    BadConfig,
}

impl HookProblemKind {
    /// The stable code (`hook.missing_program`, ...).
    pub fn code(self) -> &'static str {
        match self {
            HookProblemKind::MissingProgram => "hook.missing_program",
            HookProblemKind::NotExecutable => "hook.not_executable",
            HookProblemKind::BadCwd => "hook.bad_cwd",
            HookProblemKind::BadConfig => "hook.bad_config",
        }
    }
}

/// The hook point a command hook is configured for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HookEvent {
    /// `tools.hooks.beforeToolCall`.
    BeforeToolCall,
    /// `tools.hooks.afterToolCall`.
    AfterToolCall,
    /// `tools.hooks.resolveExecEnv`.
    ResolveExecEnv,
}

impl HookEvent {
    /// The event name (`before_tool_call`, ...), as the program sees it in
    /// `TALON_HOOK`.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::BeforeToolCall => "before_tool_call",
            HookEvent::AfterToolCall => "after_tool_call",
            HookEvent::ResolveExecEnv => "resolve_exec_env",
        }
    }

    /// The list's key below `tools.hooks` (`beforeToolCall`, ...).
    pub fn config_key(self) -> &'static str {
        match self {
            HookEvent::BeforeToolCall => "beforeToolCall",
            HookEvent::AfterToolCall => "afterToolCall",
            HookEvent::ResolveExecEnv => "resolveExecEnv",
        }
    }

    /// What a hook of this event that cannot run does to the calls.
    fn effect(self) -> &'static str {
        match self {
            HookEvent::BeforeToolCall => {
                "every tool call it matches is blocked until this is fixed"
            }
            HookEvent::ResolveExecEnv => {
                "exec runs without the variables it would add (named in pluginEnvFailed) until this is fixed"
            }
            HookEvent::AfterToolCall => "it observes no call until this is fixed",
        }
    }
}

/// One configured hook that cannot run, found by [`HooksConfig::check`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookProblem {
    /// The hook's id (empty when the id itself is the problem).
    pub hook_id: String,
    /// The hook point it is configured for.
    pub event: HookEvent,
    /// What is wrong.
    pub kind: HookProblemKind,
    /// Where, below the config root (`tools.hooks.beforeToolCall[0].command`).
    pub key_path: String,
    /// What is wrong, what that does to calls, and how to fix it.
    pub message: String,
}

impl HookProblem {
    /// The stable code of [`HookProblem::kind`].
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }
}

/// The search path `execvp` uses when the environment has no `PATH`
/// (glibc's `_CS_PATH`).
const DEFAULT_SEARCH_PATH: &str = "/bin:/usr/bin";

/// How much of a script is read to find its `#!` line (the kernel reads
/// 256 bytes).
const SHEBANG_PREFIX: u64 = 256;

impl HooksConfig {
    /// Every hook that cannot run, in configuration order: the problems of
    /// [`HooksConfig::validate`] as [`HookProblemKind::BadConfig`], then,
    /// for each hook with a program, whether it can be started as
    /// [`Hooks::add_command_hooks_with_env`](crate::Hooks::add_command_hooks_with_env)
    /// would start it with the same `base_dir` and `env_policy`.
    ///
    /// Touches only the file system (`stat`, `access`, the first bytes of
    /// a script); it starts nothing.
    pub fn check(&self, base_dir: &Path, env_policy: &EnvPolicy) -> Vec<HookProblem> {
        let mut out = Vec::new();
        for (key, message) in self.validate() {
            let Some((event, index)) = locate(&key) else {
                continue;
            };
            let hook_id = self
                .list(event)
                .get(index)
                .map(|h| h.id.clone())
                .unwrap_or_default();
            out.push(HookProblem {
                hook_id,
                event,
                kind: HookProblemKind::BadConfig,
                key_path: format!("tools.hooks.{key}"),
                message,
            });
        }
        for event in [
            HookEvent::BeforeToolCall,
            HookEvent::AfterToolCall,
            HookEvent::ResolveExecEnv,
        ] {
            for (index, config) in self.list(event).iter().enumerate() {
                let has_program = config.command.first().is_some_and(|p| !p.trim().is_empty());
                if !has_program {
                    // Already a `bad_config` problem above.
                    continue;
                }
                let hook = CommandHook::from_config_with_env(config, base_dir, env_policy);
                let at = |key: &str| format!("tools.hooks.{}[{index}].{key}", event.config_key());
                for (kind, key, what, fix) in runnability(&hook) {
                    out.push(HookProblem {
                        hook_id: config.id.clone(),
                        event,
                        kind,
                        key_path: at(key),
                        message: format!("{what}; {}; {fix}", event.effect()),
                    });
                }
            }
        }
        out
    }

    /// The hooks configured for `event`.
    fn list(&self, event: HookEvent) -> &[CommandHookConfig] {
        match event {
            HookEvent::BeforeToolCall => &self.before_tool_call,
            HookEvent::AfterToolCall => &self.after_tool_call,
            HookEvent::ResolveExecEnv => &self.resolve_exec_env,
        }
    }
}

/// The event and index of a [`HooksConfig::validate`] key path
/// (`beforeToolCall[2].matcher[0]` → `(BeforeToolCall, 2)`).
fn locate(key: &str) -> Option<(HookEvent, usize)> {
    let (list, rest) = key.split_once('[')?;
    let (index, _) = rest.split_once(']')?;
    let event = [
        HookEvent::BeforeToolCall,
        HookEvent::AfterToolCall,
        HookEvent::ResolveExecEnv,
    ]
    .into_iter()
    .find(|e| e.config_key() == list)?;
    Some((event, index.parse().ok()?))
}

/// One finding of [`runnability`]: kind, the key below the hook, what is
/// wrong, how to fix it.
type Finding = (HookProblemKind, &'static str, String, String);

/// Why `hook` cannot be started, if it cannot: its working directory,
/// then its program (and the program's `#!` interpreter).
fn runnability(hook: &CommandHook) -> Vec<Finding> {
    let mut out = Vec::new();
    let cwd = hook.cwd();
    match std::fs::metadata(cwd) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => out.push((
            HookProblemKind::BadCwd,
            "cwd",
            format!("working directory `{}` is not a directory", cwd.display()),
            "set `cwd` to a directory (default: the config file's directory)".to_owned(),
        )),
        Err(e) => out.push((
            HookProblemKind::BadCwd,
            "cwd",
            format!("working directory `{}` is unusable: {e}", cwd.display()),
            "create it or set `cwd` to an existing directory".to_owned(),
        )),
    }
    let program = hook.program();
    let resolved = if program.contains('/') {
        // Made absolute against the config directory by `CommandHook`; a
        // path that is still relative is taken from the child's cwd.
        let path = without_dot_segments(&cwd.join(program));
        match examine(&path) {
            Examined::Runnable => Some(path),
            Examined::Missing(why) => {
                out.push((
                    HookProblemKind::MissingProgram,
                    "command",
                    format!("program `{}` {why}", path.display()),
                    "install it there or fix `command[0]` (a relative path is taken from the config file's directory)".to_owned(),
                ));
                None
            }
            Examined::NotRunnable(why) => {
                out.push((
                    HookProblemKind::NotExecutable,
                    "command",
                    format!("program `{}` {why}", path.display()),
                    not_executable_fix(&path),
                ));
                None
            }
        }
    } else {
        match search_path(program, hook.search_path(), cwd) {
            Searched::Found(path) => Some(path),
            Searched::NotRunnable(path, why) => {
                out.push((
                    HookProblemKind::NotExecutable,
                    "command",
                    format!(
                        "program `{program}` was found on the hook's PATH at `{}`, which {why}",
                        path.display()
                    ),
                    not_executable_fix(&path),
                ));
                None
            }
            Searched::Missing { dirs, default } => {
                let which = if default {
                    format!(
                        "the hook's environment has no PATH, so the default search path ({DEFAULT_SEARCH_PATH}) is used"
                    )
                } else {
                    format!("its PATH has {dirs} director{}", plural_y(dirs))
                };
                out.push((
                    HookProblemKind::MissingProgram,
                    "command",
                    format!("program `{program}` is not found on the PATH the hook runs with ({which})"),
                    "install it on that PATH, or give `command[0]` as an absolute path (hooks get the host's PATH through tools.exec.env; tools.exec.env.set.PATH replaces it)".to_owned(),
                ));
                None
            }
        }
    };
    if let Some(path) = resolved
        && let Some((interpreter, first_arg)) = shebang_interpreter(&path)
    {
        let shown = interpreter.display();
        match examine(&interpreter) {
            Examined::Runnable => {
                // `#!/usr/bin/env NAME`: NAME is looked up on the same PATH.
                if interpreter.file_name().is_some_and(|n| n == "env")
                    && let Some(name) =
                        first_arg.filter(|a| !a.starts_with('-') && !a.contains('='))
                    && let Searched::Missing { .. } = search_path(&name, hook.search_path(), cwd)
                {
                    out.push((
                        HookProblemKind::MissingProgram,
                        "command",
                        format!(
                            "program `{}` runs `{name}` through `{shown}` on its `#!` line, and `{name}` is not found on the PATH the hook runs with",
                            path.display()
                        ),
                        format!("install `{name}` on that PATH or name its absolute path on the `#!` line"),
                    ));
                }
            }
            Examined::Missing(why) => out.push((
                HookProblemKind::MissingProgram,
                "command",
                format!(
                    "program `{}` names the interpreter `{shown}` on its `#!` line, which {why}",
                    path.display()
                ),
                format!("install `{shown}` or fix the script's `#!` line"),
            )),
            Examined::NotRunnable(why) => out.push((
                HookProblemKind::NotExecutable,
                "command",
                format!(
                    "program `{}` names the interpreter `{shown}` on its `#!` line, which {why}",
                    path.display()
                ),
                format!("fix the script's `#!` line or the permissions of `{shown}`"),
            )),
        }
    }
    out
}

/// `path` without its `.` segments (`/cfg/./hooks/x` → `/cfg/hooks/x`):
/// the same file, shown as an operator would write it. `..` is kept, since
/// removing it is not the same file when a link precedes it.
fn without_dot_segments(path: &Path) -> PathBuf {
    path.components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}

/// "y" or "ies".
fn plural_y(n: usize) -> &'static str {
    if n == 1 { "y" } else { "ies" }
}

/// How to fix a program that exists but cannot be run.
fn not_executable_fix(path: &Path) -> String {
    format!(
        "make it executable (`chmod +x {}`), or name its interpreter first in `command` (e.g. [\"/bin/sh\", \"{}\"])",
        path.display(),
        path.display()
    )
}

/// What [`examine`] found at a path.
enum Examined {
    /// A regular file this process may execute.
    Runnable,
    /// Nothing there (the text says why, e.g. "does not exist").
    Missing(String),
    /// Something there that cannot be executed.
    NotRunnable(String),
}

/// Whether `path` can be executed as a program, as `execve` would judge
/// it for this process's effective ids.
fn examine(path: &Path) -> Examined {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return if std::fs::symlink_metadata(path).is_ok() {
                Examined::Missing("is a symbolic link to nothing".to_owned())
            } else {
                Examined::Missing("does not exist".to_owned())
            };
        }
        Err(e) => return Examined::NotRunnable(format!("cannot be examined: {e}")),
    };
    if meta.is_dir() {
        return Examined::NotRunnable("is a directory, not a program".to_owned());
    }
    if !meta.is_file() {
        return Examined::NotRunnable("is not a regular file".to_owned());
    }
    match accessat(CWD, path, Access::EXEC_OK, AtFlags::EACCESS) {
        Ok(()) => Examined::Runnable,
        Err(e) => Examined::NotRunnable(format!(
            "is not executable by this process ({})",
            std::io::Error::from(e)
        )),
    }
}

/// What [`search_path`] found.
enum Searched {
    /// The first runnable candidate.
    Found(PathBuf),
    /// No runnable candidate, but this one exists and cannot be run (as
    /// `execvp`, which reports `EACCES` then).
    NotRunnable(PathBuf, String),
    /// No candidate at all, after searching `dirs` directories (`default`
    /// when the environment had no `PATH`).
    Missing { dirs: usize, default: bool },
}

/// Look `program` up as `execvp` does on `path` (the child's `PATH`, or
/// [`DEFAULT_SEARCH_PATH`] when it has none); an empty or relative entry
/// is taken from the child's working directory `cwd`.
fn search_path(program: &str, path: Option<&str>, cwd: &Path) -> Searched {
    let default = path.is_none();
    let path = path.unwrap_or(DEFAULT_SEARCH_PATH);
    let mut first_refused = None;
    let mut dirs = 0;
    for dir in path.split(':') {
        dirs += 1;
        let dir = if dir.is_empty() {
            cwd.to_path_buf()
        } else {
            cwd.join(dir)
        };
        let candidate = without_dot_segments(&dir.join(program));
        match examine(&candidate) {
            Examined::Runnable => return Searched::Found(candidate),
            Examined::Missing(_) => {}
            Examined::NotRunnable(why) => {
                if first_refused.is_none() {
                    first_refused = Some((candidate, why));
                }
            }
        }
    }
    match first_refused {
        Some((candidate, why)) => Searched::NotRunnable(candidate, why),
        None => Searched::Missing { dirs, default },
    }
}

/// The absolute interpreter a script's `#!` line names and the first word
/// after it, if it is a readable script with one (a binary, an unreadable
/// file or a relative interpreter is not judged here).
fn shebang_interpreter(path: &Path) -> Option<(PathBuf, Option<String>)> {
    let file = std::fs::File::open(path).ok()?;
    let mut head = Vec::new();
    file.take(SHEBANG_PREFIX).read_to_end(&mut head).ok()?;
    let rest = head.strip_prefix(b"#!")?;
    let line = rest.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut words = line.split_ascii_whitespace();
    let interpreter = Path::new(words.next()?);
    let first_arg = words.next().map(str::to_owned);
    interpreter
        .is_absolute()
        .then(|| (interpreter.to_path_buf(), first_arg))
}

#[cfg(test)]
#[path = "health_tests.rs"]
mod tests;
