//! Class rules: run on every scanned file (skill text and code in any
//! language), on both normalised views (see `normalize.rs`).
//!
//! Each rule names a class of attack, not one spelling of it:
//!
//! | rule id | severity | class |
//! |---|---|---|
//! | `shell-pipe-to-shell` | critical | remote script to a shell or interpreter (curl/wget piped or fed to sh/bash/python, PowerShell `iwr … \| iex`, `iex (New-Object Net.WebClient).DownloadString(…)`, download-then-run, `exec(urlopen(…).read())`, `eval` of a `fetch`) |
//! | `decoded-code-execution` | critical | decoded data executed (`base64 -d \| sh`, `exec(base64.b64decode(…))`, `eval(Buffer.from(…, 'base64'))`, `powershell -enc`, `FromBase64String` into `iex`) |
//! | `secret-exfiltration` | critical | a credential file (`~/.ssh`, `~/.aws/credentials`, `.netrc`, …) or an environment dump read near a network send |
//! | `crypto-mining` | critical | `stratum+tcp://`, miner binaries, pool host names, miner config keys and flags |
//! | `prompt-injection-ignore-instructions` | critical | "ignore your/previous/safety instructions", "forget everything above" |
//! | `prompt-injection-weaken-controls` | critical | prose telling the agent to weaken its own controls (disable the sandbox, turn off approvals, set exec security to full, `tools.exec.security: full`, `dangerouslyDisableSandbox`) or to hide what it does (do not tell the user) |
//! | `unconfined-agent` | warn | a coding agent launched with approvals or sandbox off (`--dangerously-skip-permissions`, `--yolo`, `--permission-mode bypassPermissions`) |
//! | `obfuscated-code` | warn | `String.fromCharCode` / `chr` chains, encoded blobs of 1 KiB or more |

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use super::strip::Lang;
use super::{Finding, Severity, compile_pattern};

/// How a class rule decides, beyond its regex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClassCheck {
    /// Any match fires.
    Plain,
    /// A match right after a negation ("never disable the sandbox",
    /// "do not bypass approvals") is advice, not an instruction: dropped.
    NotNegated,
    /// A run of base64, hex or `\x` escapes of [`BLOB_MIN_BYTES`] or more
    /// that is not an inline image or font (`data:image/…;base64,`).
    Blob,
    /// Credential *use* (`ssh -i ~/.ssh/key`, `-H "Authorization: …"`,
    /// `-u user:$TOKEN`) is removed from the line before matching.
    NotCredentialUse,
    /// Capture 2 (the file run) must be a file that capture 1 (the rest of
    /// the download or decode command) wrote: its `-o`/`-O`/`--output`
    /// argument, its `>` redirection, or the last segment of its URL.
    /// Downloading data and then running an unrelated local script is not
    /// remote code.
    RunsWhatItFetched,
}

/// A rule matched line by line on both views; with a context, the context
/// must match within `window` lines either side.
#[derive(Debug)]
pub(crate) struct ClassRule {
    pub(crate) id: &'static str,
    pub(crate) severity: Severity,
    pub(crate) pattern: &'static str,
    pub(crate) context: Option<&'static str>,
    /// Lines either side searched for the context (code files).
    pub(crate) window: usize,
    /// Lines either side searched for the context in skill text (prose and
    /// fenced examples), where a wide window would join unrelated examples.
    pub(crate) text_window: usize,
    pub(crate) check: ClassCheck,
    /// In JavaScript files, this pattern replaces `pattern` (a bare
    /// `exec(` there is `child_process.exec` or a regex's, not Python's
    /// `exec` of code).
    pub(crate) js_pattern: Option<&'static str>,
}

use Severity::{Critical, Warn};

/// A shell or interpreter as the target of a pipe.
macro_rules! interpreter {
    () => {
        concat!(
            r"(?:sudo\s+(?:-[ugCDhprTt]\s+\S+\s+|-\S+\s+)*)?(?:[\w./-]*/)?(?:env\s+(?:-\S+\s+)*)?",
            r"(?:xargs\s+(?:-\S+\s+)*)?(?:[\w./-]*/)?(?:busybox\s+)?",
            r#"(?:(?:sh|bash|zsh|dash|ksh|ash|python[0-9.]*|perl|ruby|node|php|pwsh|powershell)\b|["']?\$\{?(?:SHELL|BASH)\b)"#,
        )
    };
}

/// A shell or interpreter run on a file, or `chmod +x` of one; capture 2
/// is the file.
macro_rules! run_file {
    () => {
        concat!(
            r"(?:sudo\s+)?(?:(?:sh|bash|zsh|dash|ksh|source|\.|python[0-9.]*|perl|ruby|node|pwsh|powershell)",
            r"(?:\.exe)?\s+(?:-\S+\s+)*|chmod\s+(?:[ugoa]*\+x|[0-7]*[1357])\s+|start\s+(?:\x22\x22\s+)?|\.[\\/]|(?:cmd(?:\.exe)?\s+/c\s+))",
            r#"["']?([^\s"';&|]+)"#,
        )
    };
}

/// `base64` with a decode flag.
macro_rules! b64_decode {
    () => {
        r"\bbase64\s+(?:-\S+\s+)*?(?:-[a-zA-Z]*[dD][a-zA-Z]*|--decode)\b"
    };
}

