//! The vocabulary shared by the modules: sources, parsed frontmatter,
//! loaded skills.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

/// Where a skill was found. The order of the variants is the precedence
/// order: a later source replaces an earlier skill of the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum SkillSource {
    /// Configured extra directories (`skills.load.extraDirs`).
    #[serde(rename = "openclaw-extra")]
    Extra,
    /// Skills shipped with Talon.
    #[serde(rename = "openclaw-bundled")]
    Bundled,
    /// The state dir's `skills/` (installed by the operator).
    #[serde(rename = "openclaw-managed")]
    Managed,
    /// `~/.agents/skills`.
    #[serde(rename = "agents-skills-personal")]
    AgentsPersonal,
    /// `<workspace>/.agents/skills`.
    #[serde(rename = "agents-skills-project")]
    AgentsProject,
    /// `<workspace>/skills`.
    #[serde(rename = "openclaw-workspace")]
    Workspace,
}

impl SkillSource {
    /// Every source, lowest precedence first.
    pub const ALL: [SkillSource; 6] = [
        SkillSource::Extra,
        SkillSource::Bundled,
        SkillSource::Managed,
        SkillSource::AgentsPersonal,
        SkillSource::AgentsProject,
        SkillSource::Workspace,
    ];

    /// OpenClaw's label for the source.
    pub fn label(self) -> &'static str {
        match self {
            SkillSource::Extra => "openclaw-extra",
            SkillSource::Bundled => "openclaw-bundled",
            SkillSource::Managed => "openclaw-managed",
            SkillSource::AgentsPersonal => "agents-skills-personal",
            SkillSource::AgentsProject => "agents-skills-project",
            SkillSource::Workspace => "openclaw-workspace",
        }
    }

    /// Whether skills of this source may be symlinks that point outside
    /// the source's root (the operator's own directories may; directories
    /// a project or an agent can write may not).
    pub fn may_follow_symlinks_out(self) -> bool {
        matches!(self, SkillSource::Managed | SkillSource::AgentsPersonal)
    }
}

/// The kind of an install spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InstallKind {
    /// A Homebrew formula or cask.
    Brew,
    /// An npm package.
    Node,
    /// A Go module.
    Go,
    /// A Python package installed with uv.
    Uv,
    /// A file downloaded over http(s).
    Download,
}

/// One validated install spec (invalid ones are dropped while parsing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InstallSpec {
    /// The kind.
    pub kind: InstallKind,
    /// The validated target: formula, npm spec, module, package or URL.
    pub target: String,
    /// Optional id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Optional label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Binaries the install provides.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bins: Vec<String>,
    /// Operating systems the spec applies to.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub os: Vec<String>,
}

/// What a skill needs to be eligible.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillRequires {
    /// Every one of these binaries must be on `PATH`.
    pub bins: Vec<String>,
    /// At least one of these binaries must be on `PATH`.
    pub any_bins: Vec<String>,
    /// Every one of these environment variables must be set (non-empty).
    pub env: Vec<String>,
    /// Every one of these config keys (dotted paths) must be truthy.
    pub config: Vec<String>,
}

/// The `openclaw` (or legacy `clawdbot`) metadata block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillManifest {
    /// Always include the skill (skips the requirement checks).
    pub always: bool,
    /// An emoji for UIs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emoji: Option<String>,
    /// A homepage URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub homepage: Option<String>,
    /// The key under `skills.entries` that configures this skill.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skill_key: Option<String>,
    /// The environment variable holding the skill's main credential.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub primary_env: Option<String>,
    /// Operating systems the skill supports (`darwin`, `linux`, `win32`);
    /// empty means any.
    pub os: Vec<String>,
    /// Requirements.
    pub requires: SkillRequires,
    /// Validated install specs.
    pub install: Vec<InstallSpec>,
}

/// A skill's frontmatter, interpreted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillFrontmatter {
    /// `name` (trimmed), if present.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `description` (trimmed), if present and non-empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `user-invocable` (default true): a person may run it as a slash
    /// command.
    pub user_invocable: bool,
    /// `disable-model-invocation` (default false): when true the skill is
    /// left out of the model's index.
    pub disable_model_invocation: bool,
    /// `command-dispatch` (e.g. `tool`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command_dispatch: Option<String>,
    /// `command-tool`: the tool a `command-dispatch: tool` skill calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command_tool: Option<String>,
    /// `command-arg-mode` (e.g. `raw`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command_arg_mode: Option<String>,
    /// The metadata block, when present.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manifest: Option<SkillManifest>,
    /// Every frontmatter key with its stringified value (OpenClaw's
    /// stringification rules).
    pub fields: BTreeMap<String, String>,
}

/// The result of parsing one `SKILL.md`. Parsing never fails: problems are
/// warnings, and a missing description is reported by the loader.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedSkillFile {
    /// The frontmatter.
    pub frontmatter: SkillFrontmatter,
    /// The text after the frontmatter.
    pub body: String,
    /// Problems found (bad YAML recovered by the line parser, dropped
    /// install specs, names that break the Agent Skills rules, …).
    pub warnings: Vec<String>,
}

/// Whether a loaded skill can be used in this environment, and why not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Eligibility {
    /// Whether every requirement is met.
    pub eligible: bool,
    /// Why not (missing binary, env var, config key, wrong OS).
    pub reasons: Vec<String>,
}

/// Which skill a loaded skill replaced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Shadowed {
    /// The replaced skill's source.
    pub source: SkillSource,
    /// Its `SKILL.md`.
    pub location: PathBuf,
}

/// One loaded skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Skill {
    /// The name (frontmatter `name`, else the directory name).
    pub name: String,
    /// The description.
    pub description: String,
    /// Where it came from.
    pub source: SkillSource,
    /// Its `SKILL.md`.
    pub location: PathBuf,
    /// `sha256:` + the first 16 hex digits of the SHA-256 of `SKILL.md`.
    pub version: String,
    /// The frontmatter.
    pub frontmatter: SkillFrontmatter,
    /// Whether it can be used here.
    pub eligibility: Eligibility,
    /// The skills of the same name it replaced, lowest precedence first.
    pub shadows: Vec<Shadowed>,
    /// Warnings from parsing and loading.
    pub warnings: Vec<String>,
}

impl Skill {
    /// The stable JSON summary of a skill that `talon skills list --json`
    /// and the gateway's `skills.list` both print: name, description,
    /// source label, location, version, eligibility and reasons, the
    /// invocation flags, command dispatch, shadowed skills and warnings.
    pub fn summary_json(&self) -> serde_json::Value {
        serde_json::json!({
            "name": self.name,
            "description": self.description,
            "source": self.source.label(),
            "location": self.location,
            "version": self.version,
            "eligible": self.eligibility.eligible,
            "reasons": self.eligibility.reasons,
            "userInvocable": self.frontmatter.user_invocable,
            "disableModelInvocation": self.frontmatter.disable_model_invocation,
            "commandDispatch": self.frontmatter.command_dispatch,
            "shadows": self.shadows.iter().map(|sh| serde_json::json!({"source": sh.source.label(), "location": sh.location})).collect::<Vec<_>>(),
            "warnings": self.warnings,
        })
    }
}

/// A directory that looked like a skill but is not one, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rejected {
    /// The source being scanned.
    pub source: SkillSource,
    /// The directory (or `SKILL.md`).
    pub location: PathBuf,
    /// A stable reason code (`missing-description`, `symlink-escape`,
    /// `bundled-symlink-escape`, `path-escape`, `too-large`, `unreadable`,
    /// `limit`, …).
    pub reason: String,
    /// A sentence for the operator.
    pub message: String,
}
