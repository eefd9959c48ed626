//! The `metadata` → `openclaw` manifest block and its install specs
//! (OpenClaw's `src/shared/frontmatter.ts` and
//! `src/skills/loading/frontmatter.ts`).
//!
//! Install targets end up on a command line (`brew install <formula>`,
//! `npm install -g <package>`, …), so validation is a filter: an entry whose
//! target fails its pattern is dropped with a warning and never passed on.

use std::sync::LazyLock;

use regex::Regex;

use super::value::{Node, parse_json5, to_compact_json};
use super::{is_js_space, parse_bool, quoted};
use crate::types::{InstallKind, InstallSpec, SkillManifest, SkillRequires};

/// The manifest block names, current first, then the legacy ones.
const MANIFEST_KEYS: [&str; 3] = ["openclaw", "clawdbot", "moltbot"];

/// Read the manifest from the `metadata` field. `structured` is the compact
/// JSON of the YAML value when the raw line text won (inline-`:` rule); it is
/// tried when the raw text is not valid JSON5.
pub(crate) fn resolve_manifest(
    metadata: Option<&str>,
    structured: Option<&str>,
    warnings: &mut Vec<String>,
) -> Option<SkillManifest> {
    let raw = metadata.filter(|m| !m.trim_matches(is_js_space).is_empty())?;
    let root = match parse_json5(raw) {
        Ok(root) => root,
        Err(error) => match structured.map(parse_json5) {
            Some(Ok(root)) => root,
            Some(Err(_)) | None => {
                warnings.push(format!(
                    "metadata is not valid JSON5 ({}); ignored",
                    quoted(&error.to_string())
                ));
                return None;
            }
        },
    };
    let block = MANIFEST_KEYS
        .iter()
        .find_map(|key| root.get(key).filter(|b| matches!(b, Node::Map(_))))?;
    Some(read_block(block, warnings))
}

fn read_block(block: &Node, warnings: &mut Vec<String>) -> SkillManifest {
    let always = match block.get("always") {
        None | Some(Node::Null) => false,
        Some(Node::Bool(b)) => *b,
        Some(other) => match other.as_str().and_then(parse_bool) {
            Some(b) => b,
            None => {
                let shown = other
                    .scalar_text()
                    .unwrap_or_else(|| to_compact_json(other));
                warnings.push(format!(
                    "metadata.openclaw.always: {} is not a boolean; using false",
                    quoted(&shown)
                ));
                false
            }
        },
    };
    let requires = match block.get("requires") {
        Some(r @ Node::Map(_)) => SkillRequires {
            bins: string_list(r.get("bins")),
            any_bins: string_list(r.get("anyBins")),
            env: string_list(r.get("env")),
            config: config_list(r.get("config"), warnings),
        },
        Some(_) | None => SkillRequires::default(),
    };
    let install = match block.get("install") {
        None | Some(Node::Null) => Vec::new(),
        Some(Node::Seq(entries)) => entries
            .iter()
            .enumerate()
            .filter_map(|(i, entry)| parse_install(i, entry, warnings))
            .collect(),
        Some(_) => {
            warnings.push("metadata.openclaw.install is not a list; ignored".to_owned());
            Vec::new()
        }
    };
    SkillManifest {
        always,
        emoji: trimmed_string(block.get("emoji")),
        homepage: trimmed_string(block.get("homepage")),
        skill_key: trimmed_string(block.get("skillKey")),
        primary_env: trimmed_string(block.get("primaryEnv")),
        os: string_list(block.get("os")),
        requires,
        install,
    }
}

fn trimmed_string(node: Option<&Node>) -> Option<String> {
    node.and_then(Node::as_str)
        .map(|s| s.trim_matches(is_js_space))
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// A list given as an array (scalars, trimmed, empties dropped) or a
/// comma-separated string.
fn string_list(node: Option<&Node>) -> Vec<String> {
    match node {
        Some(Node::Seq(items)) => items
            .iter()
            .filter_map(Node::scalar_text)
            .map(|s| s.trim_matches(is_js_space).to_owned())
            .filter(|s| !s.is_empty())
            .collect(),
        Some(Node::Str(s)) => s
            .split(',')
            .map(|part| part.trim_matches(is_js_space))
            .filter(|part| !part.is_empty())
            .map(str::to_owned)
            .collect(),
        Some(Node::Null | Node::Bool(_) | Node::Int(_) | Node::Float(_) | Node::Map(_)) | None => {
            Vec::new()
        }
    }
}

/// `requires.config`: string keys only; object entries are skipped with a
/// warning.
fn config_list(node: Option<&Node>, warnings: &mut Vec<String>) -> Vec<String> {
    let Some(Node::Seq(items)) = node else {
        return string_list(node);
    };
    let mut out = Vec::new();
    for item in items {
        match item {
            Node::Str(s) if !s.trim_matches(is_js_space).is_empty() => {
                out.push(s.trim_matches(is_js_space).to_owned());
            }
            Node::Map(_) => warnings.push(
                "metadata.openclaw.requires.config has an object entry; only string keys are supported, skipped"
                    .to_owned(),
            ),
            Node::Str(_) | Node::Null | Node::Bool(_) | Node::Int(_) | Node::Float(_) | Node::Seq(_) => {}
        }
    }
    out
}

fn kind_label(kind: InstallKind) -> &'static str {
    match kind {
        InstallKind::Brew => "brew",
        InstallKind::Node => "node",
        InstallKind::Go => "go",
        InstallKind::Uv => "uv",
        InstallKind::Download => "download",
    }
}