pub(crate) const REMOTE_SCRIPT: &str = concat!(
    r"(?i)",
    // PowerShell: download piped into iex.
    r"(?:\b(?:iwr|irm|Invoke-WebRequest|Invoke-RestMethod|curl|wget)\b|DownloadString|DownloadData|WebClient)",
    r"[^\n]{0,200}\|\s*(?:&\s*)?(?:iex|Invoke-Expression)\b",
    // iex (New-Object Net.WebClient).DownloadString(…), iex (iwr …), IEX(irm …)
    r"|\b(?:iex|Invoke-Expression)\b[\s(&$]{0,6}[^\n]{0,80}?(?:DownloadString|DownloadData|Net\.WebClient",
    r"|\biwr\b|\birm\b|Invoke-WebRequest|Invoke-RestMethod|Net\.Http\.HttpClient|\bcurl\b|\bwget\b)",
    r"|\[scriptblock\]::Create\s*\([^\n]{0,200}(?:DownloadString|\biwr\b|\birm\b|Invoke-WebRequest|Invoke-RestMethod|WebClient)",
    // python -c "$(curl …)"
    r#"|\b(?:python[0-9.]*|node|perl|ruby|php)\s+(?:-\S+\s+)*?-[ce]\s+["']?(?:\$\(|`)\s*(?:curl|wget)\b"#,
    // exec(urlopen(…).read()), exec(requests.get(…).text), eval(await fetch(…))
    r"|\b(?:exec|eval)\s*\([^\n]{0,40}?(?:urlopen|requests\.get|httpx\.get|urllib\.request\.urlopen|fetch|axios\.get)\s*\(",
    r"|\bnew\s+Function\s*\([^\n]{0,40}?(?:fetch|axios\.get)\s*\(",
    r"|\bfetch\s*\([^\n]{0,200}\.then\s*\([^\n]{0,80}(?:\beval\b|new\s+Function)",
    // curl … | sh, with the ways a pipe can be spelt after normalisation.
    r"|\b(?:curl|wget)\b[^|\n]{0,200}(?:\|[^|\n]{1,120}){0,3}?\|&?\s*",
    interpreter!(),
    // A here-string of a download: `sh <<< "$(curl …)"`.
    r#"|\b(?:sh|bash|zsh|dash|ksh|python[0-9.]*|perl|ruby|node|php)\s+(?:-\S+\s+)*<<<\s*["']?(?:\$\(|`)\s*(?:curl|wget)\b"#,
    // A download fed to a shell through an output process substitution:
    // `curl … | tee >(sh)`.
    r"|\b(?:curl|wget)\b[^\n]{0,200}>\(\s*(?:sudo\s+)?(?:sh|bash|zsh|dash|ksh|python[0-9.]*|perl|ruby|node)\b",
    // A shell or interpreter reading a download through process
    // substitution: `bash < <(curl …)`, `python3 <(curl …)`.
    r"|\b(?:sh|bash|zsh|dash|ksh|source|python[0-9.]*|perl|ruby|node|php)\s+(?:-\S+\s+)*(?:<\s*)?<\(\s*[^\n)]{0,40}?\b(?:curl|wget)\b",
    // PowerShell: the download and the iex on one line in any order
    // (`$s=$wc.DownloadString(u); iex $s`).
    r"|(?:DownloadString|DownloadData|\b(?:iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\b)[^\n]{0,200}[;|]\s*&?\s*(?:iex|Invoke-Expression)\b",
);

pub(crate) const DECODED_EXEC: &str = concat!(
    r"(?i)",
    // exec/eval/Function of a decode on the same line.
    r"\b(?:exec|eval|execfile|Function|runInThisContext|runInNewContext|runInContext",
    // ... or a process call running decoded data as its command.
    r"|system|popen|Popen|check_output|check_call|getoutput|execSync|spawnSync|execFileSync)\s*\(",
    r"[^\n]{0,200}(?:b64decode|b32decode|b16decode|a85decode|b85decode|decodebytes|decodestring",
    r"|fromhex|unhexlify|zlib\.decompress|marshal\.loads|codecs\.decode|\bunescape\s*\(|decodeURIComponent\s*\(",
    r#"|Buffer\.from\s*\([^\n]{0,200}["'](?:base64|hex|base64url)["']|\batob\s*\()"#,
    // Perl: `eval decode_base64(…)`.
    r"|\beval\s*\(?\s*(?:MIME::Base64::)?decode_base64\b",
    // Shell: decode piped into a shell or interpreter.
    r"|",
    b64_decode!(),
    r"[^\n]{0,200}\|\s*",
    interpreter!(),
    r"|\b(?:xxd\s+(?:-\S+\s+)*-r|openssl\s+(?:enc\s+)?(?:-?base64\s+-d|-d\s+-?base64|-a\s+-d))\b[^\n]{0,200}\|\s*",
    interpreter!(),
    // bash -c "$(… base64 -d)", eval "$(… | base64 -d)"
    r#"|\b(?:(?:sh|bash|zsh|dash|ksh)\s+-c|eval|(?:python[0-9.]*|node|perl|ruby|php)\s+(?:-\S+\s+)*?-[ce])\s+["']?(?:\$\(|`)[^\n]{0,200}?(?:"#,
    b64_decode!(),
    r"|xxd\s+(?:-\S+\s+)*-r)",
    // bash <(echo … | base64 -d)
    r"|\b(?:sh|bash|zsh|source|\.)\s+<\(\s*[^\n)]{0,200}",
    b64_decode!(),
    // PowerShell encoded commands and FromBase64String into iex.
    r"|\b(?:powershell|pwsh)(?:\.exe)?\b[^\n]{0,80}\s[-/]e(?:c|nc|ncodedcommand)?\s+[A-Za-z0-9+/=]{16,}",
    r"|FromBase64String[^\n]{0,300}(?:\|\s*(?:iex|Invoke-Expression)\b|\bInvoke-Expression\b|\biex\b)",
    r"|\b(?:iex|Invoke-Expression)\b[^\n]{0,200}FromBase64String",
);

