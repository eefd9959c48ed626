//! Skills (work in progress).
#![deny(missing_docs)]

pub use crate::config::{
    SkillEntryConfig, SkillsConfig, SkillsInstallConfig, SkillsLimitsConfig, SkillsLoadConfig,
};
pub use crate::dispatch::{DispatchCall, DispatchError, resolve_skill_command};
pub use crate::frontmatter::parse_skill_md;
pub use crate::loader::{EligibilityContext, SkillLimits, SkillRoots, SkillSet, load_skills};
pub use crate::types::{
    Eligibility, InstallKind, InstallSpec, ParsedSkillFile, Rejected, Shadowed, Skill,
    SkillFrontmatter, SkillManifest, SkillRequires, SkillSource,
};

mod config;
mod dispatch;
mod frontmatter;
mod loader;
pub mod prompt;
pub mod scanner;
mod types;
pub mod watch;