fn parse_install(index: usize, entry: &Node, warnings: &mut Vec<String>) -> Option<InstallSpec> {
    let mut reject = |why: String| {
        warnings.push(format!("install[{index}] dropped: {why}"));
        None
    };
    if !matches!(entry, Node::Map(_)) {
        return reject("not an object".to_owned());
    }
    let kind_raw = entry
        .get("kind")
        .and_then(Node::as_str)
        .or_else(|| entry.get("type").and_then(Node::as_str))
        .unwrap_or("");
    let kind = match kind_raw.trim_matches(is_js_space).to_lowercase().as_str() {
        "brew" => InstallKind::Brew,
        "node" => InstallKind::Node,
        "go" => InstallKind::Go,
        "uv" => InstallKind::Uv,
        "download" => InstallKind::Download,
        _ => return reject(format!("unknown kind {}", quoted(kind_raw))),
    };
    let label = kind_label(kind);
    let field = match kind {
        InstallKind::Brew if entry.get("formula").is_some() => "formula",
        InstallKind::Brew => "cask",
        InstallKind::Node | InstallKind::Uv => "package",
        InstallKind::Go => "module",
        InstallKind::Download => "url",
    };
    let target = match entry.get(field) {
        Some(Node::Str(s)) if !s.trim_matches(is_js_space).is_empty() => {
            s.trim_matches(is_js_space)
        }
        Some(Node::Str(_) | Node::Null) | None => return reject(format!("{label}: no {field}")),
        Some(_) => return reject(format!("{label}: {field} is not a string")),
    };
    let checked = if target.starts_with('-') {
        Err("starts with '-'")
    } else {
        match kind {
            InstallKind::Brew => check_brew(target),
            InstallKind::Node => check_npm(target),
            InstallKind::Go => check_go(target),
            InstallKind::Uv => check_uv(target),
            InstallKind::Download => check_url(target),
        }
    };
    if let Err(why) = checked {
        return reject(format!(
            "{label}: {field} {} rejected ({why})",
            quoted(target)
        ));
    }
    if kind == InstallKind::Download {
        match entry.get("sha256") {
            None => {}
            Some(Node::Str(s)) if is_sha256(s.trim_matches(is_js_space)) => {}
            Some(other) => {
                let shown = other.scalar_text().unwrap_or_default();
                return reject(format!(
                    "{label}: sha256 {} is not 64 hex digits",
                    quoted(&shown)
                ));
            }
        }
    }
    Some(InstallSpec {
        kind,
        target: target.to_owned(),
        id: trimmed_string(entry.get("id")),
        label: trimmed_string(entry.get("label")),
        bins: string_list(entry.get("bins")),
        os: string_list(entry.get("os")),
    })
}

fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `^[A-Za-z0-9][A-Za-z0-9<extra>]*$`
fn simple_pattern(value: &str, extra: &str) -> bool {
    let mut chars = value.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || extra.contains(c))
}

/// Homebrew formula or cask: `^[A-Za-z0-9][A-Za-z0-9@+._/-]*$`, no `..`.
pub(crate) fn check_brew(value: &str) -> Result<(), &'static str> {
    if !simple_pattern(value, "@+._/-") {
        return Err("not a Homebrew formula name");
    }
    if value.contains("..") {
        return Err("contains '..'");
    }
    Ok(())
}

/// Go module: `^[A-Za-z0-9][A-Za-z0-9._~+\-/]*(@[A-Za-z0-9._~+\-]+)?$`,
/// no `..`.
pub(crate) fn check_go(value: &str) -> Result<(), &'static str> {
    let (path, version) = match value.split_once('@') {
        Some((path, version)) => (path, Some(version)),
        None => (value, None),
    };
    if !simple_pattern(path, "._~+-/") {
        return Err("not a Go module path");
    }
    let version_ok = version.is_none_or(|v| {
        !v.is_empty()
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._~+-".contains(c))
    });
    if !version_ok {
        return Err("not a Go module version");
    }
    if value.contains("..") {
        return Err("contains '..'");
    }
    Ok(())
}

