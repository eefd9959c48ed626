//! The model-facing skills index.
//!
//! [`render_prompt`] lists the eligible skills that allow model invocation
//! — name, description, location and version, never the body — in
//! OpenClaw's format (`formatSkillsForPrompt` / `formatSkillsCompact`),
//! with the instruction to re-read a skill whose `<version>` changed.
//!
//! Budgets (`skills.limits.*`): the first `max_skills_in_prompt` skills are
//! taken; if the full render is longer than `max_skills_prompt_chars`
//! characters, the compact format is used. If even the compact format
//! without descriptions does not fit, skills are dropped **lowest
//! precedence first** (all `openclaw-extra` skills before any
//! `openclaw-bundled` one, …; within one source from the end of the name
//! order), keeping name order among the rest, with the largest set that
//! fits found by binary search. OpenClaw instead drops from the end of the
//! name-sorted list; the issue asks for lowest precedence first. Then the
//! longest description cut (4–220 characters, binary search) that still
//! fits is used, or descriptions are omitted. A note saying what happened
//! is put before the index.
//!
//! Lengths are counted in Unicode scalar values (`char`s); OpenClaw counts
//! UTF-16 code units. Locations are printed as given (OpenClaw shortens the
//! home directory to `~`, which would need process state).

use serde::Serialize;

use crate::loader::SkillLimits;
use crate::types::Skill;

/// The prompt format version (OpenClaw's
/// `WORKSPACE_SKILLS_PROMPT_FORMAT_VERSION`).
pub const PROMPT_FORMAT_VERSION: u32 = 2;

/// Longest compact description.
const COMPACT_DESCRIPTION_MAX_CHARS: usize = 220;
/// Shortest compact description worth showing.
const COMPACT_DESCRIPTION_MIN_CHARS: usize = 4;

/// Which format the index ended up in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum PromptFormat {
    /// Every description in full.
    Full,
    /// Descriptions whitespace-collapsed and shortened.
    Compact,
    /// Names and locations only.
    CompactNoDescriptions,
}

/// The rendered index and what went into it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RenderedPrompt {
    /// The text (empty when no skill is listed and nothing was dropped).
    pub text: String,
    /// Its length in characters.
    pub chars: usize,
    /// The character budget (`max_skills_prompt_chars`).
    pub budget: usize,
    /// Skills listed.
    pub included: usize,
    /// Skills that could be listed (eligible, model invocation allowed).
    pub total: usize,
    /// The format used.
    pub format: PromptFormat,
    /// Skills left out for the budgets (`total - included`).
    pub dropped: usize,
}

/// The format with its description cut (0 = omitted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    Full,
    Compact(usize),
}

