//! The file operands of a shell command: the files whose contents decide
//! what an approved command does, so an approval can be bound to them
//! ([`ExecPin`](crate::exec_approvals::ExecPin)).
//!
//! An operand is
//! - the script an interpreter is given (`python run.py`, `node x.js`,
//!   `bash s.sh`, `perl -w x.pl`, `awk -f prog.awk`, `php -f x.php`; not
//!   `sh -c '…'`, `python -c …`, `python -m mod`, `node -e …`, whose code
//!   is in the command itself: the `-c` string of a shell is read as a
//!   command in its turn),
//! - a program named by a path (`./x`, `bin/tool`, `/opt/x/run`),
//! - the file of `source x` / `. x`,
//! - a module an interpreter preloads (`node -r ./hook.js`, `bash --rcfile
//!   f`),
//! - and, conservatively, any other word that looks like something that
//!   runs (starts with `./` or `../`, or ends in a script extension such as
//!   `.py` or `.sh`), and every later argument of an interpreter whose
//!   options it does not know (`python --weird x.py` pins `x.py`).
//!
//! Hostile spellings are read the way `sh` reads them: quotes and
//! backslashes are removed (`py'thon' "run.py"`), variable assignments
//! (`FOO=1 python x.py`) and wrappers (`exec`, `command`, `env [-i] [-u N]
//! [NAME=v]`, `env -S '…'`, `nice`, `nohup`, `time`, `timeout`, `stdbuf`,
//! `sudo`, `setsid`, …) are skipped, every simple command of a list or
//! pipeline is read, and `$( … )` / backtick substitutions and `-c`
//! strings are read as commands too (up to [`MAX_DEPTH`] levels). A `cd
//! DIR` adds `DIR` as another directory relative operands are pinned in
//! (the old one is kept, since a subshell may have undone the `cd`).
//!
//! What it cannot pin down is reported, never guessed: an operand whose
//! text is expanded at run time (`python "$F"`, `./$x`, `~/x.sh`), a `cd`
//! or `env -C` to such a directory before a relative operand, nesting
//! deeper than [`MAX_DEPTH`], or more than [`MAX_OPERANDS`] operands
//! ([`Operands::unpinnable`]). The approval is then refused: the command
//! must be written so the files it runs can be named.

/// How deep `$( … )`, backticks, `sh -c '…'` and `env -S '…'` are read.
pub const MAX_DEPTH: usize = 4;

/// The most operands a command may have.
pub const MAX_OPERANDS: usize = 64;

/// Why a word is an operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum OperandRole {
    /// A program named by a path (`./x`).
    Program,
    /// The script an interpreter runs.
    Script,
    /// The file of `source` / `.`.
    Sourced,
    /// A module or rc file an interpreter loads before the script.
    Preload,
    /// A word that may be run (script-like name, `./` prefix, or an
    /// argument after options the reader does not know).
    Possible,
}

impl OperandRole {
    /// A short name for messages.
    pub fn as_str(self) -> &'static str {
        match self {
            OperandRole::Program => "program",
            OperandRole::Script => "script",
            OperandRole::Sourced => "sourced file",
            OperandRole::Preload => "preloaded file",
            OperandRole::Possible => "file operand",
        }
    }
}

/// One file operand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operand {
    /// The path to check: the word as written, joined to the directory a
    /// preceding `cd` moved to (relative to the command's working
    /// directory, or absolute).
    pub path: String,
    /// The word as written (after quote removal).
    pub written: String,
    /// Why it is an operand.
    pub role: OperandRole,
}

/// The operands of one command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Operands {
    /// Every operand, once per path, in order of appearance.
    pub operands: Vec<Operand>,
    /// What could not be pinned down (the approval must be refused when
    /// this is not empty), as short descriptions.
    pub unpinnable: Vec<String>,
}

/// Script extensions whose files are pinned wherever they appear.
const SCRIPT_EXTENSIONS: &[&str] = &[
    "sh", "bash", "zsh", "ksh", "fish", "py", "pyw", "js", "mjs", "cjs", "ts", "mts", "cts", "rb",
    "pl", "pm", "php", "lua", "r", "ps1", "psm1", "tcl", "awk", "jar", "command",
];