/// A download (capture 1: the rest of its command), then, in the same
/// command list, a shell or interpreter run on a file, or `chmod +x` of
/// one (capture 2: that file). [`ClassCheck::RunsWhatItFetched`] keeps the
/// match only when the file is the one the download wrote.
pub(crate) const DOWNLOAD_THEN_RUN: &str = concat!(
    r"(?i)\b(?:curl|wget|iwr|Invoke-WebRequest|certutil|bitsadmin|Start-BitsTransfer)\b([^\n|;&]{0,300})(?:&&|;)\s*",
    run_file!(),
);

/// The same for decoded data written to a file: `base64 -d > /tmp/x;
/// sh /tmp/x`.
pub(crate) const DECODE_THEN_RUN: &str = concat!(
    r"(?i)\b(?:base64|xxd|openssl)\b([^\n|;&]{0,300})(?:&&|;)\s*",
    run_file!(),
);

/// An `exec`/`eval`-like call, for the windowed decoded/remote rules.
pub(crate) const EXEC_CALL: &str = concat!(
    r"(?:^|[^\w.$])(?:exec|eval|execfile)\s*\(|\bnew\s+Function\s*\(|(?:^|[^\w.$])Function\s*\(",
    r"|\bvm\s*\.\s*runIn\w*\s*\(|\brunIn(?:This|New)?Context\s*\(",
);
/// [`EXEC_CALL`] in JavaScript: code evaluation only.
pub(crate) const EXEC_CALL_JS: &str = concat!(
    r"(?:^|[^\w.$])eval\s*\(|\bnew\s+Function\s*\(|(?:^|[^\w.$])Function\s*\(",
    r"|\bvm\s*\.\s*runIn\w*\s*\(|\brunIn(?:This|New)?Context\s*\(",
);
pub(crate) const DECODE_CALL: &str = concat!(
    r"\b(?:b64decode|b32decode|b16decode|a85decode|b85decode|decodebytes|unhexlify|marshal\.loads)\s*\(",
    r"|\bbytes\.fromhex\s*\(|\bzlib\.decompress\s*\(|\bcodecs\.decode\s*\(",
    r#"|\bBuffer\.from\s*\([^\n]*["'](?:base64|hex|base64url)["']|\batob\s*\("#,
);
pub(crate) const REMOTE_READ: &str = concat!(
    r"\brequests\.get\s*\(|\bhttpx\.get\s*\(|\burlopen\s*\(|\burllib\.request\b",
    r"|\bfetch\s*\(|\baxios\.get\s*\(|\bhttps?\.get\s*\(",
);

pub(crate) const CRYPTO_MINING: &str = concat!(
    r"(?i)stratum\d?\+(?:tcp|ssl|tls)://",
    r"|\b(?:coinhive|coin-hive|cryptonight|cryptoloot|xmrig|xmr-stak|cpuminer|minerd|ethminer",
    r"|nbminer|lolminer|phoenixminer|gminer|nanominer|srbminer|teamredminer|cgminer|bfgminer|ccminer)\b",
    r"|\b(?:[\w-]+\.)*(?:minexmr|supportxmr|moneroocean|nanopool|hashvault|c3pool|2miners|f2pool",
    r"|herominers|unmineable|nicehash|ethermine|dwarfpool|xmrpool|monerohash|minergate|viabtc",
    r"|antpool|kryptex)\.(?:com|org|net|stream|pro|io|cc|eu)\b",
    r#"|["']?\b(?:donate-level|donate-over-proxy|randomx-1gb-pages|cpu-max-threads-hint)\b["']?\s*[:=]"#,
    r"|--donate-level\b|--randomx-",
    r"|(?:\s-a|--algo)[ =](?:rx/0|randomx|cn/r|cryptonight|kawpow|autolykos)\b",
    r#"|["']algo["']\s*:\s*["'](?:rx/0|randomx|cn/\w+|cryptonight|kawpow)"#,
    // A Monero address given as the pool user.
    r#"|(?:-u|--user|\buser)\b["']?\s*[:=,]?\s*["']?4[0-9AB][1-9A-HJ-NP-Za-km-z]{93}\b"#,
);