/// Render the index of `skills` (in the given order, normally the
/// loader's name order) within `limits`.
pub fn render_prompt(skills: &[Skill], limits: &SkillLimits) -> RenderedPrompt {
    let visible: Vec<&Skill> = skills
        .iter()
        .filter(|s| s.eligibility.eligible && !s.frontmatter.disable_model_invocation)
        .collect();
    let total = visible.len();
    let budget = limits.max_skills_prompt_chars;
    // The count cap drops lowest precedence first too (name order kept).
    let by_count: Vec<&Skill> = if visible.len() > limits.max_skills_in_prompt {
        let excess = visible.len() - limits.max_skills_in_prompt;
        drop_lowest(&visible, excess)
    } else {
        visible.clone()
    };
    let fits =
        |list: &[&Skill], layout: Layout| render(list, total, layout).chars().count() <= budget;

    let (list, layout) = if fits(&by_count, Layout::Full) {
        (by_count, Layout::Full)
    } else {
        let list = if fits(&by_count, Layout::Compact(0)) {
            by_count
        } else {
            drop_to_fit(&by_count, |l| fits(l, Layout::Compact(0)))
        };
        let mut cut = 0;
        if !list.is_empty() && fits(&list, Layout::Compact(COMPACT_DESCRIPTION_MIN_CHARS)) {
            let (mut lo, mut hi) = (COMPACT_DESCRIPTION_MIN_CHARS, COMPACT_DESCRIPTION_MAX_CHARS);
            while lo < hi {
                let mid = lo + (hi - lo).div_ceil(2);
                if fits(&list, Layout::Compact(mid)) {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            cut = lo;
        }
        (list, Layout::Compact(cut))
    };
    let mut text = render(&list, total, layout);
    if text.chars().count() > budget {
        // Not even the note fits: an empty index never exceeds the budget.
        text = String::new();
    }
    RenderedPrompt {
        chars: text.chars().count(),
        text,
        budget,
        included: list.len(),
        total,
        format: match layout {
            Layout::Full => PromptFormat::Full,
            Layout::Compact(0) => PromptFormat::CompactNoDescriptions,
            Layout::Compact(_) => PromptFormat::Compact,
        },
        dropped: total - list.len(),
    }
}

/// The largest subset of `list` that `fits`, dropping lowest precedence
/// first (within a source, from the end of `list`'s order), order kept.
fn drop_to_fit<'a>(list: &[&'a Skill], fits: impl Fn(&[&'a Skill]) -> bool) -> Vec<&'a Skill> {
    // Smallest k that fits; k = len (nothing listed) is the floor.
    let (mut lo, mut hi) = (0, list.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if fits(&drop_lowest(list, mid)) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    drop_lowest(list, lo)
}

/// `list` without its `k` lowest-precedence skills (within a source, the
/// last in `list`'s order go first); order kept.
fn drop_lowest<'a>(list: &[&'a Skill], k: usize) -> Vec<&'a Skill> {
    let mut drop_order: Vec<usize> = (0..list.len()).collect();
    drop_order.sort_by(|&a, &b| list[a].source.cmp(&list[b].source).then(b.cmp(&a)));
    let mut dropped = vec![false; list.len()];
    for &i in drop_order.iter().take(k) {
        dropped[i] = true;
    }
    list.iter()
        .zip(dropped)
        .filter(|(_, d)| !d)
        .map(|(s, _)| *s)
        .collect()
}

/// The note, then the catalog, joined by a newline (either may be empty).
fn render(list: &[&Skill], total: usize, layout: Layout) -> String {
    let note = limit_note(list.len() < total, layout, list.len(), total);
    let catalog = catalog(list, layout);
    [note, catalog]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// OpenClaw's budget note, with Talon's audit command.
fn limit_note(truncated: bool, layout: Layout, included: usize, total: usize) -> String {
    let detail = match layout {
        Layout::Full => None,
        Layout::Compact(0) => Some("descriptions omitted"),
        Layout::Compact(_) => Some("descriptions shortened"),
    };
    if truncated {
        let compact = detail
            .map(|d| format!(" (compact format, {d})"))
            .unwrap_or_default();
        format!(
            "⚠️ Skills truncated: included {included} of {total}{compact}. \
             Run `talon skills list` to audit."
        )
    } else if let Some(d) = detail {
        format!("⚠️ Skills catalog using compact format ({d}). Run `talon skills list` to audit.")
    } else {
        String::new()
    }
}

/// The `<available_skills>` block with its intro ("" for no skills).
fn catalog(list: &[&Skill], layout: Layout) -> String {
    if list.is_empty() {
        return String::new();
    }
    let use_line = match layout {
        Layout::Full => {
            "Use the read tool to load a skill's file when the task matches its description."
        }
        Layout::Compact(0) => {
            "Use the read tool to load a skill's file when the task matches its name."
        }
        Layout::Compact(_) => {
            "Use the read tool to load a skill's file when the task matches its name or description."
        }
    };
    let mut lines = vec![
        "\n\nThe following skills provide specialized instructions for specific tasks.".to_owned(),
        use_line.to_owned(),
        "If a skill's <version> differs from a previous turn, re-read its SKILL.md before using it."
            .to_owned(),
        "When a skill file references a relative path, resolve it against the skill directory \
         (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands."
            .to_owned(),
        String::new(),
        "<available_skills>".to_owned(),
    ];
    for skill in list {
        lines.push("  <skill>".to_owned());
        lines.push(format!("    <name>{}</name>", escape_xml(&skill.name)));
        let description = match layout {
            Layout::Full => Some(skill.description.clone()),
            Layout::Compact(0) => None,
            Layout::Compact(max) => Some(shorten(&skill.description, max)),
        };
        if let Some(d) = description.filter(|d| layout == Layout::Full || !d.is_empty()) {
            lines.push(format!("    <description>{}</description>", escape_xml(&d)));
        }
        lines.push(format!(
            "    <location>{}</location>",
            escape_xml(&skill.location.to_string_lossy())
        ));
        if !skill.version.is_empty() {
            lines.push(format!(
                "    <version>{}</version>",
                escape_xml(&skill.version)
            ));
        }
        lines.push("  </skill>".to_owned());
    }
    lines.push("</available_skills>".to_owned());
    lines.join("\n")
}

/// Collapse whitespace and cut to `max` characters, ending in `...`.
pub(crate) fn shorten(description: &str, max: usize) -> String {
    let normalized = description.split_whitespace().collect::<Vec<_>>().join(" ");
    if normalized.chars().count() <= max {
        return normalized;
    }
    if max <= 3 {
        return normalized.chars().take(max).collect();
    }
    let head: String = normalized.chars().take(max - 3).collect();
    format!("{}...", head.trim_end())
}

/// Escape `& < > " '` for XML.
pub(crate) fn escape_xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
#[path = "prompt_tests.rs"]
mod tests;