/// The file operands of `command`.
pub fn file_operands(command: &str) -> Operands {
    let mut reader = Reader::default();
    reader.list(command, 0);
    if reader.out.operands.len() > MAX_OPERANDS {
        reader.out.unpinnable.push(format!(
            "more than {MAX_OPERANDS} file operands ({})",
            reader.out.operands.len()
        ));
    }
    reader.out
}

/// One word after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Word {
    text: String,
    /// False when the shell would change it at run time (a parameter,
    /// substitution, glob, brace or leading `~`).
    exact: bool,
}

enum Token {
    Word(Word),
    /// `;`, `&`, `|`, `&&`, `||`, newline, `(`, `)`.
    Separator,
    /// `<`, `>`, `>>`, `2>&1`, …: the next word is a redirection target.
    Redirect,
}

#[derive(Default)]
struct Reader {
    out: Operands,
}

/// The directories relative operands are pinned in: `None` is one whose
/// name is only known at run time.
type Dirs = Vec<Option<String>>;

impl Reader {
    /// Read a command list (what `sh -c` would run).
    fn list(&mut self, text: &str, depth: usize) {
        if depth > MAX_DEPTH {
            self.out
                .unpinnable
                .push(format!("commands nested deeper than {MAX_DEPTH} levels"));
            return;
        }
        let mut nested = Vec::new();
        let tokens = lex(text, &mut nested);
        for inner in nested {
            self.list(&inner, depth + 1);
        }
        let mut dirs: Dirs = vec![Some(String::new())];
        let mut words: Vec<Word> = Vec::new();
        let mut redirect_next = false;
        for token in tokens {
            match token {
                // A redirection target is written or read, not run.
                Token::Word(_) if redirect_next => redirect_next = false,
                Token::Word(w) => words.push(w),
                Token::Redirect => redirect_next = true,
                Token::Separator => {
                    redirect_next = false;
                    self.simple(&std::mem::take(&mut words), &mut dirs, depth);
                }
            }
        }
        self.simple(&words, &mut dirs, depth);
    }

    fn add(&mut self, dirs: &Dirs, word: &Word, role: OperandRole) {
        if !word.exact {
            self.out.unpinnable.push(format!(
                "the {} `{}` is expanded at run time",
                role.as_str(),
                word.text
            ));
            return;
        }
        if word.text.is_empty() || word.text == "-" {
            return;
        }
        let absolute = word.text.starts_with('/');
        for dir in dirs {
            let path = match dir {
                _ if absolute => word.text.clone(),
                Some(d) if d.is_empty() => word.text.clone(),
                Some(d) => format!("{d}/{}", word.text),
                None => {
                    self.out.unpinnable.push(format!(
                        "the {} `{}` is relative to a directory named only at run time",
                        role.as_str(),
                        word.text
                    ));
                    continue;
                }
            };
            if let Some(existing) = self.out.operands.iter_mut().find(|o| o.path == path) {
                existing.role = existing.role.min(role);
            } else {
                self.out.operands.push(Operand {
                    path,
                    written: word.text.clone(),
                    role,
                });
            }
            if absolute {
                break;
            }
        }
    }

    /// A word that looks like something that runs is pinned wherever it
    /// appears.
    fn scan_possible(&mut self, dirs: &Dirs, words: &[Word]) {
        for w in words {
            if w.exact && looks_runnable(&w.text) {
                self.add(dirs, w, OperandRole::Possible);
            }
        }
    }