/// A credential file or directory, or a dump of the whole environment.
pub(crate) const CREDENTIAL_SOURCE: &str = concat!(
    r"(?i)\.ssh(?:/(?:id_\w+(?:[^.\w]|$)|\*|config\b|authorized_keys)|/?[\x22']?(?:\s|$|[|;&)>]))",
    r#"|["']\.ssh["']|\bid_(?:rsa|dsa|ecdsa|ed25519)(?:[^.\w]|$)"#,
    r#"|\.aws/(?:credentials|config)\b|["']\.aws["']|~/\.(?:aws|kube|docker|azure)/?(?:\s|$|[|;&)>])|\.config/gcloud\b|application_default_credentials\.json"#,
    r"|\.kube/config\b|\.docker/config\.json|\.netrc\b|\.npmrc\b|\.pypirc\b|\.git-credentials\b",
    r"|\.config/gh/hosts\.yml\b|\.vault-token\b|credentials\.tfrc\.json\b|\.pgpass\b|\.my\.cnf\b",
    r"|\.gnupg\b|/etc/shadow\b|\bLogin\s+Data\b|\bwallet\.dat\b|\.ethereum/keystore",
    // The whole environment.
    r"|\bprintenv\b|(?:^|[\s;&|(`])env\s*[|>]|(?:\$\(|`)\s*(?:env|set|export\s+-p|declare\s+-x)\s*(?:\)|`)",
    r"|/proc/[\w/]*/environ|JSON\.stringify\s*\(\s*process\.env\s*\)|\.\.\.\s*process\.env\b",
    r"|Object\.(?:entries|keys|values|assign)\s*\([^)\n]*process\.env\s*\)",
    r"|\bdict\s*\(\s*os\.environ\s*\)|\bjson\.dumps\s*\(\s*(?:dict\s*\(\s*)?os\.environ\b|\bstr\s*\(\s*os\.environ\s*\)",
    r"|\bos\.environ\s*\.\s*items\s*\(|\b(?:Get-ChildItem|gci|dir|ls)\s+env:",
);

/// A network send (any language).
pub(crate) const NETWORK_SEND: &str = concat!(
    r"(?i)\b(?:curl|wget|nc|ncat|netcat|socat|scp|rsync|sftp|ftp|telnet)\b|/dev/(?:tcp|udp)/",
    r"|\bfetch\s*\(|\baxios\b|\bhttps?\.(?:request|get)\s*\(|\bXMLHttpRequest\b|\bsendBeacon\b",
    r"|\bnew\s+WebSocket\b|\bnet\.connect\b|\brequests\.(?:post|put|get|patch|request)\s*\(",
    r"|\bhttpx\.\w+\s*\(|\burlopen\s*\(|\burllib\.request\b|\bhttp\.client\b",
    r"|\bsocket\.(?:socket|create_connection)\b|\.sendall\s*\(|\bsmtplib\b",
    r"|\bInvoke-(?:WebRequest|RestMethod)\b|\b(?:iwr|irm)\b|\bNet\.WebClient\b|\bUpload(?:String|File|Data)\b",
    r"|discord(?:app)?\.com/api/webhooks|api\.telegram\.org|webhook\.site|ngrok\.io|pastebin\.com|transfer\.sh",
    // Prose: "post its contents to https://…", "email it to a@b.example".
    r"|\b(?:send|post|upload|submit|forward|transmit|exfiltrate|e-?mail|paste)\b[^\n]{0,80}?(?:https?://|\b[\w.+-]+@[\w-]+\.[\w.]+)",
);

/// Credential use on a command line, removed before the exfiltration
/// match: an identity file (`ssh -i ~/.ssh/key`), an authentication header
/// (`-H "x-api-key: $ANTHROPIC_API_KEY"`, `-H "Authorization: Bearer …"`).
/// A secret in any other header, the body or the URL is still a finding.
pub(crate) const CREDENTIAL_USE: &str = concat!(
    r#"(?:\s-i|--identity-file|IdentityFile[= ])\s*(?:"[^"]*"|'[^']*'|\S+)"#,
    r#"|(?:\s-u|--user)[= ]\s*(?:"[^"]*"|'[^']*'|\S+)"#,
    r#"|(?:\s-H|--header)\s+(?:"(?i:authorization|proxy-authorization|x-api-key|api-key|private-token|x-auth-token"#,
    r#"|[\w-]*-(?:key|token))\s*:[^"]*"|'(?i:authorization|proxy-authorization|x-api-key|api-key|private-token"#,
    r#"|x-auth-token|[\w-]*-(?:key|token))\s*:[^']*')"#,
);

pub(crate) const IGNORE_INSTRUCTIONS: &str = concat!(
    r"(?i)\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+)?(?:of\s+)?",
    r"(?:your\s+(?:own\s+)?|(?:the\s+|my\s+|all\s+|these\s+)?(?:previous|prior|original|system|developer",
    r"|safety|security|earlier|above|preceding|initial)\s+)",
    r"(?:\w+\s+)?(?:instructions|guidelines|guidance|guardrails|rules|policies|directives|programming|constraints",
    r"|context|messages|commands|orders|restrictions|directions|prompts?)\b",
    r"|\bforget\s+(?:everything|all)\s+(?:above|before|previously|you\s+(?:were|have\s+been)\s+told)",
    r"|\byou\s+are\s+no\s+longer\s+bound\s+by\b|\bDAN\s+mode\b|\bdeveloper\s+mode\s+enabled\b",
    r"|\byour\s+(?:new|real|actual|true)\s+instructions\s+(?:are|follow)\b|^[\s>#*\[-]*new\s+instructions\s*:",
    // "disregard the instructions above", "stop following your previous rules"
    r"|\b(?:ignore|disregard|forget)\s+(?:all\s+)?(?:the|your|these|those|any)\s+(?:\w+\s+)?",
    r"(?:instructions|rules|guidelines|guidance|directions|prompts?)\s+(?:above|before|earlier|given\s+(?:above|earlier|before)",
    r"|you\s+(?:were|have\s+been)\s+given)\b",
    r"|\b(?:stop|do\s+not|don['’]?t|never)\s+follow(?:ing)?\s+(?:your|the|any|all)\s+(?:(?:previous|prior|original|earlier|system|above)\s+)?",
    r"(?:instructions|rules|guidelines|guidance|directions)\b",
);

