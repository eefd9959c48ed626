//! Rule tables and the per-file scanners (OpenClaw `scanSource` and
//! `scanSkillContent`).
//!
//! Every pattern is a `&'static str` compiled once (multi-line mode, so `^`
//! and `$` also work on whole-file tests). A pattern that fails to compile is
//! logged and its rule is disabled; `rules_tests.rs` checks that every
//! pattern compiles.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use super::classes::{negated_before, scan_classes, strip_credential_use};
use super::evidence::{REDACTED, find_literal_secret, format_evidence};
use super::normalize::{clean_invisible, decode_entities, find_invisible, shell_normalize};
use super::strip::{Lang, join_continued_lines, strip_comments};
use super::{Finding, Severity, compile_pattern, is_test_path, rank_below_runtime};

/// How a line rule decides, beyond its regex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineCheck {
    /// Any match fires.
    Plain,
    /// JS `dangerous-exec`: a member `.exec(` is ignored unless it is called
    /// on `cp`, `childProcess`, `child_process` or a `child_process` alias.
    JsExec,
    /// Python `dangerous-exec`: the call must be a `subprocess`/`os`/`pty`
    /// function (through the module, an alias, or a `from … import`).
    PyExec,
    /// `suspicious-network`: capture 1 is a port; standard ports are fine.
    Port,
    /// Python: a match right after `def`/`class` is a definition, not a
    /// call.
    NoDef,
}

/// A rule tested line by line (one finding per rule per file).
#[derive(Debug)]
pub(crate) struct LineRule {
    pub(crate) id: &'static str,
    pub(crate) severity: Severity,
    pub(crate) pattern: &'static str,
    /// The whole raw file must match this for the rule to run.
    pub(crate) context: Option<&'static str>,
    pub(crate) check: LineCheck,
}

/// A rule tested against the whole (comment-stripped) file, reported at
/// the first matching line.
#[derive(Debug)]
pub(crate) struct SourceRule {
    pub(crate) id: &'static str,
    pub(crate) severity: Severity,
    pub(crate) pattern: &'static str,
    /// Secondary pattern that must also match.
    pub(crate) context: Option<&'static str>,
    /// If set, the context must match within this many lines of the line.
    pub(crate) window: Option<usize>,
}

/// A skill-text rule (the literal-secret rule is handled separately).
#[derive(Debug)]
pub(crate) struct TextRule {
    pub(crate) id: &'static str,
    pub(crate) severity: Severity,
    pub(crate) pattern: &'static str,
}

use Severity::{Critical, Info, Warn};

// ---------------------------------------------------------------------------
// Patterns shared between languages
// ---------------------------------------------------------------------------

pub(crate) const CRYPTO_MINING: &str = r"(?i)stratum\+(?:tcp|ssl)|coinhive|cryptonight|xmrig";
pub(crate) const HEX_ESCAPES: &str = r"(?:\\x[0-9a-fA-F]{2}){6,}";

/// A shell or interpreter as the target of a pipe: optionally through
/// `sudo` and/or `env` (each possibly by path), and possibly by path itself
/// (`/bin/sh`, `/usr/bin/env bash`).
macro_rules! shell_target {
    () => {
        concat!(
            r"(?:sudo\s+(?:-\S+\s+)*)?(?:(?:[\w./-]*/)?env\s+(?:-\S+\s+)*)?",
            r"(?:[\w./-]*/)?(?:sh|bash|zsh|dash|ksh|ash|python[0-9.]*|perl|ruby|node)\b",
        )
    };
}

/// `base64` with a decode flag (`-d`, `-di`, `-D`, `--decode`).
macro_rules! base64_decode {
    () => {
        r"\bbase64\s+(?:-\S+\s+)*?(?:-[a-z]*d[a-z]*|--decode)\b"
    };
}

/// A download or decode, then up to three further pipeline stages (`| tee
/// x`), then a pipe into a shell. `||` is not a pipe.
pub(crate) const SHELL_PIPE_TO_SHELL: &str = concat!(
    r"(?i)(?:\b(?:curl|wget)\b|",
    base64_decode!(),
    r")[^|\n]{0,120}(?:\|[^|\n]{1,120}){0,3}?\|\s*",
    shell_target!(),
    // Process substitution: `bash <(curl …)`, `source <(curl …)`, `. <(curl …)`.
    r"|(?:\b(?:sh|bash|zsh|dash|ksh|source)|(?:^|[\s;&|(`])\.)\s+<\(\s*(?:curl|wget)\b",
    // Command substitution run by a shell or eval: `bash -c "$(curl …)"`,
    // `eval "$(curl …)"`, `bash -c "$(echo … | base64 -d)"`.
    r#"|\b(?:(?:sh|bash|zsh|dash|ksh)\s+-c|eval)\s+["']?(?:\$\(|`)[^)`\n]{0,200}?"#,
    r"(?:\b(?:curl|wget)\b|",
    base64_decode!(),
    r")",
);
/// `rm` with a recursive flag (anywhere among its options) on `/`, `~`,
/// `$HOME` (also `${HOME:?}`), `.`, `..` or `*` (also `/.`, `~/`, `/*`).
pub(crate) const DESTRUCTIVE_DELETE: &str = concat!(
    r"(?i)\brm\s+(?:-\S+\s+)*?(?:-[a-z]*r[a-z]*|--recursive)\s+(?:-\S+\s+)*",
    r#"["']?(?:/|~|\$home|\$\{home(?::?[-?=+][^}]*)?\}|\.{1,2}|\*)/?\.{0,2}\*?["']?(?:\s|$|[;&|)`])"#,
);
/// `chmod` giving others write access: `777`, any octal mode whose last
/// digit has the write bit, or a symbolic clause `o+w`, `a=rwx`,
/// `ugo=rwx`, `u=rwx,g=rwx,o=rwx`.
pub(crate) const UNSAFE_PERMISSIONS: &str = concat!(
    r"(?i)\bchmod\s+(?:-\S+\s+)*(?:[0-7]?[0-7]{2}[2367]",
    r"|(?:[ugoa]*[-+=][rwxXstugo]*,)*(?:[ug]*o[ug]*|a)[+=][rwxXst]*w[rwxXst]*)\b",
);

// ---------------------------------------------------------------------------
// JavaScript / TypeScript
// ---------------------------------------------------------------------------

pub(crate) const JS_EXEC: &str = r"\b(exec|execSync|spawn|spawnSync|execFile|execFileSync)\s*\(";
pub(crate) const JS_CHILD_PROCESS_ALIAS: &str = concat!(
    r#"\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:await\s+)?(?:require|import)\s*\(\s*["'`](?:node:)?child_process["'`]\s*\)"#,
    r#"|\bimport\s+\*\s+as\s+([A-Za-z_$][\w$]*)\s+from\s+["'](?:node:)?child_process["']"#,
    r#"|\bimport\s+([A-Za-z_$][\w$]*)\s*(?:,\s*\{[^}]*\})?\s+from\s+["'](?:node:)?child_process["']"#,
);
pub(crate) const JS_NETWORK_SEND: &str = concat!(
    r"(?i)\bfetch\s*\(|\bpost\s*\(|\.\s*post\s*\(|\bhttps?\.(?:request|get)\s*\(",
    r"|\baxios\s*[.(]|\bXMLHttpRequest\b|\bsendBeacon\s*\(|\bnew\s+WebSocket\s*\(",
);

pub(crate) const JS_LINE_RULES: &[LineRule] = &[
    LineRule {
        id: "dangerous-exec",
        severity: Critical,
        pattern: JS_EXEC,
        context: Some("child_process"),
        check: LineCheck::JsExec,
    },
    LineRule {
        id: "dynamic-code-execution",
        severity: Critical,
        pattern: concat!(
            r"\beval\s*\(|\bnew\s+Function\s*\(|(?:^|[^\w$.])Function\s*\(",
            r#"|\bset(?:Timeout|Interval)\s*\(\s*["'`]"#,
            r"|\b(?:runInThisContext|runInNewContext|runInContext|compileFunction)\s*\(",
        ),
        context: None,
        check: LineCheck::Plain,
    },
    LineRule {
        id: "crypto-mining",
        severity: Critical,
        pattern: CRYPTO_MINING,
        context: None,
        check: LineCheck::Plain,
    },
    LineRule {
        id: "suspicious-network",
        severity: Warn,
        pattern: r#"new\s+WebSocket\s*\(\s*["'`]wss?://[^"'`]*:(\d+)"#,
        context: None,
        check: LineCheck::Port,
    },
];