    /// One simple command.
    fn simple(&mut self, words: &[Word], dirs: &mut Dirs, depth: usize) {
        self.scan_possible(dirs, words);
        let mut i = 0;
        // Wrappers and assignments before the command, repeatedly.
        loop {
            while words.get(i).is_some_and(|w| is_assignment(&w.text)) {
                i += 1;
            }
            let Some(first) = words.get(i) else { return };
            if !first.exact {
                // `$X args`: which program runs is only known at run time;
                // a path-like one cannot be pinned, and its arguments are
                // pinned as if it were an unknown interpreter.
                if first.text.contains('/') {
                    self.add(dirs, first, OperandRole::Program);
                }
                self.conservative(dirs, &words[i + 1..]);
                return;
            }
            match skip_wrapper(words, i, dirs, self, depth) {
                Some(next) => i = next,
                None => break,
            }
        }
        let Some(program) = words.get(i) else { return };
        let args = &words[i + 1..];
        let name = program.text.as_str();
        if name == "cd" || name == "pushd" {
            match args.iter().find(|w| !w.text.starts_with('-')) {
                Some(w) if w.exact => push_dir(dirs, &w.text),
                _ => dirs.push(None),
            }
            return;
        }
        if name == "source" || name == "." {
            if let Some(file) = args.first() {
                self.add(dirs, file, OperandRole::Sourced);
            }
            return;
        }
        if name.contains('/') {
            self.add(dirs, program, OperandRole::Program);
        }
        let base = name.rsplit('/').next().unwrap_or(name);
        if let Some(kind) = interpreter(base) {
            self.interpreter(kind, args, dirs, depth);
        }
    }

    /// Every later exact argument that is not an option is a possible
    /// operand.
    fn conservative(&mut self, dirs: &Dirs, args: &[Word]) {
        for w in args {
            if !w.text.starts_with('-') && w.exact && !w.text.is_empty() {
                self.add(dirs, w, OperandRole::Possible);
            }
        }
    }

    fn interpreter(&mut self, kind: Interp, args: &[Word], dirs: &Dirs, depth: usize) {
        let spec = kind.spec();
        let mut i = 0;
        if let Some(subcommands) = spec.subcommands
            && let Some(w) = args.first()
        {
            if subcommands.contains(&w.text.as_str()) {
                i = 1;
            } else if spec.eval_subcommands.contains(&w.text.as_str()) {
                return;
            }
        }
        while let Some(w) = args.get(i) {
            let t = w.text.as_str();
            if !w.exact && t.starts_with('-') {
                // An option spelled at run time: nothing after it can be
                // placed for sure.
                self.conservative(dirs, &args[i + 1..]);
                return;
            }
            if t == "--" {
                if let Some(script) = args.get(i + 1) {
                    self.add(dirs, script, OperandRole::Script);
                }
                return;
            }
            if t == "-" {
                return;
            }
            if let Some(long) = t.strip_prefix("--") {
                let (name, inline) = match long.split_once('=') {
                    Some((n, v)) => (n, Some(v)),
                    None => (long, None),
                };
                if spec.long_code.contains(&name) {
                    return;
                }
                if spec.long_file.contains(&name) {
                    match inline {
                        Some(v) => self.add(
                            dirs,
                            &Word {
                                text: v.to_owned(),
                                exact: w.exact,
                            },
                            OperandRole::Preload,
                        ),
                        None => {
                            if let Some(file) = args.get(i + 1) {
                                self.add(dirs, file, OperandRole::Preload);
                            }
                            i += 1;
                        }
                    }
                    i += 1;
                    continue;
                }
                if spec.long_arg.contains(&name) {
                    i += if inline.is_some() { 1 } else { 2 };
                    continue;
                }
                if spec.long_flags_ok || spec.long_flag.contains(&name) || inline.is_some() {
                    i += 1;
                    continue;
                }
                self.conservative(dirs, &args[i + 1..]);
                return;
            }
            let short = t.strip_prefix('-').or_else(|| {
                (kind == Interp::Shell)
                    .then(|| t.strip_prefix('+'))
                    .flatten()
            });
            let Some(cluster) = short.filter(|c| !c.is_empty()) else {
                // The first operand: the script.
                self.add(dirs, w, OperandRole::Script);
                return;
            };
            let mut next = i + 1;
            for (at, c) in cluster.char_indices() {
                let rest = &cluster[at + c.len_utf8()..];
                if spec.short_code.contains(c) {
                    if kind == Interp::Shell {
                        // `sh -c 'cmd' name args`: the string is a command.
                        if let Some(cmd) = args[next..].iter().find(|w| !w.text.starts_with('-')) {
                            if cmd.exact {
                                self.list(&cmd.text, depth + 1);
                            } else {
                                self.out.unpinnable.push(format!(
                                    "the command string `{}` is expanded at run time",
                                    cmd.text
                                ));
                            }
                        }
                    }
                    return;
                }
                if spec.short_stdin.contains(c) {
                    return;
                }
                if spec.short_file.contains(c) {
                    let file = if rest.is_empty() {
                        next += 1;
                        args.get(next - 1).cloned()
                    } else {
                        Some(Word {
                            text: rest.to_owned(),
                            exact: w.exact,
                        })
                    };
                    if let Some(file) = file {
                        let role = if spec.file_is_script {
                            OperandRole::Script
                        } else {
                            OperandRole::Preload
                        };
                        self.add(dirs, &file, role);
                        if spec.file_is_script {
                            return;
                        }
                    }
                    break;
                }
                if spec.short_arg.contains(c) {
                    if rest.is_empty() {
                        next += 1;
                    }
                    break;
                }
                if !spec.short_flags_ok && !spec.short_flag.contains(c) {
                    self.conservative(dirs, &args[i + 1..]);
                    return;
                }
            }
            i = next;
        }
    }
}