/// A verb that weakens a control, with the control it weakens.
pub(crate) const WEAKEN_CONTROLS: &str = concat!(
    r"(?i)\b(?:disable|deactivate|turn\s+off|switch\s+off|shut\s+off|bypass|circumvent|get\s+around",
    r"|escape|break\s+out\s+of|evade|ignore|override|weaken|loosen|relax)\s+",
    r"(?:(?:the|your|its|any|all|every|of|these|those|own|current|agent['’]?s?|talon['’]?s?",
    r"|openclaw['’]?s?|claude['’]?s?)\s+){0,3}",
    r"(?:sandbox(?:ing|es)?|approvals?|approval\s+(?:prompts?|checks?|gates?|requirements?)",
    r"|exec\s+approvals?|safety\s+(?:checks?|filters?|guidelines|rules|guardrails|measures|restrictions|polic(?:y|ies))",
    r"|guardrails?|security\s+(?:checks?|controls?|polic(?:y|ies)|restrictions|settings|scanner|hooks?)",
    r"|permission\s+(?:checks?|prompts?|system)|tool\s+(?:polic(?:y|ies)|restrictions|allowlist|deny\s*list)",
    r"|content\s+filters?)\b",
);

/// Settings that switch off the agent's own controls, written as config
/// or as prose: `tools.exec.security: full`, `sandbox.mode = "off"`,
/// `dangerouslyDisableSandbox: true`, "set exec security to full", "set ask
/// to off", "switch the sandbox mode to off".
pub(crate) const WEAKEN_SETTINGS: &str = concat!(
    r"(?i)\bdangerouslyDisableSandbox\b",
    r"|\b(?:turn|switch|shut)\s+(?:the\s+|your\s+|its\s+|all\s+)?(?:exec\s+)?(?:sandbox(?:ing)?|approvals?|approval\s+prompts?",
    r"|safety\s+checks?|guardrails|security\s+checks?)\s+off\b",
    r#"|(?:^|[\s{,])["']?ask["']?\s*[:=]\s*["']?off\b"#,
    r#"|\b(?:exec[._-]?)?approvals?["']?\s*[:=]\s*["']?(?:false|off|never|none)\b"#,
    r"|\bauto-?approve\s+(?:all|every|each|any)\b|\b(?:approve|accept|answer\s+yes\s+to)\s+(?:all|every|each|any)\s+(?:exec\s+)?(?:approval|permission)",
    r#"|\b(?:add|put)\s+["'`]?\*["'`]?\s+(?:to|in|on)\s+(?:the\s+|your\s+)?(?:exec\s+|tool\s+|command\s+)?allow-?list"#,
    r#"|\b(?:tools\.exec\.(?:security|ask)|sandbox\.mode|exec\.security|exec\.ask)\s*[:=]\s*["'`]?(?:full|off|never|none)\b"#,
    r"|\b(?:set|change|switch|put|turn)\s+(?:the\s+|your\s+|its\s+)?(?:exec(?:ution)?\s+|tool\s+|agent\s+)?",
    r"(?:security(?:\s+(?:mode|level))?|sandbox(?:\s+mode)?|approvals?(?:\s+mode)?|ask(?:\s+mode)?)",
    r#"\s+(?:setting\s+)?(?:to|=)\s+["'`]?(?:full|off|never|none|disabled|danger-full-access)\b"#,
);

/// Command-line flags that launch an agent (Claude Code, Codex, Gemini
/// CLI) with its approvals or sandbox off. A skill that orchestrates coding
/// agents uses them openly, and the command still goes through the exec
/// approval of the agent that runs it: worth a look, not a failed gate.
pub(crate) const UNCONFINED_AGENT: &str = concat!(
    r"(?i)--dangerously-skip-permissions\b|--dangerously-bypass-approvals-and-sandbox\b",
    r"|--yolo\b|--permission-mode[= ]+bypassPermissions\b|--sandbox[= ]+danger-full-access\b",
    r"|--approval-mode[= ]+yolo\b",
);

