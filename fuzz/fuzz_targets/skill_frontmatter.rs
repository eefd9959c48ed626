//! `SKILL.md` frontmatter from untrusted skill directories.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = talon_skills::parse_skill_md(text);
});