/// `dirs` after `cd dir`: every known directory also gets `dir` appended
/// (or `dir` itself when absolute); the old ones stay.
fn push_dir(dirs: &mut Dirs, dir: &str) {
    let mut added: Dirs = Vec::new();
    for d in dirs.iter() {
        let next = match d {
            _ if dir.starts_with('/') => Some(dir.to_owned()),
            Some(d) if d.is_empty() => Some(dir.to_owned()),
            Some(d) => Some(format!("{d}/{dir}")),
            None => None,
        };
        if !dirs.contains(&next) && !added.contains(&next) {
            added.push(next);
        }
    }
    dirs.extend(added);
}

/// If `words[i]` is a wrapper that runs the rest as a command, the index
/// of the word after its own options; `None` otherwise.
fn skip_wrapper(
    words: &[Word],
    i: usize,
    dirs: &mut Dirs,
    reader: &mut Reader,
    depth: usize,
) -> Option<usize> {
    let name = words[i].text.as_str();
    let base = name.rsplit('/').next().unwrap_or(name);
    // (options taking an argument, positional arguments before the command)
    let (with_arg, positional): (&[&str], usize) = match base {
        "exec" => (&["-a"], 0),
        "command" | "builtin" | "nohup" | "time" | "setsid" | "unbuffer" | "caffeinate" => (&[], 0),
        "nice" => (&["-n", "--adjustment"], 0),
        "ionice" => (&["-c", "-n", "-p", "--class", "--classdata"], 0),
        "timeout" => (&["-s", "--signal", "-k", "--kill-after"], 1),
        "stdbuf" => (&["-i", "-o", "-e"], 0),
        "taskset" => (&[], 1),
        "chrt" => (&[], 1),
        "sudo" | "doas" => (&["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"], 0),
        "env" => (
            &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"],
            0,
        ),
        "xargs" => (&["-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s"], 0),
        _ => return None,
    };
    let mut j = i + 1;
    while let Some(w) = words.get(j) {
        let t = w.text.as_str();
        if t == "--" {
            j += 1;
            break;
        }
        if base == "env" && is_assignment(t) {
            j += 1;
            continue;
        }
        if !t.starts_with('-') || t == "-" {
            if base == "env" && t == "-" {
                j += 1;
                continue;
            }
            break;
        }
        let (flag, inline) = match t.split_once('=') {
            Some((f, v)) if t.starts_with("--") => (f, Some(v.to_owned())),
            _ => (t, None),
        };
        if base == "env" {
            // `-C dir` changes the directory; `-S 'cmd args'` is a command.
            let value = |j: usize| {
                inline
                    .clone()
                    .or_else(|| words.get(j + 1).map(|w| w.text.clone()))
            };
            let exact = inline.is_some() || words.get(j + 1).is_some_and(|w| w.exact);
            if matches!(flag, "-C" | "--chdir") {
                match value(j) {
                    Some(d) if exact => push_dir(dirs, &d),
                    _ => dirs.push(None),
                }
            } else if matches!(flag, "-S" | "--split-string") {
                match value(j) {
                    Some(s) if exact => {
                        let rest: Vec<String> = words[j + if inline.is_some() { 1 } else { 2 }..]
                            .iter()
                            .map(|w| shell_quote(&w.text))
                            .collect();
                        reader.list(&format!("{s} {}", rest.join(" ")), depth + 1);
                    }
                    _ => reader
                        .out
                        .unpinnable
                        .push("an `env -S` string expanded at run time".to_owned()),
                }
                return Some(words.len());
            } else if let Some(c) = flag.strip_prefix('-').filter(|f| !f.starts_with('-'))
                && c.len() > 1
                && (c.ends_with('C') || c.ends_with('S') || c.ends_with('u'))
            {
                // `-iC dir`, `-iS '…'`: read the tail flag on its own.
                reader
                    .out
                    .unpinnable
                    .push(format!("an `env {t}` option cluster"));
                return Some(words.len());
            }
        }
        j += if with_arg.contains(&flag) && inline.is_none() {
            2
        } else {
            1
        };
    }
    Some(j + positional)
}