/// Prose telling the agent to hide what it does from the user.
pub(crate) const CONCEAL_FROM_USER: &str = concat!(
    r"(?i)\b(?:do\s+not|don['’]?t|never|must\s+not|should\s+not|shouldn['’]?t)\s+(?:ever\s+)?",
    r"(?:tell|inform|notify|alert|mention\s+(?:this|it|that|anything)\s+to|reveal\s+(?:this|it|that|anything)\s+to",
    r"|let)\s+(?:the\s+)?(?:user|human|operator|owner)s?\b(?:\s+know\b)?",
    r"|\bwithout\s+(?:telling|informing|notifying|alerting)\s+(?:the\s+)?(?:user|human|operator|owner)s?\b",
    r"|\b(?:hide|conceal)\s+(?:\w+\s+){0,3}from\s+the\s+(?:user|human|operator|owner)s?\b",
    r"|\bkeep\s+(?:this|these|it|that|them)\s+(?:secret|hidden)\s+from\s+the\s+(?:user|human|operator|owner)s?\b",
    r"|\bthe\s+(?:user|human|operator)\s+(?:must|should)\s+(?:not|never)\s+(?:know|see|find\s+out|be\s+told)\b",
);

pub(crate) const OBFUSCATION: &str = concat!(
    r"String\.fromCharCode\s*\((?:\s*(?:0x[0-9a-fA-F]+|\d+)\s*,){7,}",
    r"|(?:String\.fromCharCode\s*\([^)\n]{0,40}\)\s*\+\s*){2,}String\.fromCharCode",
    r"|(?:\bchr\s*\(\s*(?:0x)?[0-9a-fA-F]+\s*\)\s*\+\s*){3,}\bchr\s*\(",
    r"|\.join\s*\(\s*(?:map\s*\(\s*chr\s*,|\[?\s*chr\s*\([^()\n]{1,30}\)\s+for\s)",
    // `\u0065\u0076…` escapes, PowerShell `[char]0x69+[char]0x65+…`,
    // `[99,117,…].map(c => String.fromCharCode(c))`.
    r"|(?:\\u[0-9a-fA-F]{4}){8,}|(?:\\u\{[0-9a-fA-F]{1,6}\}){8,}",
    r"|(?i:(?:\[char\]\s*(?:0x[0-9a-f]+|\d+)\s*\+\s*){3,}\[char\])",
    r"|\[\s*(?:\d+\s*,\s*){15,}\d+\s*\]\s*\.\s*map\s*\([^\n]{0,60}fromCharCode",
    // Dean Edwards' packer and obfuscator.io's `_0x4f2a` names.
    r"|\beval\s*\(\s*function\s*\(\s*p\s*,\s*a\s*,\s*c\s*,\s*k\s*,\s*e\s*,\s*[dr]\s*\)",
    r"|(?:\b_0x[0-9a-fA-F]{4,6}\b[^\n]{0,40}){6}",
    r"|\b(?:fromCharCode|chr)\b[^\n]{0,60}\[\s*(?:\d+\s*,\s*){15,}",
);
/// The start of a possible encoded blob; [`ClassCheck::Blob`] measures the
/// run (a counted repetition of 1,024 would make a slow automaton).
pub(crate) const ENCODED_BLOB: &str = r"[A-Za-z0-9+/\\]{64}";
/// An encoded run this long (base64, hex, `\x` escapes) is a blob.
pub(crate) const BLOB_MIN_BYTES: usize = 1024;

pub(crate) const CLASS_RULES: &[ClassRule] = &[
    ClassRule {
        id: "shell-pipe-to-shell",
        severity: Critical,
        pattern: REMOTE_SCRIPT,
        context: None,
        window: 0,
        text_window: 0,
        check: ClassCheck::Plain,
        js_pattern: None,
    },
    ClassRule {
        id: "shell-pipe-to-shell",
        severity: Critical,
        pattern: EXEC_CALL,
        context: Some(REMOTE_READ),
        window: 4,
        text_window: 2,
        check: ClassCheck::Plain,
        js_pattern: Some(EXEC_CALL_JS),
    },
    ClassRule {
        id: "shell-pipe-to-shell",
        severity: Critical,
        pattern: DOWNLOAD_THEN_RUN,
        context: None,
        window: 0,
        text_window: 0,
        check: ClassCheck::RunsWhatItFetched,
        js_pattern: None,
    },
    ClassRule {
        id: "decoded-code-execution",
        severity: Critical,
        pattern: DECODE_THEN_RUN,
        context: None,
        window: 0,
        text_window: 0,
        check: ClassCheck::RunsWhatItFetched,
        js_pattern: None,
    },
    ClassRule {
        id: "decoded-code-execution",
        severity: Critical,
        pattern: DECODED_EXEC,
        context: None,
        window: 0,
        text_window: 0,
        check: ClassCheck::Plain,
        js_pattern: None,
    },
    ClassRule {
        id: "decoded-code-execution",
        severity: Critical,
        pattern: EXEC_CALL,
        context: Some(DECODE_CALL),
        window: 4,
        text_window: 2,
        check: ClassCheck::Plain,
        js_pattern: Some(EXEC_CALL_JS),
    },
    ClassRule {
        id: "secret-exfiltration",
        severity: Critical,
        pattern: CREDENTIAL_SOURCE,
        context: Some(NETWORK_SEND),
        window: 6,
        text_window: 2,
        check: ClassCheck::NotCredentialUse,
        js_pattern: None,
    },
    ClassRule {
        id: "crypto-mining",
        severity: Critical,
        pattern: CRYPTO_MINING,
        context: None,
        window: 0,
        text_window: 0,
        check: ClassCheck::Plain,
        js_pattern: None,
    },
    ClassRule {
        id: "prompt-injection-ignore-instructions",
        severity: Critical,
        pattern: IGNORE_INSTRUCTIONS,
        context: None,
        window: 0,
        text_window: 0,
        check: ClassCheck::NotNegated,
        js_pattern: None,
    },
    ClassRule {
        id: "prompt-injection-weaken-controls",
        severity: Critical,
        pattern: WEAKEN_CONTROLS,
        context: None,
        window: 0,
        text_window: 0,
        check: ClassCheck::NotNegated,
        js_pattern: None,
    },
    ClassRule {
        id: "prompt-injection-weaken-controls",
        severity: Critical,
        pattern: WEAKEN_SETTINGS,
        context: None,
        window: 0,
        text_window: 0,
        check: ClassCheck::Plain,
        js_pattern: None,
    },
    ClassRule {
        id: "unconfined-agent",
        severity: Warn,
        pattern: UNCONFINED_AGENT,
        context: None,
        window: 0,
        text_window: 0,
        check: ClassCheck::Plain,
        js_pattern: None,
    },
    ClassRule {
        id: "prompt-injection-weaken-controls",
        severity: Critical,
        pattern: CONCEAL_FROM_USER,
        context: None,
        window: 0,
        text_window: 0,
        check: ClassCheck::Plain,
        js_pattern: None,
    },
    ClassRule {
        id: "obfuscated-code",
        severity: Warn,
        pattern: OBFUSCATION,
        context: None,
        window: 0,
        text_window: 0,
        check: ClassCheck::Plain,
        js_pattern: None,
    },
    ClassRule {
        id: "obfuscated-code",
        severity: Warn,
        pattern: ENCODED_BLOB,
        context: None,
        window: 0,
        text_window: 0,
        check: ClassCheck::Blob,
        js_pattern: None,
    },
];