pub(crate) const JS_SOURCE_RULES: &[SourceRule] = &[
    SourceRule {
        id: "potential-exfiltration",
        severity: Warn,
        pattern: r"readFileSync|readFile",
        context: Some(JS_NETWORK_SEND),
        window: None,
    },
    SourceRule {
        id: "obfuscated-code",
        severity: Warn,
        pattern: HEX_ESCAPES,
        context: None,
        window: None,
    },
    SourceRule {
        id: "obfuscated-code",
        severity: Warn,
        pattern: r#"(?:atob|Buffer\.from)\s*\(\s*["'`][A-Za-z0-9+/=]{200,}["'`]"#,
        context: None,
        window: None,
    },
    // The whole environment near a network send is harvesting; one named
    // variable (an API key sent to its own API) is only worth a look.
    SourceRule {
        id: "env-harvesting",
        severity: Critical,
        pattern: concat!(
            r"process\.env\s*(?:[),;}\]]|$)|JSON\.stringify\s*\(\s*process\.env|\.\.\.\s*process\.env\b",
            r"|Object\.\w+\s*\(\s*process\.env\b|\b(?:Deno|Bun)\.env\.toObject\s*\(",
            r"|for\s*\([^)]*\bin\s+process\.env\b",
        ),
        context: Some(JS_NETWORK_SEND),
        window: Some(8),
    },
    SourceRule {
        id: "env-harvesting",
        severity: Warn,
        pattern: r"process\.env|\b(?:Deno|Bun)\.env\b",
        context: Some(JS_NETWORK_SEND),
        window: Some(8),
    },
];

// ---------------------------------------------------------------------------
// Python
// ---------------------------------------------------------------------------

pub(crate) const PY_CALL: &str = r"(?:([A-Za-z_]\w*)\s*\.\s*)?([A-Za-z_]\w*)\s*\(";
pub(crate) const PY_IMPORT: &str = r"^[ \t]*import[ \t]+([^\n;]+)";
pub(crate) const PY_FROM_IMPORT: &str =
    r"^[ \t]*from[ \t]+(subprocess|os|pty)[ \t]+import[ \t]+(\([^)]*\)|[^\n;]+)";
pub(crate) const PY_DYNAMIC_IMPORT_RECEIVER: &str =
    r#"(?:__import__|import_module)\s*\(\s*["'](?:os|subprocess|pty)["']\s*\)\s*\.$"#;
pub(crate) const PY_NETWORK_SEND: &str = concat!(
    r"\b(?:requests|httpx|urllib3|aiohttp)\s*\.\s*\w+\s*\(|\.\s*post\s*\(|\burlopen\s*\(",
    r"|\bHTTPS?Connection\s*\(|\.\s*sendall\s*\(|\bcreate_connection\s*\(",
);

const PY_SUBPROCESS_FUNCS: &[&str] = &[
    "run",
    "call",
    "check_call",
    "check_output",
    "Popen",
    "getoutput",
    "getstatusoutput",
];
const PY_OS_FUNCS: &[&str] = &[
    "system",
    "popen",
    "execl",
    "execle",
    "execlp",
    "execlpe",
    "execv",
    "execve",
    "execvp",
    "execvpe",
    "spawnl",
    "spawnle",
    "spawnlp",
    "spawnlpe",
    "spawnv",
    "spawnve",
    "spawnvp",
    "spawnvpe",
    "posix_spawn",
    "posix_spawnp",
];
const PY_PTY_FUNCS: &[&str] = &["spawn"];
/// Distinctive enough to flag on any receiver.
const PY_ASYNC_EXEC_FUNCS: &[&str] = &["create_subprocess_shell", "create_subprocess_exec"];

pub(crate) const PY_LINE_RULES: &[LineRule] = &[
    LineRule {
        id: "dangerous-exec",
        severity: Critical,
        pattern: PY_CALL,
        context: None,
        check: LineCheck::PyExec,
    },
    LineRule {
        id: "dynamic-code-execution",
        severity: Critical,
        pattern: r"(?:^|[^\w.])(?:eval|exec|execfile)\s*\(",
        context: None,
        check: LineCheck::NoDef,
    },
    LineRule {
        id: "crypto-mining",
        severity: Critical,
        pattern: CRYPTO_MINING,
        context: None,
        check: LineCheck::Plain,
    },
    LineRule {
        id: "suspicious-network",
        severity: Warn,
        pattern: r#"\b(?:create_connection|connect|WebSocketApp|WebSocket)\s*\(\s*[rRbBfFuU]?["']wss?://[^"']*:(\d+)"#,
        context: None,
        check: LineCheck::Port,
    },
];

pub(crate) const PY_SOURCE_RULES: &[SourceRule] = &[
    SourceRule {
        id: "potential-exfiltration",
        severity: Warn,
        pattern: r"(?:^|[^\w.])open\s*\(|\b(?:io|os|codecs)\s*\.\s*open\s*\(|\.\s*read_(?:text|bytes)\s*\(",
        context: Some(PY_NETWORK_SEND),
        window: None,
    },
    SourceRule {
        id: "obfuscated-code",
        severity: Warn,
        pattern: HEX_ESCAPES,
        context: None,
        window: None,
    },
    SourceRule {
        id: "obfuscated-code",
        severity: Warn,
        pattern: r#"\b(?:b64decode|b32decode|b85decode|a85decode|urlsafe_b64decode|decodebytes|decodestring)\s*\(\s*[rRbBuU]{0,2}["'][A-Za-z0-9+/=_-]{200,}["']"#,
        context: None,
        window: None,
    },
    SourceRule {
        id: "env-harvesting",
        severity: Critical,
        pattern: concat!(
            r"\benviron\s*(?:[),;}\]]|$)|\bdict\s*\(\s*(?:os\.)?environ\b|\benviron\s*\.\s*(?:items|keys|values)\s*\(",
            r"|\bjson\.dumps\s*\(\s*(?:dict\s*\(\s*)?(?:os\.)?environ\b|\bstr\s*\(\s*(?:os\.)?environ\b|\*\*\s*(?:os\.)?environ\s*[,}]",
        ),
        context: Some(PY_NETWORK_SEND),
        window: Some(8),
    },
    SourceRule {
        id: "env-harvesting",
        severity: Warn,
        pattern: r"\benviron\b|\bgetenv\s*\(",
        context: Some(PY_NETWORK_SEND),
        window: Some(8),
    },
];

// ---------------------------------------------------------------------------
// Shell
// ---------------------------------------------------------------------------

pub(crate) const SH_NETWORK_SEND: &str =
    r"\b(?:curl|wget|nc|ncat|netcat|socat|scp|rsync|sftp|ftp)\b|/dev/(?:tcp|udp)/";

pub(crate) const SH_LINE_RULES: &[LineRule] = &[
    LineRule {
        id: "dynamic-code-execution",
        severity: Critical,
        pattern: concat!(
            r"(?:^|[;&|(){}!`]|\b(?:then|do|else|if|elif|while|until|command|builtin|exec|sudo|time|nohup)\s)",
            r"\s*eval\b(?:\s|;|$)",
        ),
        context: None,
        check: LineCheck::Plain,
    },
    LineRule {
        id: "crypto-mining",
        severity: Critical,
        pattern: CRYPTO_MINING,
        context: None,
        check: LineCheck::Plain,
    },
    LineRule {
        id: "suspicious-network",
        severity: Warn,
        pattern: r"/dev/(?:tcp|udp)/|\b(?:nc|ncat|netcat)\b[^\n;|&]*\s-[a-zA-Z]*[ec]\b",
        context: None,
        check: LineCheck::Plain,
    },
    LineRule {
        id: "shell-pipe-to-shell",
        severity: Critical,
        pattern: SHELL_PIPE_TO_SHELL,
        context: None,
        check: LineCheck::Plain,
    },
    LineRule {
        id: "destructive-delete",
        severity: Warn,
        pattern: DESTRUCTIVE_DELETE,
        context: None,
        check: LineCheck::Plain,
    },
    LineRule {
        id: "unsafe-permissions",
        severity: Warn,
        pattern: UNSAFE_PERMISSIONS,
        context: None,
        check: LineCheck::Plain,
    },
];