/// `s` single-quoted for `sh`.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// `NAME=value`.
fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether a word looks like something that runs: `./x`, `../x`, or a
/// script extension.
fn looks_runnable(word: &str) -> bool {
    if word.starts_with("./") || word.starts_with("../") {
        return word.len() > 2 && !word.ends_with('/');
    }
    if word.starts_with('-') || word.contains("://") || word.chars().any(char::is_whitespace) {
        return false;
    }
    let name = word.rsplit('/').next().unwrap_or(word);
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => SCRIPT_EXTENSIONS
            .iter()
            .any(|e| e.eq_ignore_ascii_case(ext)),
        _ => false,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Interp {
    Shell,
    Python,
    Node,
    Deno,
    Bun,
    Perl,
    Ruby,
    Php,
    Awk,
    Generic,
}

/// What an interpreter's options mean.
struct InterpSpec {
    /// Short flags after which the code is in the command (`-c`, `-e`,
    /// `-m`): no script file.
    short_code: &'static str,
    /// Short flags that read the script from stdin.
    short_stdin: &'static str,
    /// Short flags taking a file (attached or the next word).
    short_file: &'static str,
    /// Whether that file is the script (`awk -f`, `php -f`) or a preload.
    file_is_script: bool,
    /// Short flags taking a non-file argument.
    short_arg: &'static str,
    /// Short flags known to take nothing.
    short_flag: &'static str,
    /// Whether every other short flag takes nothing.
    short_flags_ok: bool,
    long_code: &'static [&'static str],
    long_file: &'static [&'static str],
    long_arg: &'static [&'static str],
    long_flag: &'static [&'static str],
    /// Whether every other long flag takes nothing.
    long_flags_ok: bool,
    /// Subcommands skipped before the options (`deno run`).
    subcommands: Option<&'static [&'static str]>,
    /// Subcommands whose code is in the command (`deno eval`).
    eval_subcommands: &'static [&'static str],
}

const DEFAULT_SPEC: InterpSpec = InterpSpec {
    short_code: "",
    short_stdin: "",
    short_file: "",
    file_is_script: false,
    short_arg: "",
    short_flag: "",
    short_flags_ok: false,
    long_code: &[],
    long_file: &[],
    long_arg: &[],
    long_flag: &[],
    long_flags_ok: false,
    subcommands: None,
    eval_subcommands: &[],
};

