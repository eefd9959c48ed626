//! The built-in name lists of the environment policy: the core variables,
//! the default credential excludes, the variables Talon itself reads and
//! the variables that turn TLS verification off.

use crate::pattern::NamePattern;

/// The variables `inherit: "core"` passes on (besides `LC_*`): what a
/// shell and ordinary tools need to find programs, the user, the locale,
/// the terminal, the time zone and a temp dir.
pub const CORE_VARS: [&str; 14] = [
    "PATH",
    "HOME",
    "USER",
    "USERNAME",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "COLORTERM",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
];

/// Prefixes `inherit: "core"` also passes on (the locale categories).
pub const CORE_PREFIXES: [&str; 1] = ["LC_"];

/// The exclude patterns that always apply to an inherited variable,
/// whatever the config says (matched ignoring case). A secret that a
/// child really needs is given by name in `tools.exec.env.set`.
pub const DEFAULT_EXCLUDES: [&str; 14] = [
    "*KEY*",
    "*SECRET*",
    "*TOKEN*",
    "*PASSWORD*",
    "*PASSWD*",
    "*PASSPHRASE*",
    "*CREDENTIAL*",
    "*AUTH_*",
    "*_AUTH",
    "XAUTHORITY",
    "*COOKIE*",
    "*PRIVATE*",
    "*DSN*",
    "*DATABASE_URL*",
];

/// The variables Talon itself reads (its own namespaces, the container
/// engine's address and credentials, the SSH agent the SSH backend uses):
/// never inherited by a child, whatever `inherit` says.
pub const TALON_READ: [&str; 9] = [
    "TALON_*",
    "OPENCLAW_*",
    "CLAWDBOT_*",
    "DOCKER_HOST",
    "DOCKER_CONFIG",
    "DOCKER_CERT_PATH",
    "DOCKER_TLS_VERIFY",
    "DOCKER_CONTEXT",
    "SSH_AUTH_SOCK",
];

/// The variables that turn TLS verification off or replace the trusted CA
/// set (or log TLS session keys): a model may never set them. Compared
/// uppercased.
pub const TLS_VERIFICATION_VARS: [&str; 22] = [
    "PYTHONHTTPSVERIFY",
    "NODE_TLS_REJECT_UNAUTHORIZED",
    "NODE_EXTRA_CA_CERTS",
    "GIT_SSL_NO_VERIFY",
    "GIT_SSL_CAINFO",
    "GIT_SSL_CAPATH",
    "CURL_CA_BUNDLE",
    "CURL_HOME",
    "WGETRC",
    "REQUESTS_CA_BUNDLE",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "SSLKEYLOGFILE",
    "PIP_CERT",
    "PIP_TRUSTED_HOST",
    "AWS_CA_BUNDLE",
    "CARGO_HTTP_CAINFO",
    "CARGO_HTTP_CHECK_REVOKE",
    "GOINSECURE",
    "GONOSUMDB",
    "GONOSUMCHECK",
    "GOFLAGS",
];

/// The default excludes as patterns.
pub(crate) fn default_excludes() -> Vec<NamePattern> {
    DEFAULT_EXCLUDES
        .iter()
        .map(|p| NamePattern::builtin(p))
        .collect()
}

/// The Talon-read names as patterns.
pub(crate) fn talon_read() -> Vec<NamePattern> {
    TALON_READ.iter().map(|p| NamePattern::builtin(p)).collect()
}

/// Whether `upper` (an uppercased name) is a core variable.
pub(crate) fn is_core(upper: &str) -> bool {
    CORE_VARS.contains(&upper) || CORE_PREFIXES.iter().any(|p| upper.starts_with(p))
}

/// Whether `upper` (an uppercased name) controls TLS verification.
pub(crate) fn is_tls_verification(upper: &str) -> bool {
    TLS_VERIFICATION_VARS.contains(&upper)
}

/// Whether `name` looks like a credential (matches a default exclude).
pub fn is_credential_like(name: &str) -> bool {
    DEFAULT_EXCLUDES
        .iter()
        .any(|p| NamePattern::builtin(p).matches(name))
}