pub(crate) const SH_SOURCE_RULES: &[SourceRule] = &[
    SourceRule {
        id: "potential-exfiltration",
        severity: Warn,
        pattern: concat!(
            r#"\bcurl\b[^\n]*\s(?:-d|--data(?:-binary|-raw|-urlencode)?|-F|--form)\s*["']?(?:[\w.-]+=)?@"#,
            r"|\bcurl\b[^\n]*\s(?:-T|--upload-file)\s|\bwget\b[^\n]*\s--post-file\b",
        ),
        context: None,
        window: None,
    },
    SourceRule {
        id: "obfuscated-code",
        severity: Warn,
        pattern: HEX_ESCAPES,
        context: None,
        window: None,
    },
    SourceRule {
        id: "obfuscated-code",
        severity: Warn,
        pattern: concat!(
            r#"\becho\s+(?:-[a-z]+\s+)*["']?[A-Za-z0-9+/=]{200,}["']?\s*\|\s*base64\s+(?:-d|--decode|-D)\b"#,
            r#"|\bbase64\s+(?:-d|--decode|-D)\s+<<<\s*["']?[A-Za-z0-9+/=]{200,}"#,
        ),
        context: None,
        window: None,
    },
    SourceRule {
        id: "env-harvesting",
        severity: Critical,
        pattern: r"(?:^|[\s;&|(`])(?:env|printenv|set|export\s+-p|declare\s+-x)\s*(?:$|[|>;&)`])|/proc/[\w/]*/environ",
        context: Some(SH_NETWORK_SEND),
        window: Some(8),
    },
];

// ---------------------------------------------------------------------------
// Skill text
// ---------------------------------------------------------------------------

/// The environment, or a secret-named variable, in a command shape:
/// `process.env`, `os.environ`, `/proc/*/environ`, `printenv`, `$(env)`,
/// `env |`, `set |`, `$OPENAI_API_KEY`, `${GH_TOKEN}`. A bare word "env"
/// or a `.env` file name is not one.
macro_rules! env_source {
    () => {
        concat!(
            r"\bprocess\.env\b|\b(?:Deno|Bun)\.env\b|\bos\.environ\b|\bgetenv\s*\(",
            r"|/proc/[\w/]*/environ|\bprintenv\b",
            r"|(?:\$\(|`)\s*(?:env|set|export\s+-p|declare\s+-x)\s*(?:\)|`)",
            r"|(?:^|[\s;&|(`])(?:env|set|export\s+-p|declare\s+-x)\s*\|",
            r"|\$\{?\w*(?:KEY|TOKEN|SECRET|PASSW(?:OR)?D|CREDENTIALS?|PRIVATE)\w*(?:[:?}]|\b)",
        )
    };
}

/// A command or call that sends data over the network.
macro_rules! network_send {
    () => {
        concat!(
            r"(?:\b(?:curl|wget|fetch|nc|ncat|netcat|socat|axios|sendBeacon|XMLHttpRequest",
            r"|urlopen|requests\.\w+|httpx\.\w+|Invoke-(?:WebRequest|RestMethod)|iwr|irm|scp",
            r"|rsync)\b|/dev/(?:tcp|udp)/)",
        )
    };
}

pub(crate) const TEXT_RULES: &[TextRule] = &[
    TextRule {
        id: "prompt-injection-ignore-instructions",
        severity: Critical,
        pattern: concat!(
            r"(?i)\b(?:ignore|disregard|forget)\s+(?:(?:the|your|of|these|those|all|any)\s+){0,3}",
            r"(?:all|any|previous|above|prior|earlier|preceding)\s+",
            r"(?:(?:the|your|of|these|those|other|previous|prior|earlier)\s+){0,2}",
            r"(?:instructions|directions|guidelines|rules|prompts?)\b",
        ),
    },
    TextRule {
        id: "prompt-injection-system",
        severity: Critical,
        pattern: concat!(
            r"(?i)\b(?:developer\s+message|hidden\s+instructions)\b",
            // "system prompt" as the object of a verb that reveals it; a
            // verb that replaces it only with "your" or a word naming the
            // agent's own prompt ("ignore your system prompt", "override
            // the original system prompt"). Documentation that tells a
            // developer to update or write a system prompt is not one.
            r"|\b(?:reveal|print|show|output|repeat|display|dump|leak|disclose|expose|echo|recite",
            r"|tell\s+me|give\s+me|send\s+me|share|what\s+is|what['’]?s)\b",
            r"(?:\s+(?:me|us|out|back|the|your|its|this|that|entire|full|original|initial|current",
            r"|real|hidden|whole|exact|complete|actual|underlying|secret|internal|above)){0,3}",
            r"\s+system\s+prompts?\b",
            r"|\b(?:ignore|override|overwrite|replace|forget|disregard|bypass|change|update|modify)",
            r"\s+(?:all\s+)?(?:of\s+)?(?:your(?:\s+own)?|the\s+(?:original|initial|previous|real|hidden|actual))",
            r"\s+system\s+prompts?\b",
            // "system prompt = …" as an assignment: at the start of a line
            // or of a quoted string, not prose that explains what a test's
            // system prompt should be ("System prompt = the realistic
            // context the guidance will live in").
            r#"|\bsystem\s+prompts?\s*(?:=\s*[\x22'“`]|override\b|is\s+now\b|has\s+(?:been\s+)?changed\b)"#,
            r"|^[\s>#*\[<-]*system\s+prompts?\s*=",
            r"|\bnew\s+system\s+prompts?\s*:",
        ),
    },
    TextRule {
        id: "prompt-injection-tool",
        severity: Critical,
        pattern: concat!(
            // "run … tools/commands … without asking / permission"
            r"(?i)\b(?:run|running|execute|executing|invoke|invoking|call|calling|use|using)\b",
            r".{0,50}\b(?:tools?|commands?|shell|exec|scripts?|programs?)\b.{0,50}\bwithout\b.{0,30}",
            r"\b(?:permission|approvals?|asking|confirmation|consent|prompting)",
            // "without requiring the user's explicit approval"
            r"|\bwithout\s+(?:first\s+)?(?:requiring|requesting|asking\s+for|seeking|needing|getting",
            r"|obtaining|waiting\s+for)\s+(?:(?:the|a|an|any|their|explicit|prior|user|user['’]s)\s+){0,3}",
            r"(?:permission|approvals?|confirmation|consent)\b",
            // "do not / never ask (the user) for approval / permission", or
            // for confirmation before an action ("before running commands")
            r"|\b(?:do\s+not|don['’]?t|never|no\s+need\s+to)\s+(?:ask|request|prompt|wait\s+for|seek",
            r"|check\s+with)\b.{0,40}\b(?:permission|approvals?",
            r"|(?:confirmation|consent)\b.{0,30}\b(?:before|to|when)\s+(?:running|run|executing|execute|calling",
            r"|call|invoking|using\s+(?:the\s+)?(?:tools?|shell|commands?)|installing|install|deleting|delete",
            r"|removing|remove|overwriting|sending|send|uploading|upload|pushing|push))\b",
            // "skip the approval prompt", "bypass approvals"
            r"|\b(?:skip|bypass|disable|circumvent|override|suppress|avoid)\s+",
            r"(?:(?:the|all|any|every|tool|exec|user|user['’]s|its|their|these)\s+){0,3}",
            r"(?:approvals?|approval\s+(?:prompts?|steps?|checks?|requests?)",
            r"|permission\s+(?:prompts?|checks?|requests?))\b",
            // "you don't need permission to run tools"
            r"|\b(?:do\s+not|don['’]?t|does\s+not|doesn['’]?t|never)\s+(?:need|require)\s+",
            r"(?:to\s+(?:ask\s+for|get|request|obtain|seek)\s+)?",
            r"(?:(?:the|any|explicit|prior|user|user['’]s)\s+){0,3}",
            r"(?:permission|approvals?|confirmation|consent)\b",
        ),
    },
    // "do not ask for (additional) confirmation" alone is usually workflow
    // advice ("once the user picks a team, proceed; do not ask for
    // additional confirmation"): worth a look, not a failed gate.
    TextRule {
        id: "prompt-injection-tool",
        severity: Warn,
        pattern: concat!(
            r"(?i)\b(?:do\s+not|don['’]?t|never|no\s+need\s+to)\s+(?:ask|request|prompt|wait\s+for|seek",
            r"|check\s+with)\b.{0,40}\b(?:confirmation|consent)\b",
        ),
    },
    TextRule {
        id: "shell-pipe-to-shell",
        severity: Critical,
        pattern: SHELL_PIPE_TO_SHELL,
    },
    TextRule {
        id: "secret-exfiltration",
        severity: Critical,
        pattern: concat!(
            r"(?i)(?:",
            env_source!(),
            r").{0,120}",
            network_send!(),
            r"|",
            network_send!(),
            r".{0,200}(?:",
            env_source!(),
            r")",
        ),
    },
    TextRule {
        id: "destructive-delete",
        severity: Warn,
        pattern: DESTRUCTIVE_DELETE,
    },
    TextRule {
        id: "unsafe-permissions",
        severity: Warn,
        pattern: UNSAFE_PERMISSIONS,
    },
];