impl Interp {
    fn spec(self) -> InterpSpec {
        match self {
            Interp::Shell => InterpSpec {
                short_code: "c",
                short_stdin: "s",
                short_arg: "oO",
                short_flag: "abefhiklmnprtuvxBCEHPT",
                long_file: &["rcfile", "init-file"],
                long_flags_ok: true,
                ..DEFAULT_SPEC
            },
            Interp::Python => InterpSpec {
                short_code: "cm",
                short_arg: "WX",
                short_flag: "bBdEhiIOPqsSuvVx",
                long_arg: &["check-hash-based-pycs"],
                long_flag: &["help", "version", "help-env", "help-xoptions", "help-all"],
                ..DEFAULT_SPEC
            },
            Interp::Node | Interp::Bun => InterpSpec {
                short_code: "ep",
                short_file: "r",
                long_code: &["eval", "print"],
                long_file: &[
                    "require",
                    "import",
                    "loader",
                    "experimental-loader",
                    "preload",
                ],
                long_arg: &["input-type", "conditions", "title", "env-file"],
                long_flags_ok: true,
                short_flag: "civ",
                subcommands: (self == Interp::Bun).then_some(&["run", "x"][..]),
                ..DEFAULT_SPEC
            },
            Interp::Deno => InterpSpec {
                long_flags_ok: true,
                short_flag: "AqrL",
                subcommands: Some(&["run", "test", "bench", "serve", "compile"]),
                eval_subcommands: &["eval", "repl"],
                ..DEFAULT_SPEC
            },
            Interp::Perl => InterpSpec {
                short_code: "eE",
                short_file: "",
                short_arg: "IMmlx0",
                short_flags_ok: true,
                ..DEFAULT_SPEC
            },
            Interp::Ruby => InterpSpec {
                short_code: "e",
                short_arg: "IrCEKx",
                short_flags_ok: true,
                long_flags_ok: true,
                ..DEFAULT_SPEC
            },
            Interp::Php => InterpSpec {
                short_code: "rBRE",
                short_file: "f",
                file_is_script: true,
                short_arg: "cdz",
                short_flag: "nqHhv",
                ..DEFAULT_SPEC
            },
            Interp::Awk => InterpSpec {
                short_file: "f",
                file_is_script: true,
                short_arg: "vF",
                // Without `-f` the program text is the first operand.
                short_code: "",
                ..DEFAULT_SPEC
            },
            Interp::Generic => InterpSpec {
                short_code: "ec",
                ..DEFAULT_SPEC
            },
        }
    }
}

/// The interpreter a program name (its base name) stands for.
fn interpreter(base: &str) -> Option<Interp> {
    let python = |n: &str| {
        let rest = n
            .strip_prefix("python")
            .or_else(|| n.strip_prefix("pypy"))
            .or_else(|| n.strip_prefix("pythonw"));
        rest.is_some_and(|r| r.chars().all(|c| c.is_ascii_digit() || c == '.'))
    };
    Some(match base {
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "mksh" | "ash" | "yash" | "posh" | "busybox" => {
            Interp::Shell
        }
        _ if python(base) => Interp::Python,
        "node" | "nodejs" | "tsx" | "ts-node" => Interp::Node,
        "deno" => Interp::Deno,
        "bun" => Interp::Bun,
        "perl" | "perl5" => Interp::Perl,
        "ruby" | "jruby" => Interp::Ruby,
        "php" => Interp::Php,
        "awk" | "gawk" | "mawk" | "nawk" => Interp::Awk,
        "lua" | "luajit" | "Rscript" | "tclsh" | "wish" | "pwsh" | "powershell" | "fish"
        | "osascript" | "java" | "groovy" | "julia" | "elixir" | "erl" | "escript" | "guile"
        | "racket" | "sbcl" | "scala" | "kotlin" | "swift" | "dotnet" | "csi" => Interp::Generic,
        _ => return None,
    })
}