/// A negation right before a match: the sentence advises against it.
const NEGATION_BEFORE: &str =
    r"(?i)(?:\bnot|n['’]t|\bnever|\bno|\bavoid|\bwithout|\bnor)\s+(?:ever\s+|to\s+)?$";
const DATA_URI_BEFORE: &str = r"(?i)data:(?:image|font|audio|video|application/(?:font|x-font|octet-stream|pdf))[\w/+.-]*;base64,$";

#[derive(Debug)]
struct Compiled {
    rule: &'static ClassRule,
    pattern: Regex,
    js_pattern: Option<Regex>,
    context: Option<Regex>,
}

static COMPILED: LazyLock<Vec<Compiled>> = LazyLock::new(|| {
    CLASS_RULES
        .iter()
        .filter_map(|rule| {
            let context = match rule.context {
                None => None,
                Some(c) => Some(compile_pattern(rule.id, c)?),
            };
            let js_pattern = match rule.js_pattern {
                None => None,
                Some(p) => Some(compile_pattern(rule.id, p)?),
            };
            Some(Compiled {
                rule,
                pattern: compile_pattern(rule.id, rule.pattern)?,
                js_pattern,
                context,
            })
        })
        .collect()
});
static NEGATION: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile_pattern("class/negation", NEGATION_BEFORE));
static DATA_URI: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile_pattern("class/data-uri", DATA_URI_BEFORE));
static CRED_USE: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile_pattern("class/credential-use", CREDENTIAL_USE));

/// Every pattern of the module, for the compile test.
#[cfg(test)]
pub(crate) fn all_patterns() -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&'static str, &'static str)> = Vec::new();
    for rule in CLASS_RULES {
        out.push((rule.id, rule.pattern));
        out.extend(rule.context.map(|c| (rule.id, c)));
        out.extend(rule.js_pattern.map(|p| (rule.id, p)));
    }
    out.extend([
        ("class/negation", NEGATION_BEFORE),
        ("class/data-uri", DATA_URI_BEFORE),
        ("class/credential-use", CREDENTIAL_USE),
    ]);
    out
}

/// Whether `line` holds a run of base64 characters (with at least one
/// digit, `+` or `/`, so a long word is not one), hex digits or `\x`
/// escapes of [`BLOB_MIN_BYTES`] or more that is not a data URI.
fn has_blob(line: &str) -> bool {
    let bytes = line.as_bytes();
    let mut start = 0;
    while start < bytes.len() {
        let is_b64 = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'\\');
        if !is_b64(bytes[start]) {
            start += 1;
            continue;
        }
        let end = bytes[start..]
            .iter()
            .position(|b| !is_b64(*b))
            .map_or(bytes.len(), |p| start + p);
        let run = &bytes[start..end];
        if run.len() >= BLOB_MIN_BYTES
            && run
                .iter()
                .any(|b| b.is_ascii_digit() || matches!(b, b'+' | b'/' | b'\\'))
        {
            let before = line.get(..start).unwrap_or("");
            if !DATA_URI.as_ref().is_some_and(|re| re.is_match(before)) {
                return true;
            }
        }
        start = end.max(start + 1);
    }
    false
}

/// `line` with credential use (an identity file, an auth header) blanked,
/// so that using a credential is not read as sending it.
pub(crate) fn strip_credential_use(line: &str) -> std::borrow::Cow<'_, str> {
    match CRED_USE.as_ref() {
        Some(re) => re.replace_all(line, " "),
        None => std::borrow::Cow::Borrowed(line),
    }
}