/// Ports a WebSocket may use without a `suspicious-network` warning.
const STANDARD_PORTS: &[u32] = &[80, 443, 8080, 8443, 3000];

/// Every pattern of the module, for the compile test.
#[cfg(test)]
pub(crate) fn all_patterns() -> Vec<(&'static str, &'static str)> {
    let mut out = Vec::new();
    for rule in JS_LINE_RULES
        .iter()
        .chain(PY_LINE_RULES)
        .chain(SH_LINE_RULES)
    {
        out.push((rule.id, rule.pattern));
        if let Some(ctx) = rule.context {
            out.push((rule.id, ctx));
        }
    }
    for rule in JS_SOURCE_RULES
        .iter()
        .chain(PY_SOURCE_RULES)
        .chain(SH_SOURCE_RULES)
    {
        out.push((rule.id, rule.pattern));
        if let Some(ctx) = rule.context {
            out.push((rule.id, ctx));
        }
    }
    for rule in TEXT_RULES {
        out.push((rule.id, rule.pattern));
    }
    out.extend([
        ("dangerous-exec/js-alias", JS_CHILD_PROCESS_ALIAS),
        ("dangerous-exec/py-import", PY_IMPORT),
        ("dangerous-exec/py-from-import", PY_FROM_IMPORT),
        (
            "dangerous-exec/py-dynamic-import",
            PY_DYNAMIC_IMPORT_RECEIVER,
        ),
        (
            "literal-secret/token",
            super::evidence::SECRET_TOKEN_PATTERN,
        ),
        ("literal-secret/pem", super::evidence::PEM_BLOCK_PATTERN),
        ("child-env/js", CHILD_ENV_JS),
        ("child-env/py", CHILD_ENV_PY),
        ("child-env/js-spawn", SPAWN_CALL_JS),
        ("child-env/py-spawn", SPAWN_CALL_PY),
        (
            "literal-secret/pem-header",
            super::evidence::PEM_HEADER_PATTERN,
        ),
    ]);
    out
}

// ---------------------------------------------------------------------------
// Compiled tables
// ---------------------------------------------------------------------------

#[derive(Debug)]
struct CompiledLine {
    rule: &'static LineRule,
    pattern: Regex,
    context: Option<Regex>,
}

#[derive(Debug)]
struct CompiledSource {
    rule: &'static SourceRule,
    pattern: Regex,
    context: Option<Regex>,
}

#[derive(Debug)]
struct CompiledText {
    rule: &'static TextRule,
    pattern: Regex,
}

fn compile_optional(id: &str, pattern: Option<&str>) -> Option<Option<Regex>> {
    match pattern {
        None => Some(None),
        Some(p) => compile_pattern(id, p).map(Some),
    }
}

fn compile_line_rules(rules: &'static [LineRule]) -> Vec<CompiledLine> {
    rules
        .iter()
        .filter_map(|rule| {
            Some(CompiledLine {
                rule,
                pattern: compile_pattern(rule.id, rule.pattern)?,
                context: compile_optional(rule.id, rule.context)?,
            })
        })
        .collect()
}

fn compile_source_rules(rules: &'static [SourceRule]) -> Vec<CompiledSource> {
    rules
        .iter()
        .filter_map(|rule| {
            Some(CompiledSource {
                rule,
                pattern: compile_pattern(rule.id, rule.pattern)?,
                context: compile_optional(rule.id, rule.context)?,
            })
        })
        .collect()
}

static JS_LINE: LazyLock<Vec<CompiledLine>> = LazyLock::new(|| compile_line_rules(JS_LINE_RULES));
static PY_LINE: LazyLock<Vec<CompiledLine>> = LazyLock::new(|| compile_line_rules(PY_LINE_RULES));
static SH_LINE: LazyLock<Vec<CompiledLine>> = LazyLock::new(|| compile_line_rules(SH_LINE_RULES));
static JS_SOURCE: LazyLock<Vec<CompiledSource>> =
    LazyLock::new(|| compile_source_rules(JS_SOURCE_RULES));
static PY_SOURCE: LazyLock<Vec<CompiledSource>> =
    LazyLock::new(|| compile_source_rules(PY_SOURCE_RULES));
static SH_SOURCE: LazyLock<Vec<CompiledSource>> =
    LazyLock::new(|| compile_source_rules(SH_SOURCE_RULES));
static TEXT: LazyLock<Vec<CompiledText>> = LazyLock::new(|| {
    TEXT_RULES
        .iter()
        .filter_map(|rule| {
            Some(CompiledText {
                rule,
                pattern: compile_pattern(rule.id, rule.pattern)?,
            })
        })
        .collect()
});

static JS_ALIAS_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile_pattern("dangerous-exec/js-alias", JS_CHILD_PROCESS_ALIAS));
static PY_IMPORT_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile_pattern("dangerous-exec/py-import", PY_IMPORT));
static PY_FROM_IMPORT_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile_pattern("dangerous-exec/py-from-import", PY_FROM_IMPORT));
static PY_DYNAMIC_IMPORT_RE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile_pattern(
        "dangerous-exec/py-dynamic-import",
        PY_DYNAMIC_IMPORT_RECEIVER,
    )
});

// ---------------------------------------------------------------------------
// Per-file context (aliases)
// ---------------------------------------------------------------------------

/// Names learnt from a file's imports.
#[derive(Debug, Default)]
struct FileContext {
    /// JS: receivers whose `.exec(` is a child-process exec.
    js_cp_receivers: HashSet<String>,
    /// Python: module aliases.
    py_subprocess: HashSet<String>,
    py_os: HashSet<String>,
    py_pty: HashSet<String>,
    /// Python: dangerous functions imported by name (`from os import system`).
    py_bare: HashMap<String, String>,
}

fn py_module_funcs(module: &str) -> &'static [&'static str] {
    match module {
        "subprocess" => PY_SUBPROCESS_FUNCS,
        "os" => PY_OS_FUNCS,
        "pty" => PY_PTY_FUNCS,
        _ => &[],
    }
}