/// Split `text` into tokens the way `sh` would, removing quotes. The text
/// of every `$( … )` and backtick substitution is appended to `nested`.
fn lex(text: &str, nested: &mut Vec<String>) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut word = String::new();
    let mut exact = true;
    let mut in_word = false;
    let mut i = 0;
    let end_word =
        |tokens: &mut Vec<Token>, word: &mut String, exact: &mut bool, in_word: &mut bool| {
            if *in_word {
                tokens.push(Token::Word(Word {
                    text: std::mem::take(word),
                    exact: *exact,
                }));
            }
            *exact = true;
            *in_word = false;
        };
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' => {
                end_word(&mut tokens, &mut word, &mut exact, &mut in_word);
                i += 1;
            }
            '\n' | ';' | '&' | '|' | '(' | ')' => {
                end_word(&mut tokens, &mut word, &mut exact, &mut in_word);
                tokens.push(Token::Separator);
                i += 1;
            }
            '<' | '>' => {
                // `2>`: the digits were an fd, not a word.
                if in_word && !word.is_empty() && word.chars().all(|d| d.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                    exact = true;
                }
                end_word(&mut tokens, &mut word, &mut exact, &mut in_word);
                tokens.push(Token::Redirect);
                i += 1;
                while i < chars.len() && matches!(chars[i], '<' | '>' | '&' | '|' | '-') {
                    i += 1;
                }
            }
            '#' if !in_word => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '\'' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    word.push(chars[i]);
                    i += 1;
                }
                i += 1;
            }
            '"' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    match chars[i] {
                        '\\' if i + 1 < chars.len()
                            && matches!(chars[i + 1], '$' | '`' | '"' | '\\' | '\n') =>
                        {
                            if chars[i + 1] != '\n' {
                                word.push(chars[i + 1]);
                            }
                            i += 2;
                        }
                        '$' | '`' => {
                            exact = false;
                            i = substitution(&chars, i, &mut word, nested);
                        }
                        other => {
                            word.push(other);
                            i += 1;
                        }
                    }
                }
                i += 1;
            }
            '\\' => {
                in_word = true;
                if let Some(&next) = chars.get(i + 1) {
                    if next == '\n' {
                        // A line continuation joins the word.
                    } else {
                        word.push(next);
                    }
                }
                i += 2;
            }
            '$' | '`' => {
                in_word = true;
                exact = false;
                i = substitution(&chars, i, &mut word, nested);
            }
            '*' | '?' | '[' | '{' => {
                in_word = true;
                exact = false;
                word.push(c);
                i += 1;
            }
            '~' if !in_word => {
                in_word = true;
                exact = false;
                word.push(c);
                i += 1;
            }
            other => {
                in_word = true;
                word.push(other);
                i += 1;
            }
        }
    }
    end_word(&mut tokens, &mut word, &mut exact, &mut in_word);
    tokens
}

/// Read a `$…` or backtick at `chars[start]` into `word` (as written);
/// the text of a command substitution goes to `nested`. Returns the index
/// after it.
fn substitution(
    chars: &[char],
    start: usize,
    word: &mut String,
    nested: &mut Vec<String>,
) -> usize {
    let (open, close, skip) = match (chars[start], chars.get(start + 1)) {
        ('`', _) => ('`', '`', 1),
        ('$', Some('(')) => ('(', ')', 2),
        ('$', Some('{')) => ('{', '}', 2),
        ('$', Some('\'')) => ('\'', '\'', 2),
        _ => {
            word.push('$');
            return start + 1;
        }
    };
    let mut i = start + skip;
    let mut level = 1;
    let mut inner = String::new();
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && open != '\'' {
            inner.push(c);
            if let Some(&n) = chars.get(i + 1) {
                inner.push(n);
            }
            i += 2;
            continue;
        }
        if c == '\\' {
            // `$'…'`: `\'` does not end it.
            inner.push(c);
            if let Some(&n) = chars.get(i + 1) {
                inner.push(n);
            }
            i += 2;
            continue;
        }
        if c == close && (open == close || level == 1) {
            i += 1;
            break;
        }
        if c == open && open != close {
            level += 1;
        } else if c == close {
            level -= 1;
        }
        inner.push(c);
        i += 1;
    }
    word.push_str(&chars[start..i.min(chars.len())].iter().collect::<String>());
    if open == '(' || open == '`' {
        nested.push(inner);
    }
    i
}

#[cfg(test)]
#[path = "operands_tests.rs"]
mod tests;
