//! `SKILL.md` frontmatter (being written: a stub that only splits the
//! fences and reads `key: value` lines).

use crate::types::{ParsedSkillFile, SkillFrontmatter};

/// Parse a `SKILL.md`. Never fails.
pub fn parse_skill_md(text: &str) -> ParsedSkillFile {
    let text = text.trim_start_matches('\u{feff}').replace("\r\n", "\n");
    let mut fm = SkillFrontmatter {
        user_invocable: true,
        ..SkillFrontmatter::default()
    };
    let Some(rest) = text.strip_prefix("---\n") else {
        return ParsedSkillFile {
            frontmatter: fm,
            body: text,
            warnings: Vec::new(),
        };
    };
    let (head, body) = rest.split_once("\n---").unwrap_or((rest, ""));
    for line in head.lines() {
        if let Some((k, v)) = line.split_once(':') {
            let v = v.trim().trim_matches('"').to_owned();
            fm.fields.insert(k.trim().to_owned(), v.clone());
            match k.trim() {
                "name" => fm.name = Some(v),
                "description" if !v.is_empty() => fm.description = Some(v),
                _ => {}
            }
        }
    }
    ParsedSkillFile {
        frontmatter: fm,
        body: body.trim_start_matches(['-', '\n']).to_owned(),
        warnings: Vec::new(),
    }
}