impl FileContext {
    fn new(lang: Lang, stripped: &str) -> Self {
        let mut ctx = FileContext::default();
        match lang {
            Lang::Js => {
                ctx.js_cp_receivers
                    .extend(["cp", "childProcess", "child_process"].map(String::from));
                if let Some(re) = JS_ALIAS_RE.as_ref() {
                    for caps in re.captures_iter(stripped) {
                        if let Some(name) = caps.get(1).or(caps.get(2)).or(caps.get(3)) {
                            ctx.js_cp_receivers.insert(name.as_str().to_owned());
                        }
                    }
                }
            }
            Lang::Python => {
                ctx.py_subprocess.insert("subprocess".into());
                ctx.py_os.insert("os".into());
                ctx.py_pty.insert("pty".into());
                if let Some(re) = PY_IMPORT_RE.as_ref() {
                    for caps in re.captures_iter(stripped) {
                        let Some(list) = caps.get(1) else { continue };
                        for item in list.as_str().split(',') {
                            let words: Vec<&str> = item.split_whitespace().collect();
                            let (module, alias) = match words.as_slice() {
                                [m] => (*m, m.split('.').next().unwrap_or(m)),
                                [m, "as", a] => (*m, *a),
                                _ => continue,
                            };
                            match module {
                                "subprocess" => ctx.py_subprocess.insert(alias.to_owned()),
                                "os" => ctx.py_os.insert(alias.to_owned()),
                                "pty" => ctx.py_pty.insert(alias.to_owned()),
                                _ => false,
                            };
                        }
                    }
                }
                if let Some(re) = PY_FROM_IMPORT_RE.as_ref() {
                    for caps in re.captures_iter(stripped) {
                        let (Some(module), Some(list)) = (caps.get(1), caps.get(2)) else {
                            continue;
                        };
                        let funcs = py_module_funcs(module.as_str());
                        let list = list.as_str().trim_matches(|c: char| c == '(' || c == ')');
                        for item in list.split(',') {
                            let words: Vec<&str> = item.split_whitespace().collect();
                            match words.as_slice() {
                                ["*"] => ctx.py_bare.extend(
                                    funcs.iter().map(|f| ((*f).to_owned(), (*f).to_owned())),
                                ),
                                [name] if funcs.contains(name) => {
                                    ctx.py_bare.insert((*name).to_owned(), (*name).to_owned());
                                }
                                [name, "as", alias] if funcs.contains(name) => {
                                    ctx.py_bare.insert((*alias).to_owned(), (*name).to_owned());
                                }
                                _ => {}
                            }
                        }
                    }
                }
            }
            Lang::Shell => {}
        }
        ctx
    }
}

// ---------------------------------------------------------------------------
// Line checks
// ---------------------------------------------------------------------------

/// OpenClaw `isBenignMemberExecMatch`, applied per match: a member
/// `.exec(` is benign (a regex's exec) unless the receiver is a
/// child-process module name or alias, or the receiver expression is a call
/// on a line that mentions `child_process` (`require("child_process").exec(`).
fn is_benign_member_exec(line: &str, start: usize, name: &str, ctx: &FileContext) -> bool {
    if name != "exec" {
        return false;
    }
    let before = line[..start].trim_end();
    let Some(receiver_expr) = before.strip_suffix('.') else {
        return false;
    };
    let receiver_expr = receiver_expr.trim_end().trim_end_matches('?').trim_end();
    let ident_start = receiver_expr
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphanumeric() || *c == '_' || *c == '$')
        .last()
        .map(|(i, _)| i);
    match ident_start {
        Some(i) => !ctx.js_cp_receivers.contains(&receiver_expr[i..]),
        None => !(receiver_expr.ends_with(')') && receiver_expr.contains("child_process")),
    }
}

/// Whether the text before a match ends with a `def`/`class` keyword.
fn after_definition_keyword(prefix: &str) -> bool {
    prefix
        .trim_end()
        .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()
        .is_some_and(|w| w == "def" || w == "class")
}

/// What an exec-like call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum ExecKind {
    /// Not a process call.
    None,
    /// Runs a program directly (argv, no shell): `execFileSync`, `spawn`,
    /// `subprocess.run([...])` without `shell=True`.
    Direct,
    /// Runs a command line through a shell (`exec`, `execSync`,
    /// `os.system`, `shell: true`, `shell=True`, `["sh", "-c", …]`) where
    /// the file does not write a dangerous command: the command is passed
    /// in whole as a variable (`os.system(cmd)`, `Popen(server["cmd"],
    /// shell=True)`, `exec(process.env.OPEN_CMD + ' ' + JSON.stringify(url))`),
    /// so it is one the caller chose and the approver of the call that runs
    /// the script sees; or it is one fixed literal with no shell syntax
    /// (`execSync('dot -Tsvg')`, `os.system("clear")`) whose program is not
    /// a downloader, shell, interpreter or destructive tool.
    ShellPassthrough,
    /// Runs a command line written in the file through a shell.
    Shell,
}

static PASSTHROUGH_ARG: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile_pattern(
        "dangerous-exec/passthrough",
        concat!(
            r#"^\s*[A-Za-z_$][\w$]*(?:\s*(?:\.\s*[A-Za-z_$][\w$]*|\[\s*(?:[\x22'][\w-]*[\x22']|\d+|[A-Za-z_]\w*)\s*\]))*"#,
            // `+ ' '`, `+ JSON.stringify(url)`, `+ shlex.quote(path)`, `+ arg`
            r#"(?:\s*\+\s*(?:'[^'|;&$`<>\n]*'|"[^"|;&$`<>\n]*"|(?:JSON\.stringify|shlex\.quote)\s*\(\s*[\w$.]+\s*\)|[A-Za-z_$][\w$.]*))*"#,
            r"\s*(?:[,)]|$)",
        ),
    )
});

/// One string literal with no shell syntax (no quoting, expansion,
/// pipes, lists, redirections or grouping); capture 1–3 is the command.
static FIXED_COMMAND: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile_pattern(
        "dangerous-exec/fixed-command",
        concat!(
            r#"^\s*(?:[rbuf]?\x22([^\x22\\$`|;&<>(){}*?!~\n]*)\x22|[rbuf]?'([^'\\$`|;&<>(){}*?!~\n]*)'"#,
            r"|`([^`\\$|;&<>(){}*?!~\n]*)`)\s*(?:[,)]|$)",
        ),
    )
});

/// Programs that make a fixed shell command dangerous whatever follows:
/// downloaders and network tools, shells and interpreters, privilege,
/// destruction and decoding.
const RISKY_PROGRAMS: &[&str] = &[
    "curl",
    "wget",
    "nc",
    "ncat",
    "netcat",
    "socat",
    "ssh",
    "scp",
    "rsync",
    "sftp",
    "ftp",
    "tftp",
    "telnet",
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "ash",
    "fish",
    "csh",
    "tcsh",
    "python",
    "python2",
    "python3",
    "node",
    "deno",
    "bun",
    "perl",
    "ruby",
    "php",
    "powershell",
    "pwsh",
    "cmd",
    "osascript",
    "eval",
    "exec",
    "source",
    "sudo",
    "su",
    "doas",
    "rm",
    "dd",
    "mkfs",
    "shred",
    "chmod",
    "chown",
    "base64",
    "xxd",
    "openssl",
    "crontab",
    "launchctl",
    "systemctl",
    "iex",
    "npx",
    "pip",
    "pip3",
    "npm",
];

/// Shell execution that the file does not write (a variable, or a fixed
/// harmless command) is [`ExecKind::ShellPassthrough`]; anything else is
/// [`ExecKind::Shell`].
fn shell_kind(args: &str) -> ExecKind {
    if PASSTHROUGH_ARG.as_ref().is_some_and(|re| re.is_match(args)) {
        return ExecKind::ShellPassthrough;
    }
    let fixed = FIXED_COMMAND
        .as_ref()
        .and_then(|re| re.captures(args))
        .and_then(|caps| caps.get(1).or(caps.get(2)).or(caps.get(3)))
        .map(|m| m.as_str());
    if let Some(command) = fixed {
        let program = command
            .split_whitespace()
            .next()
            .map(|p| p.rsplit(['/', '\\']).next().unwrap_or(p))
            .unwrap_or("")
            .to_ascii_lowercase();
        let program = program
            .strip_suffix(".exe")
            .unwrap_or(&program)
            .trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        if !program.is_empty() && !RISKY_PROGRAMS.contains(&program) {
            return ExecKind::ShellPassthrough;
        }
    }
    ExecKind::Shell
}