/// uv / pip requirement: `^[A-Za-z0-9][A-Za-z0-9._\-\[\]=<>!~+,]*$`.
pub(crate) fn check_uv(value: &str) -> Result<(), &'static str> {
    if simple_pattern(value, "._-[]=<>!~+,") {
        Ok(())
    } else {
        Err("not a Python package requirement")
    }
}

static SEMVER: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$",
    )
    .ok()
});

/// An npm package name part: `^[a-z0-9][a-z0-9-._~]*$`.
fn npm_name_part(part: &str) -> bool {
    let mut chars = part.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-._~".contains(c))
}

/// A registry-only npm spec (OpenClaw's `validateRegistryNpmSpec`): `name`
/// or `@scope/name`, optionally `@<exact version>` or `@<dist-tag>`. URLs,
/// git, `file:`, aliases, paths and ranges are rejected.
pub(crate) fn check_npm(value: &str) -> Result<(), &'static str> {
    if value
        .chars()
        .any(|c| is_js_space(c) || c == '\n' || c.is_control())
    {
        return Err("whitespace is not allowed");
    }
    if value.contains("://") {
        return Err("URLs are not allowed");
    }
    if value.contains('#') {
        return Err("git refs are not allowed");
    }
    if value.contains(':') {
        return Err("protocol specs are not allowed");
    }
    if value.contains("..") {
        return Err("contains '..'");
    }
    let (name, selector) = match value.rfind('@').filter(|at| *at > 0) {
        Some(at) => (
            value.get(..at).unwrap_or(""),
            Some(value.get(at + 1..).unwrap_or("")),
        ),
        None => (value, None),
    };
    let name_ok = match name.strip_prefix('@') {
        Some(scoped) => scoped
            .split_once('/')
            .is_some_and(|(scope, pkg)| npm_name_part(scope) && npm_name_part(pkg)),
        None => npm_name_part(name),
    };
    if !name_ok || name.len() > 214 {
        return Err("expected <name> or <name>@<version> from the npm registry");
    }
    let Some(selector) = selector else {
        return Ok(());
    };
    if selector.is_empty() {
        return Err("missing version/tag after @");
    }
    let exact = SEMVER.as_ref().is_some_and(|re| re.is_match(selector));
    if exact || simple_pattern(selector, "._-") {
        Ok(())
    } else {
        Err("use an exact version or dist-tag (ranges are not allowed)")
    }
}

/// A download URL: `http`/`https` only, no whitespace or control
/// characters, no backslash, no credentials, a parseable host.
pub(crate) fn check_url(value: &str) -> Result<(), &'static str> {
    if value
        .chars()
        .any(|c| is_js_space(c) || c == '\n' || c.is_control())
    {
        return Err("whitespace is not allowed");
    }
    if value.contains('\\') {
        return Err("backslashes are not allowed");
    }
    let (scheme, rest) = value
        .split_once("://")
        .ok_or("not an absolute http(s) URL")?;
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Err("only http and https URLs are allowed");
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return Err("credentials in URLs are not allowed");
    }
    let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
        let (ip, after) = bracketed.split_once(']').ok_or("bad IPv6 host")?;
        if ip.parse::<std::net::Ipv6Addr>().is_err() {
            return Err("bad IPv6 host");
        }
        match after {
            "" => (ip, None),
            _ => (ip, Some(after.strip_prefix(':').ok_or("bad port")?)),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => {
                check_hostname(host)?;
                (host, Some(port))
            }
            None => {
                check_hostname(authority)?;
                (authority, None)
            }
        }
    };
    if host.is_empty() {
        return Err("missing host");
    }
    if let Some(port) = port {
        let valid = port.is_empty()
            || (port.len() <= 5
                && port.bytes().all(|b| b.is_ascii_digit())
                && port.parse::<u32>().is_ok_and(|p| p <= 65_535));
        if !valid {
            return Err("bad port");
        }
    }
    Ok(())
}

fn check_hostname(host: &str) -> Result<(), &'static str> {
    let trimmed = host.strip_suffix('.').unwrap_or(host);
    if trimmed.is_empty() || trimmed.len() > 253 {
        return Err("missing or overlong host");
    }
    let labels_ok = trimmed.split('.').all(|label| {
        !label.is_empty()
            && label.chars().count() <= 63
            && label.chars().all(|c| {
                c.is_ascii_alphanumeric()
                    || c == '-'
                    || c == '_'
                    || (!c.is_ascii() && c.is_alphanumeric())
            })
    });
    if labels_ok {
        Ok(())
    } else {
        Err("bad host name")
    }
}
