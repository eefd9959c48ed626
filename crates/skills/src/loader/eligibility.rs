//! Whether a skill's requirements are met in an [`EligibilityContext`].
//!
//! Reasons are one per unmet requirement, in the order: OS, `bins`,
//! `anyBins`, `env`, `config`. The wording is relied on elsewhere (e.g.
//! `missing env: NAME`).

use std::path::Path;

use crate::loader::EligibilityContext;
use crate::types::{Eligibility, SkillFrontmatter};

/// Check `frontmatter`'s manifest against `ctx`. No manifest, or
/// `always: true`, means eligible.
pub(crate) fn evaluate(frontmatter: &SkillFrontmatter, ctx: &EligibilityContext) -> Eligibility {
    let Some(manifest) = frontmatter.manifest.as_ref() else {
        return Eligibility {
            eligible: true,
            reasons: Vec::new(),
        };
    };
    if manifest.always {
        return Eligibility {
            eligible: true,
            reasons: Vec::new(),
        };
    }
    let mut reasons = Vec::new();
    if !manifest.os.is_empty() && !manifest.os.iter().any(|os| os == &ctx.os) {
        let this = if ctx.os.is_empty() {
            "unknown"
        } else {
            ctx.os.as_str()
        };
        reasons.push(format!(
            "os {} only (this is {this})",
            manifest.os.join(", ")
        ));
    }
    let requires = &manifest.requires;
    for bin in &requires.bins {
        if !has_binary(&ctx.path_dirs, bin) {
            reasons.push(format!("missing binary: {bin}"));
        }
    }
    if !requires.any_bins.is_empty()
        && !requires
            .any_bins
            .iter()
            .any(|bin| has_binary(&ctx.path_dirs, bin))
    {
        reasons.push(format!(
            "missing binary (any of): {}",
            requires.any_bins.join(", ")
        ));
    }
    for var in &requires.env {
        if ctx.env.get(var).is_none_or(|v| v.trim().is_empty()) {
            reasons.push(format!("missing env: {var}"));
        }
    }
    for key in &requires.config {
        if !config_truthy(&ctx.config, key) {
            reasons.push(format!("config not set: {key}"));
        }
    }
    Eligibility {
        eligible: reasons.is_empty(),
        reasons,
    }
}

/// Whether `name` is an executable file in one of `dirs`. A name that
/// could act as a path (separators, `.`/`..`, NUL, empty) is never joined
/// and counts as missing.
pub(crate) fn has_binary(dirs: &[std::path::PathBuf], name: &str) -> bool {
    let bad = name.trim().is_empty()
        || name.contains('/')
        || name.contains('\\')
        || name.contains('\0')
        || name == "."
        || name == "..";
    if bad {
        return false;
    }
    dirs.iter().any(|dir| is_executable(&dir.join(name)))
}

/// An executable regular file (following symlinks).
#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A regular file, trying the usual executable extensions.
#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    let is_file = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.is_file());
    is_file(path)
        || ["exe", "cmd", "bat", "com"]
            .iter()
            .any(|ext| is_file(&path.with_extension(ext)))
}

/// Whether the dotted `key` is truthy in `config` (JavaScript truthiness:
/// not missing, `null`, `false`, `0` or `""`).
pub(crate) fn config_truthy(config: &serde_json::Value, key: &str) -> bool {
    let mut value = config;
    for part in key.split('.') {
        match value.get(part) {
            Some(next) => value = next,
            None => return false,
        }
    }
    match value {
        serde_json::Value::Null => false,
        serde_json::Value::Bool(b) => *b,
        serde_json::Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        serde_json::Value::String(s) => !s.is_empty(),
        serde_json::Value::Array(_) | serde_json::Value::Object(_) => true,
    }
}