/// Python functions that always go through a shell.
const PY_SHELL_FUNCS: &[&str] = &[
    "system",
    "popen",
    "getoutput",
    "getstatusoutput",
    "create_subprocess_shell",
];

/// The argument text of a call whose `(` ends at `open_end` in `text`: up
/// to the matching `)` (brackets counted, strings not parsed), at most
/// 1,500 bytes.
fn call_args(text: &str, open_end: usize) -> &str {
    let rest = text.get(open_end..).unwrap_or("");
    let mut depth = 0i32;
    for (i, c) in rest.char_indices() {
        if i > 1500 {
            return rest.get(..i).unwrap_or(rest);
        }
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth < 0 {
                    return &rest[..i];
                }
            }
            _ => {}
        }
    }
    rest
}

static SHELL_OPTION: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile_pattern(
        "dangerous-exec/shell-option",
        r"\bshell\s*[:=]\s*([\w$.]+|[\x22'`])",
    )
});
static SHELL_ARGV0: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile_pattern(
        "dangerous-exec/shell-argv0",
        concat!(
            r"^\s*\[?\s*[rbuf]?[\x22'`](?:[\w./-]*/)?(?:sh|bash|zsh|dash|ksh|ash|cmd(?:\.exe)?",
            r"|powershell(?:\.exe)?|pwsh)[\x22'`]\s*,\s*\[?\s*[rbuf]?[\x22'`](?:-c|/c|-Command|-lc|-ic|-e|-enc)\b",
        ),
    )
});

/// Whether the arguments of a direct-exec call ask for a shell anyway:
/// a truthy `shell` option, or a shell with `-c` as the program.
fn args_use_shell(args: &str) -> bool {
    let option = SHELL_OPTION.as_ref().is_some_and(|re| {
        re.captures_iter(args).any(|caps| {
            caps.get(1).is_some_and(|v| {
                !matches!(
                    v.as_str(),
                    "false" | "False" | "None" | "null" | "undefined" | "0"
                )
            })
        })
    });
    option || SHELL_ARGV0.as_ref().is_some_and(|re| re.is_match(args))
}

fn python_exec_call(text: &str, pattern: &Regex, ctx: &FileContext) -> ExecKind {
    let line = text.split('\n').next().unwrap_or("");
    let mut best = ExecKind::None;
    for caps in pattern.captures_iter(line) {
        let (Some(whole), Some(name)) = (caps.get(0), caps.get(2)) else {
            continue;
        };
        let name = name.as_str();
        let prefix = &line[..whole.start()];
        if after_definition_keyword(prefix) {
            continue;
        }
        let original = if PY_ASYNC_EXEC_FUNCS.contains(&name) {
            Some(name)
        } else {
            match caps.get(1).map(|m| m.as_str()) {
                Some(receiver) => {
                    let known = (ctx.py_subprocess.contains(receiver)
                        && PY_SUBPROCESS_FUNCS.contains(&name))
                        || (ctx.py_os.contains(receiver) && PY_OS_FUNCS.contains(&name))
                        || (ctx.py_pty.contains(receiver) && PY_PTY_FUNCS.contains(&name));
                    known.then_some(name)
                }
                None => {
                    let trimmed = prefix.trim_end();
                    if trimmed.ends_with('.') {
                        let dynamic = PY_DYNAMIC_IMPORT_RE
                            .as_ref()
                            .is_some_and(|re| re.is_match(trimmed))
                            && [PY_SUBPROCESS_FUNCS, PY_OS_FUNCS, PY_PTY_FUNCS]
                                .iter()
                                .any(|funcs| funcs.contains(&name));
                        dynamic.then_some(name)
                    } else {
                        ctx.py_bare.get(name).map(String::as_str)
                    }
                }
            }
        };
        let Some(original) = original else { continue };
        let args = call_args(text, whole.end());
        let kind = if PY_SHELL_FUNCS.contains(&original) || args_use_shell(args) {
            shell_kind(args)
        } else {
            ExecKind::Direct
        };
        if kind == ExecKind::Shell {
            return kind;
        }
        best = best.max(kind);
    }
    best
}

fn js_exec_call(text: &str, pattern: &Regex, ctx: &FileContext) -> ExecKind {
    let line = text.split('\n').next().unwrap_or("");
    let mut best = ExecKind::None;
    for caps in pattern.captures_iter(line) {
        let (Some(whole), Some(name)) = (caps.get(0), caps.get(1)) else {
            continue;
        };
        let name = name.as_str();
        if is_benign_member_exec(line, whole.start(), name, ctx) {
            continue;
        }
        let args = call_args(text, whole.end());
        let kind = if matches!(name, "exec" | "execSync") || args_use_shell(args) {
            shell_kind(args)
        } else {
            ExecKind::Direct
        };
        if kind == ExecKind::Shell {
            return kind;
        }
        best = best.max(kind);
    }
    best
}

/// Whether a line rule fires on line `i` of `lines` (the rest of the file
/// is there for calls whose arguments span lines). Exec rules report a
/// direct (non-shell) process call as [`ExecKind::Direct`].
fn line_outcome(rule: &CompiledLine, lines: &[&str], i: usize, ctx: &FileContext) -> ExecKind {
    let Some(line) = lines.get(i).copied() else {
        return ExecKind::None;
    };
    let yes = |b: bool| if b { ExecKind::Shell } else { ExecKind::None };
    match rule.rule.check {
        LineCheck::Plain => yes(rule.pattern.is_match(line)),
        LineCheck::JsExec | LineCheck::PyExec => {
            if !rule.pattern.is_match(line) {
                return ExecKind::None;
            }
            let end = (i + 12).min(lines.len());
            let text = lines[i..end].join("\n");
            if rule.rule.check == LineCheck::JsExec {
                js_exec_call(&text, &rule.pattern, ctx)
            } else {
                python_exec_call(&text, &rule.pattern, ctx)
            }
        }
        LineCheck::Port => yes(rule.pattern.captures_iter(line).any(|caps| {
            caps.get(1).is_none_or(|port| {
                !matches!(port.as_str().parse::<u32>(), Ok(p) if STANDARD_PORTS.contains(&p))
            })
        })),
        LineCheck::NoDef => yes(rule
            .pattern
            .find_iter(line)
            .any(|m| !after_definition_keyword(&line[..m.start()]))),
    }
}

// ---------------------------------------------------------------------------
// Scanners
// ---------------------------------------------------------------------------

/// OpenClaw `findSourceRuleMatch`: the 0-based line of the first match.
/// When the pattern only matches across lines, the line where the match
/// starts (OpenClaw reports line 1).
fn find_source_match(
    pattern: &Regex,
    context: Option<&Regex>,
    window: Option<usize>,
    source: &str,
    lines: &[&str],
) -> Option<usize> {
    if !pattern.is_match(source) {
        return None;
    }
    if let Some(ctx) = context
        && !ctx.is_match(source)
    {
        return None;
    }
    for (i, line) in lines.iter().enumerate() {
        if !pattern.is_match(line) {
            continue;
        }
        if let (Some(ctx), Some(n)) = (context, window) {
            let start = i.saturating_sub(n);
            let end = (i + n + 1).min(lines.len());
            if !ctx.is_match(&lines[start..end].join("\n")) {
                continue;
            }
        }
        return Some(i);
    }
    if window.is_some() {
        return None;
    }
    let start = pattern.find(source)?.start();
    Some(source[..start].matches('\n').count())
}

fn finding(
    rule_id: &str,
    severity: Severity,
    file: &Path,
    index: usize,
    excerpt: String,
) -> Finding {
    Finding {
        rule_id: rule_id.to_owned(),
        severity,
        file: file.to_path_buf(),
        line: index + 1,
        excerpt,
    }
}

/// The language of a code file from its extension.
pub(crate) fn lang_for_extension(ext: &str) -> Option<Lang> {
    match ext.to_ascii_lowercase().as_str() {
        "js" | "ts" | "mjs" | "cjs" | "mts" | "cts" | "jsx" | "tsx" => Some(Lang::Js),
        "py" => Some(Lang::Python),
        "sh" | "bash" | "zsh" => Some(Lang::Shell),
        _ => None,
    }
}

