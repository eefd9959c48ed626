//! Skills: manuals an agent reads on demand.
//!
//! A skill is a directory with a `SKILL.md` whose YAML frontmatter has a
//! `description` (and usually a `name`), as in the public Agent Skills
//! convention, so skills written for other agents load unchanged.
//!
//! - [`parse_skill_md`] reads the frontmatter with OpenClaw's rules (BOM and
//!   line endings, fences, scalar stringification, the line parser when the
//!   YAML is broken, the `openclaw` metadata block, install specs validated
//!   as a filter). It never fails; problems are warnings.
//! - [`load_skills`] / [`load_skills_with_config`] walk the six sources in
//!   precedence order (extra < bundled < managed < personal agents <
//!   project agents < workspace), enforce path containment per source (real
//!   symlinks), reject non-skills with a reason, check eligibility
//!   (binaries, env, config keys, OS) and record which skill shadows which.
//! - [`prompt::render_prompt`] renders the model-facing index (name,
//!   description, location, version — never the body) within the budgets,
//!   falling back to a compact format, then dropping the lowest-precedence
//!   skills with a note.
//! - [`watch`] keeps one debounced watcher per root (shared by every agent)
//!   and a snapshot cache keyed by root versions, the prompt format version
//!   and the agent's filter: nothing is stat'ed or read on the hot path.
//! - [`scanner`] is the security scanner (OpenClaw's rule ids and
//!   severities); a proposal with any critical finding fails as a whole.
//! - [`resolve_skill_command`] turns a `command-dispatch: tool` slash
//!   command into a tool call, resolved through the full policy pipeline.
//!
//! ```
//! let parsed = talon_skills::parse_skill_md(
//!     "---\nname: pdf\ndescription: Fill PDF forms.\n---\n# PDF\n",
//! );
//! assert_eq!(parsed.frontmatter.name.as_deref(), Some("pdf"));
//! assert_eq!(parsed.frontmatter.description.as_deref(), Some("Fill PDF forms."));
//! assert!(parsed.frontmatter.user_invocable);
//! assert!(parsed.warnings.is_empty());
//! ```
//!
//! This crate does not install skills, run them, or decide tool policy (it
//! asks `talon-tool-policy`); it has no async runtime.
//!
//! Known limits:
//! - The loader walks directories by path (each candidate canonicalised
//!   and checked against its root); a directory swapped for a symlink
//!   between the check and the listing is not caught. Directory-handle
//!   walking (`openat2(RESOLVE_BENEATH)`) belongs with the fs-bridge.
//! - The watcher follows symlinks with notify's recursive watch: a
//!   symlinked skill added to a personal or managed root after the watch
//!   started is noticed when it is added, but edits inside its target are
//!   only seen after the next restart; a root that is itself a symlink is
//!   watched at the target it had when the watch started.
//! - Any write under a root bumps its version, including ones in hidden
//!   directories the loader ignores (one extra rebuild, never a stale one).
//! - Within one source, the first skill of a name (by path order) wins and
//!   the others are reported as `duplicate-name`.
#![deny(missing_docs)]

pub use crate::config::{
    SkillEntryConfig, SkillsConfig, SkillsInstallConfig, SkillsLimitsConfig, SkillsLoadConfig,
    config_limits, config_removes,
};
pub use crate::configured::load_skills_with_config;
pub use crate::dispatch::{DispatchCall, DispatchError, resolve_skill_command};
pub use crate::frontmatter::parse_skill_md;
pub use crate::loader::{
    EligibilityContext, SkillLimits, SkillRoots, SkillSet, default_eligibility_context, load_skills,
};
pub use crate::types::{
    Eligibility, InstallKind, InstallSpec, ParsedSkillFile, Rejected, Shadowed, Skill,
    SkillFrontmatter, SkillManifest, SkillRequires, SkillSource,
};

mod config;
mod configured;
mod dispatch;
mod frontmatter;
mod loader;
pub mod prompt;
pub mod scanner;
mod types;
pub mod watch;