/// Whether the text before a match ends with a negation ("never",
/// "do not", "avoid"): the sentence advises against what follows.
pub(crate) fn negated_before(before: &str) -> bool {
    NEGATION.as_ref().is_some_and(|re| re.is_match(before))
}

fn line_matches(rule: &Compiled, pattern: &Regex, line: &str) -> bool {
    match rule.rule.check {
        ClassCheck::Plain => pattern.is_match(line),
        ClassCheck::NotNegated => pattern
            .find_iter(line)
            .any(|m| !negated_before(&line[..m.start()])),
        ClassCheck::Blob => line.len() >= BLOB_MIN_BYTES && has_blob(line),
        ClassCheck::NotCredentialUse => pattern.is_match(&strip_credential_use(line)),
        ClassCheck::RunsWhatItFetched => {
            pattern
                .captures_iter(line)
                .any(|caps| match (caps.get(1), caps.get(2)) {
                    (Some(fetch), Some(run)) => runs_what_it_fetched(fetch.as_str(), run.as_str()),
                    _ => false,
                })
        }
    }
}

/// The last path segment of a file name or URL, without quotes, a query
/// or a fragment.
fn base_name(word: &str) -> &str {
    let word = word.trim_matches(|c| matches!(c, '"' | '\'' | '`' | '(' | ')'));
    let word = word.split(['?', '#']).next().unwrap_or(word);
    let word = word.trim_end_matches('/');
    word.rsplit(['/', '\\']).next().unwrap_or(word)
}

/// Whether `run` (the file a shell runs or `chmod +x` marks) is a file the
/// command `fetch` wrote: its `-o`/`-O`/`--output[-document]`/`-OutFile`
/// argument, its `>` target, or the last segment of a URL it names.
fn runs_what_it_fetched(fetch: &str, run: &str) -> bool {
    let target = base_name(run);
    if target.is_empty() || target == "-" || target.starts_with('$') {
        return false;
    }
    let words: Vec<&str> = fetch.split_whitespace().collect();
    let mut written: Vec<&str> = Vec::new();
    for (i, word) in words.iter().enumerate() {
        let next = words.get(i + 1).copied();
        // A cluster of short flags ending in `o`/`O` (`-o`, `-qO`, `-fsSLo`)
        // takes the output file next.
        let short_output = word.len() >= 2
            && word.starts_with('-')
            && !word.starts_with("--")
            && word[1..].chars().all(|c| c.is_ascii_alphabetic())
            && (word.ends_with('o') || word.ends_with('O'));
        if word.contains("://") {
            written.push(word);
        } else if let Some(rest) = word.strip_prefix('>') {
            written.extend(if rest.is_empty() { next } else { Some(rest) });
        } else if let Some((flag, value)) = word.split_once('=') {
            if matches!(flag, "--output" | "--output-document" | "-O" | "-o") {
                written.push(value);
            }
        } else if short_output
            || matches!(*word, "--output" | "--output-document")
            || word.eq_ignore_ascii_case("-OutFile")
        {
            written.extend(next);
        }
    }
    written
        .into_iter()
        .any(|w| w != "-" && base_name(w) == target)
}

fn context_near(ctx: &Regex, views: [&[&str]; 2], i: usize, window: usize) -> bool {
    views.iter().any(|lines| {
        let start = i.saturating_sub(window);
        let end = (i + window + 1).min(lines.len());
        lines
            .get(start..end)
            .is_some_and(|near| near.iter().any(|l| ctx.is_match(l)))
    })
}

/// Runs the class rules over both views of a file (`clean` and `shell`,
/// line-aligned). At most one finding per rule id: the most severe match,
/// the first line among equals. `lang` is the language of a code file,
/// `None` for skill text (which gets the narrower context window).
/// `evidence` formats the original line.
pub(crate) fn scan_classes(
    file: &Path,
    views: [&str; 2],
    clean: &[&str],
    shell: &[&str],
    lang: Option<Lang>,
    evidence: &dyn Fn(usize) -> String,
) -> Vec<Finding> {
    let is_text = lang.is_none();
    let mut out: Vec<Finding> = Vec::new();
    for rule in COMPILED.iter() {
        if out.iter().any(|f| f.rule_id == rule.rule.id) {
            continue;
        }
        let pattern = match (&rule.js_pattern, lang) {
            (Some(js), Some(Lang::Js)) => js,
            _ => &rule.pattern,
        };
        // Most rules match nowhere: one pass over each whole view first.
        if !views.iter().any(|v| pattern.is_match(v)) {
            continue;
        }
        let window = if is_text {
            rule.rule.text_window
        } else {
            rule.rule.window
        };
        let hit = (0..clean.len().max(shell.len())).find(|&i| {
            let on_line = [clean.get(i), shell.get(i)]
                .into_iter()
                .flatten()
                .any(|line| line_matches(rule, pattern, line));
            on_line
                && rule
                    .context
                    .as_ref()
                    .is_none_or(|ctx| context_near(ctx, [clean, shell], i, window))
        });
        if let Some(i) = hit {
            out.push(Finding {
                rule_id: rule.rule.id.to_owned(),
                severity: rule.rule.severity,
                file: file.to_path_buf(),
                line: i + 1,
                excerpt: evidence(i),
            });
        }
    }
    out
}

#[cfg(test)]
#[path = "classes_tests.rs"]
mod tests;