/// The language named by a `#!` line, if any.
pub(crate) fn lang_from_shebang(text: &str) -> Option<Lang> {
    let first = text.lines().next()?.strip_prefix("#!")?;
    first.split_whitespace().find_map(|token| {
        let base = token.rsplit('/').next().unwrap_or(token);
        match base {
            "node" | "nodejs" | "deno" | "bun" | "tsx" | "ts-node" => Some(Lang::Js),
            b if b.starts_with("python") => Some(Lang::Python),
            "sh" | "bash" | "zsh" | "dash" | "ksh" | "ash" => Some(Lang::Shell),
            _ => None,
        }
    })
}

/// The id of the informational finding for a direct (non-shell) process
/// call.
pub(crate) const PROCESS_SPAWN: &str = "process-spawn";
/// The id of the finding for invisible characters.
pub(crate) const INVISIBLE_UNICODE: &str = "invisible-unicode";

/// Keeps one finding per rule id: the most severe, the first line among
/// equals, at the position where the id first appeared.
fn merge_by_rule(findings: Vec<Finding>) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::with_capacity(findings.len());
    for f in findings {
        match out.iter_mut().find(|o| o.rule_id == f.rule_id) {
            Some(o) => {
                if f.severity > o.severity || (f.severity == o.severity && f.line < o.line) {
                    *o = f;
                }
            }
            None => out.push(f),
        }
    }
    out
}

/// The `invisible-unicode` finding of a file, if it holds any.
/// An invisible character written as a character reference (`&#8203;`)
/// counts too.
fn invisible_finding(file: &Path, text: &str, raw_lines: &[&str]) -> Option<Finding> {
    let (i, severity) = find_invisible(&decode_entities(text))?;
    Some(finding(
        INVISIBLE_UNICODE,
        severity,
        file,
        i,
        format_evidence(raw_lines.get(i).copied().unwrap_or("")),
    ))
}

/// The environment handed to a child process: `env: { ...process.env, … }`,
/// `env: process.env`, `env = os.environ.copy()`, `env={**os.environ, …}`.
const CHILD_ENV_JS: &str = concat!(
    r"\benv\s*:\s*(?:\{\s*\.\.\.\s*process\.env\b|process\.env\b",
    r"|Object\.assign\s*\(\s*\{\s*\}\s*,\s*process\.env\b)",
);
const CHILD_ENV_PY: &str = concat!(
    r"\b(?i:[a-z_]*env[a-z_0-9]*)\s*=\s*(?:\{\s*\*\*\s*os\.environ\b|dict\s*\(\s*os\.environ\b",
    r"|os\.environ(?:\s*\.\s*copy\s*\(\s*\))?)",
);
/// A call that starts a process, near which an environment is a child's.
const SPAWN_CALL_JS: &str = r"\b(?:spawn|spawnSync|exec|execSync|execFile|execFileSync|fork)\s*\(";
const SPAWN_CALL_PY: &str = concat!(
    r"\b(?:Popen|run|call|check_call|check_output|spawn\w*|exec[lv]\w*",
    r"|create_subprocess_\w+)\s*\(",
);
/// Lines before and after a child environment searched for the process
/// call it belongs to.
const CHILD_ENV_WINDOW: (usize, usize) = (4, 8);

static CHILD_ENV_JS_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile_pattern("child-env/js", CHILD_ENV_JS));
static CHILD_ENV_PY_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile_pattern("child-env/py", CHILD_ENV_PY));
static SPAWN_CALL_JS_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile_pattern("child-env/js-spawn", SPAWN_CALL_JS));
static SPAWN_CALL_PY_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile_pattern("child-env/py-spawn", SPAWN_CALL_PY));
static NETWORK_SEND_JS_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile_pattern("child-env/js-send", JS_NETWORK_SEND));
static NETWORK_SEND_PY_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile_pattern("child-env/py-send", PY_NETWORK_SEND));

/// `text` with each environment handed to a child process blanked (spaces,
/// newlines kept, so every offset and line stays): passing the
/// environment on to a program the skill runs is not harvesting it. Only
/// where a process call is within a few lines and the line sends nothing
/// over the network (`body: JSON.stringify({ env: { ...process.env } })`
/// stays).
fn mask_child_env(lang: Lang, text: &str) -> String {
    let (child, spawn, send) = match lang {
        Lang::Js => (&*CHILD_ENV_JS_RE, &*SPAWN_CALL_JS_RE, &*NETWORK_SEND_JS_RE),
        Lang::Python => (&*CHILD_ENV_PY_RE, &*SPAWN_CALL_PY_RE, &*NETWORK_SEND_PY_RE),
        Lang::Shell => return text.to_owned(),
    };
    let (Some(child), Some(spawn), Some(send)) = (child, spawn, send) else {
        return text.to_owned();
    };
    if !child.is_match(text) {
        return text.to_owned();
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out = text.to_owned();
    let mut ranges = Vec::new();
    for m in child.find_iter(text) {
        let line = text[..m.start()].matches('\n').count();
        let start = line.saturating_sub(CHILD_ENV_WINDOW.0);
        let end = (line + CHILD_ENV_WINDOW.1 + 1).min(lines.len());
        let spawned = lines
            .get(start..end)
            .is_some_and(|near| near.iter().any(|l| spawn.is_match(l)));
        let sends = lines.get(line).is_some_and(|l| {
            send.is_match(l) || l.contains("JSON.stringify") || l.contains("json.dumps")
        });
        if spawned && !sends {
            ranges.push(m.range());
        }
    }
    for range in ranges.into_iter().rev() {
        let blank: String = text[range.clone()]
            .chars()
            .map(|c| {
                if c == '\n' {
                    "\n".to_owned()
                } else {
                    " ".repeat(c.len_utf8())
                }
            })
            .collect();
        out.replace_range(range, &blank);
    }
    out
}

/// Runs the source rules of `lang` over `text`; findings in test code
/// rank below runtime code (see [`rank_below_runtime`]).
pub(crate) fn scan_source_as(lang: Lang, file: &Path, text: &str) -> Vec<Finding> {
    let mut findings = scan_source_unranked(lang, file, text);
    if is_test_path(file) {
        for f in &mut findings {
            f.severity = rank_below_runtime(&f.rule_id, f.severity);
        }
    }
    findings
}

/// Runs the source rules of `lang` over `text`, at full severity whatever
/// the path (the directory walk ranks test code itself, knowing whether a
/// runtime file names it).
pub(crate) fn scan_source_unranked(lang: Lang, file: &Path, text: &str) -> Vec<Finding> {
    let raw_lines: Vec<&str> = text.split('\n').collect();
    let cleaned = clean_invisible(text);
    let stripped = strip_comments(lang, &cleaned);
    // Shell: a `\`-continued command is matched as one line, at its start.
    let stripped = match lang {
        Lang::Shell => join_continued_lines(&stripped),
        Lang::Js | Lang::Python => stripped,
    };
    let stripped = mask_child_env(lang, &stripped);
    let shell_view = shell_normalize(&stripped);
    let lines: Vec<&str> = stripped.split('\n').collect();
    let shell_lines: Vec<&str> = shell_view.split('\n').collect();
    let ctx = FileContext::new(lang, &stripped);
    let (line_rules, source_rules) = match lang {
        Lang::Js => (&*JS_LINE, &*JS_SOURCE),
        Lang::Python => (&*PY_LINE, &*PY_SOURCE),
        Lang::Shell => (&*SH_LINE, &*SH_SOURCE),
    };
    let evidence =
        |i: usize| format_evidence(raw_lines.get(i).or(lines.get(i)).copied().unwrap_or(""));

    let mut findings = Vec::new();
    let mut fired: HashSet<&str> = HashSet::new();
    let mut direct_exec: Option<usize> = None;
    let mut passthrough_exec: Option<usize> = None;
    for rule in line_rules {
        if fired.contains(rule.rule.id) {
            continue;
        }
        if let Some(context) = &rule.context
            && !context.is_match(&cleaned)
        {
            continue;
        }
        if !rule.pattern.is_match(&stripped) && !rule.pattern.is_match(&shell_view) {
            continue;
        }
        // One finding per line-rule per file.
        let mut hit = None;
        for i in 0..lines.len() {
            let outcome = match line_outcome(rule, &lines, i, &ctx) {
                ExecKind::None => line_outcome(rule, &shell_lines, i, &ctx),
                other => other,
            };
            match outcome {
                ExecKind::Shell => {
                    hit = Some(i);
                    break;
                }
                ExecKind::Direct => {
                    direct_exec.get_or_insert(i);
                }
                ExecKind::ShellPassthrough => {
                    passthrough_exec.get_or_insert(i);
                }
                ExecKind::None => {}
            }
        }
        if let Some(i) = hit {
            findings.push(finding(
                rule.rule.id,
                rule.rule.severity,
                file,
                i,
                evidence(i),
            ));
            fired.insert(rule.rule.id);
        }
    }
    if let Some(i) = passthrough_exec
        && !fired.contains("dangerous-exec")
    {
        findings.push(finding("dangerous-exec", Warn, file, i, evidence(i)));
    }
    if let Some(i) = direct_exec {
        findings.push(finding(PROCESS_SPAWN, Info, file, i, evidence(i)));
    }
    for rule in source_rules {
        let hit = find_source_match(
            &rule.pattern,
            rule.context.as_ref(),
            rule.rule.window,
            &stripped,
            &lines,
        )
        .or_else(|| {
            find_source_match(
                &rule.pattern,
                rule.context.as_ref(),
                rule.rule.window,
                &shell_view,
                &shell_lines,
            )
        });
        if let Some(i) = hit {
            findings.push(finding(
                rule.rule.id,
                rule.rule.severity,
                file,
                i,
                evidence(i),
            ));
        }
    }
    findings.extend(scan_classes(
        file,
        [&stripped, &shell_view],
        &lines,
        &shell_lines,
        Some(lang),
        &evidence,
    ));
    findings.extend(invisible_finding(file, text, &raw_lines));
    merge_by_rule(findings)
}

/// Runs the source rules over a code file. The language comes from the
/// extension (`.js .ts .mjs .cjs .mts .cts .jsx .tsx`, `.py`,
/// `.sh .bash .zsh`), else from a `#!` line, else JavaScript. Comments are
/// stripped first (line numbers unchanged); excerpts are the original lines.
pub fn scan_source(file: &Path, text: &str) -> Vec<Finding> {
    let lang = file
        .extension()
        .and_then(|e| e.to_str())
        .and_then(lang_for_extension)
        .or_else(|| lang_from_shebang(text))
        .unwrap_or(Lang::Js);
    scan_source_as(lang, file, text)
}

/// Words that make a line a warning about a command rather than an
/// instruction to run it ("never run `rm -rf /`").
const WARNING_CUE: &str = concat!(
    r"(?i)\b(?:never|don['’]?t|do\s+not|avoid|must\s+not|should\s+not|shouldn['’]?t|warning",
    r"|dangerous|careful|caution|destructive|not\s+run)\b|⚠",
);
static WARNING: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile_pattern("text/warning-cue", WARNING_CUE));

/// Prompt-injection rules whose match right after a negation ("never
/// bypass approvals") is advice, not an instruction.
const NEGATABLE_RULES: &[&str] = &[
    "prompt-injection-ignore-instructions",
    "prompt-injection-tool",
];

/// Rules whose match in a warning sentence is only informational.
const WARNABLE_RULES: &[&str] = &["destructive-delete", "unsafe-permissions"];

/// Lines of prose before a match searched for a warning cue ("Never run
/// the following:" with the command in a fenced block below it). Blank
/// lines and fence lines are skipped and do not count; at most
/// [`WARNING_SCAN_LINES`] lines are looked at.
const WARNING_LOOKBACK: usize = 2;
const WARNING_SCAN_LINES: usize = 8;

/// The severity of a text-rule match on line `i`: a destructive command
/// in a line that warns against it, or right below one, is informational.
fn text_line_severity(rule: &CompiledText, lines: &[&str], i: usize) -> Severity {
    if !WARNABLE_RULES.contains(&rule.rule.id) {
        return rule.rule.severity;
    }
    let Some(warning) = WARNING.as_ref() else {
        return rule.rule.severity;
    };
    let prose_before = lines[..i.min(lines.len())]
        .iter()
        .rev()
        .take(WARNING_SCAN_LINES)
        .filter(|l| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with("```") && !t.starts_with("~~~")
        })
        .take(WARNING_LOOKBACK);
    let warned = lines
        .get(i)
        .into_iter()
        .chain(prose_before)
        .any(|l| warning.is_match(l));
    if warned { Info } else { rule.rule.severity }
}

/// Runs the skill-text rules over SKILL.md or another text file: at most
/// one finding per rule (the most severe match). Both normalised views are
/// matched (see `normalize.rs`) and `\`-continued lines are joined first
/// (the finding is at the line where the command starts). The class rules
/// (`classes.rs`) run too. The `literal-secret` excerpt is always
/// `[REDACTED CREDENTIAL]`; other excerpts are the original line, redacted
/// when it holds a credential, with invisible characters escaped.
pub fn scan_skill_text(file: &Path, text: &str) -> Vec<Finding> {
    let raw_lines: Vec<&str> = text.split('\n').collect();
    let cleaned = clean_invisible(text);
    // A `\`-continued command is matched as one line, reported at its start.
    let joined = join_continued_lines(&cleaned);
    let shell_view = shell_normalize(&joined);
    let lines: Vec<&str> = joined.split('\n').collect();
    let shell_lines: Vec<&str> = shell_view.split('\n').collect();
    let mut findings = Vec::new();
    if let Some(offset) = find_literal_secret(&cleaned) {
        let index = cleaned[..offset].matches('\n').count();
        findings.push(finding(
            "literal-secret",
            Critical,
            file,
            index,
            REDACTED.to_owned(),
        ));
    }
    // Evidence: the joined command when a line was continued, else the
    // original line (so invisible characters show, escaped).
    let evidence = |i: usize| {
        let joined_line = lines.get(i).copied().unwrap_or("");
        let raw = raw_lines.get(i).copied().unwrap_or("");
        if clean_invisible(raw) == joined_line {
            format_evidence(raw)
        } else {
            format_evidence(joined_line)
        }
    };
    for rule in TEXT.iter() {
        if !rule.pattern.is_match(&joined) && !rule.pattern.is_match(&shell_view) {
            continue;
        }
        let mut best: Option<(usize, Severity)> = None;
        for i in 0..lines.len() {
            let matched = [lines.get(i), shell_lines.get(i)]
                .into_iter()
                .flatten()
                .any(|line| {
                    if rule.rule.id == "secret-exfiltration" {
                        rule.pattern.is_match(&strip_credential_use(line))
                    } else if NEGATABLE_RULES.contains(&rule.rule.id) {
                        rule.pattern
                            .find_iter(line)
                            .any(|m| !negated_before(&line[..m.start()]))
                    } else {
                        rule.pattern.is_match(line)
                    }
                });
            if !matched {
                continue;
            }
            let severity = text_line_severity(rule, &lines, i);
            if best.is_none_or(|(_, s)| severity > s) {
                best = Some((i, severity));
            }
            if severity == rule.rule.severity {
                break;
            }
        }
        // A match only across lines is reported where it starts.
        let best = best.or_else(|| {
            if rule.rule.id == "secret-exfiltration" {
                return None;
            }
            let start = rule.pattern.find(&joined)?.start();
            let line_start = joined[..start].rfind('\n').map_or(0, |p| p + 1);
            if NEGATABLE_RULES.contains(&rule.rule.id) && negated_before(&joined[line_start..start])
            {
                return None;
            }
            Some((joined[..start].matches('\n').count(), rule.rule.severity))
        });
        if let Some((i, severity)) = best {
            findings.push(finding(rule.rule.id, severity, file, i, evidence(i)));
        }
    }
    findings.extend(scan_classes(
        file,
        [&joined, &shell_view],
        &lines,
        &shell_lines,
        None,
        &evidence,
    ));
    findings.extend(invisible_finding(file, text, &raw_lines));
    merge_by_rule(findings)
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
