//! Tests of the prompt index: exact text, escaping, visibility, budgets.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

use super::*;
use crate::loader::{EligibilityContext, SkillRoots, load_skills};
use crate::types::{Eligibility, SkillFrontmatter, SkillSource};

fn skill(name: &str, description: &str, source: SkillSource) -> Skill {
    Skill {
        name: name.to_owned(),
        description: description.to_owned(),
        source,
        location: PathBuf::from(format!("/skills/{name}/SKILL.md")),
        version: "sha256:0123456789abcdef".to_owned(),
        frontmatter: SkillFrontmatter {
            user_invocable: true,
            ..SkillFrontmatter::default()
        },
        eligibility: Eligibility {
            eligible: true,
            reasons: Vec::new(),
        },
        shadows: Vec::new(),
        warnings: Vec::new(),
    }
}

fn limits(chars: usize) -> SkillLimits {
    SkillLimits {
        max_skills_prompt_chars: chars,
        ..SkillLimits::default()
    }
}

const INTRO: &str = "The following skills provide specialized instructions for specific tasks.";
const REREAD: &str =
    "If a skill's <version> differs from a previous turn, re-read its SKILL.md before using it.";
const RELATIVE: &str = "When a skill file references a relative path, resolve it against the skill directory (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.";

#[test]
fn format_version_is_two() {
    assert_eq!(PROMPT_FORMAT_VERSION, 2);
}

#[test]
fn golden_full_text_for_two_skills() {
    let skills = [
        skill("alpha", "Does alpha things", SkillSource::Workspace),
        skill("beta", "Does beta things", SkillSource::Bundled),
    ];
    let out = render_prompt(&skills, &SkillLimits::default());
    let expected = "\n\nThe following skills provide specialized instructions for specific tasks.
Use the read tool to load a skill's file when the task matches its description.
If a skill's <version> differs from a previous turn, re-read its SKILL.md before using it.
When a skill file references a relative path, resolve it against the skill directory (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.

<available_skills>
  <skill>
    <name>alpha</name>
    <description>Does alpha things</description>
    <location>/skills/alpha/SKILL.md</location>
    <version>sha256:0123456789abcdef</version>
  </skill>
  <skill>
    <name>beta</name>
    <description>Does beta things</description>
    <location>/skills/beta/SKILL.md</location>
    <version>sha256:0123456789abcdef</version>
  </skill>
</available_skills>";
    assert_eq!(
        out,
        RenderedPrompt {
            text: expected.to_owned(),
            chars: expected.chars().count(),
            budget: 18_000,
            included: 2,
            total: 2,
            format: PromptFormat::Full,
            dropped: 0,
        }
    );
}

#[test]
fn empty_list_renders_nothing() {
    let out = render_prompt(&[], &SkillLimits::default());
    assert_eq!(out.text, "");
    assert_eq!((out.chars, out.included, out.total), (0, 0, 0));
}

#[test]
fn xml_is_escaped_everywhere() {
    let mut s = skill("a&b<c>", "say \"hi\" & 'bye' <now>", SkillSource::Workspace);
    s.location = PathBuf::from("/x/<&>'\"/SKILL.md");
    s.version = "sha256:<&>".to_owned();
    let out = render_prompt(&[s], &SkillLimits::default());
    assert!(out.text.contains("    <name>a&amp;b&lt;c&gt;</name>\n"));
    assert!(out.text.contains(
        "    <description>say &quot;hi&quot; &amp; &apos;bye&apos; &lt;now&gt;</description>\n"
    ));
    assert!(
        out.text
            .contains("    <location>/x/&lt;&amp;&gt;&apos;&quot;/SKILL.md</location>\n")
    );
    assert!(
        out.text
            .contains("    <version>sha256:&lt;&amp;&gt;</version>\n")
    );
    assert_eq!(escape_xml("&<>\"'x"), "&amp;&lt;&gt;&quot;&apos;x");
}

#[test]
fn version_line_and_reread_instruction() {
    let out = render_prompt(
        &[skill("a", "d", SkillSource::Workspace)],
        &SkillLimits::default(),
    );
    assert!(
        out.text
            .contains("    <version>sha256:0123456789abcdef</version>\n")
    );
    assert!(out.text.contains(REREAD));
}

#[test]
fn hidden_and_ineligible_skills_are_left_out() {
    let mut hidden = skill("hidden", "d", SkillSource::Workspace);
    hidden.frontmatter.disable_model_invocation = true;
    let mut ineligible = skill("ineligible", "d", SkillSource::Workspace);
    ineligible.eligibility = Eligibility {
        eligible: false,
        reasons: vec!["missing binary: ffmpeg".to_owned()],
    };
    let shown = skill("shown", "d", SkillSource::Workspace);
    let out = render_prompt(&[hidden, ineligible, shown], &SkillLimits::default());
    assert!(!out.text.contains("hidden"));
    assert!(!out.text.contains("ineligible"));
    assert!(out.text.contains("<name>shown</name>"));
    assert_eq!((out.included, out.total, out.dropped), (1, 1, 0));
    assert_eq!(out.format, PromptFormat::Full);
}

#[test]
fn bodies_never_reach_the_prompt() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/skills/loader");
    let roots = SkillRoots {
        workspace: Some(fixture.join("workspace")),
        ..SkillRoots::default()
    };
    let set = load_skills(
        &roots,
        &SkillLimits::default(),
        &EligibilityContext::default(),
    );
    let out = render_prompt(&set.skills, &SkillLimits::default());
    assert_eq!(out.included, set.skills.len());
    assert!(out.text.contains("<name>zeta</name>"));
    assert!(!out.text.contains("must never reach the prompt"));
    let names: Vec<&str> = out
        .text
        .lines()
        .filter_map(|l| l.strip_prefix("    <name>"))
        .collect();
    assert_eq!(
        names,
        vec![
            "Alpha</name>",
            "alpha-tools</name>",
            "fallback-name</name>",
            "grouped</name>",
            "shared</name>",
            "zeta</name>"
        ]
    );
}

#[test]
fn count_limit_truncates_with_note_in_full_format() {
    let skills = [
        skill("a", "d", SkillSource::Workspace),
        skill("b", "d", SkillSource::Workspace),
        skill("c", "d", SkillSource::Workspace),
    ];
    let out = render_prompt(
        &skills,
        &SkillLimits {
            max_skills_in_prompt: 2,
            ..SkillLimits::default()
        },
    );
    assert!(out.text.starts_with(
        "⚠️ Skills truncated: included 2 of 3. Run `talon skills list` to audit.\n\n\n"
    ));
    assert_eq!(out.format, PromptFormat::Full);
    assert_eq!((out.included, out.total, out.dropped), (2, 3, 1));
    assert!(!out.text.contains("<name>c</name>"));
}

fn long_skills() -> Vec<Skill> {
    let long = "word   ".repeat(60) + "\n\tend";
    vec![
        skill("one", &long, SkillSource::Workspace),
        skill("two", &long, SkillSource::Managed),
        skill("three", &long, SkillSource::Extra),
    ]
}

#[test]
fn compact_when_over_budget_with_largest_description_cut() {
    let skills = long_skills();
    let full = render_prompt(&skills, &SkillLimits::default());
    let budget = full.chars - 1;
    let out = render_prompt(&skills, &limits(budget));
    assert_eq!(out.format, PromptFormat::Compact);
    assert!(out.chars <= budget);
    assert_eq!((out.included, out.total, out.dropped), (3, 3, 0));
    let mut lines = out.text.lines();
    assert_eq!(
        lines.next(),
        Some(
            "⚠️ Skills catalog using compact format (descriptions shortened). \
             Run `talon skills list` to audit."
        )
    );
    assert!(out.text.contains(&format!(
        "\n\n\n{INTRO}\nUse the read tool to load a skill's file when the task matches its name or description.\n{REREAD}\n{RELATIVE}\n\n<available_skills>\n"
    )));
    // Whitespace collapsed, cut with "...", and the cut is the largest
    // that fits (220 is the cap).
    let refs: Vec<&Skill> = skills.iter().collect();
    let best = (4..=220)
        .rev()
        .find(|&n| render(&refs, 3, Layout::Compact(n)).chars().count() <= budget)
        .unwrap();
    assert_eq!(out.text, render(&refs, 3, Layout::Compact(best)));
    assert_eq!(best, 220);
    let cut = shorten(&skills[0].description, 220);
    assert_eq!(cut.chars().count(), 220);
    assert!(cut.ends_with("wo..."), "{cut}");
    assert!(!cut.contains("  ") && !cut.contains('\n') && !cut.contains('\t'));
    assert!(
        out.text
            .contains(&format!("<description>{cut}</description>"))
    );
}

#[test]
fn compact_with_a_binary_searched_cut_below_the_cap() {
    let skills = long_skills();
    let refs: Vec<&Skill> = skills.iter().collect();
    let at_50 = render(&refs, 3, Layout::Compact(50)).chars().count();
    let out = render_prompt(&skills, &limits(at_50 + 5));
    assert_eq!(out.format, PromptFormat::Compact);
    // Each step of the cut adds one char per skill (3), so 51 fits, 52 not.
    assert_eq!(out.text, render(&refs, 3, Layout::Compact(51)));
}

#[test]
fn descriptions_omitted_when_even_four_chars_do_not_fit() {
    let skills = long_skills();
    let refs: Vec<&Skill> = skills.iter().collect();
    let bare = render(&refs, 3, Layout::Compact(0)).chars().count();
    let out = render_prompt(&skills, &limits(bare));
    assert_eq!(out.format, PromptFormat::CompactNoDescriptions);
    assert_eq!((out.included, out.dropped), (3, 0));
    assert!(!out.text.contains("<description>"));
    assert!(out.text.starts_with(
        "⚠️ Skills catalog using compact format (descriptions omitted). \
         Run `talon skills list` to audit.\n"
    ));
    assert!(
        out.text
            .contains("Use the read tool to load a skill's file when the task matches its name.\n")
    );
}

#[test]
fn dropping_removes_lowest_precedence_first_and_keeps_name_order() {
    let skills = [
        skill("a", "alpha description", SkillSource::Workspace),
        skill("b", "beta description", SkillSource::Extra),
        skill("c", "gamma description", SkillSource::Managed),
        skill("d", "delta description", SkillSource::Extra),
        skill("e", "epsilon description", SkillSource::Bundled),
    ];
    let refs: Vec<&Skill> = vec![&skills[0], &skills[2]];
    let budget = render(&refs, 5, Layout::Compact(0)).chars().count();
    let out = render_prompt(&skills, &limits(budget));
    let names: Vec<&str> = out
        .text
        .lines()
        .filter_map(|l| l.strip_prefix("    <name>"))
        .collect();
    assert_eq!(names, vec!["a</name>", "c</name>"]);
    assert_eq!(out.format, PromptFormat::CompactNoDescriptions);
    assert_eq!((out.included, out.total, out.dropped), (2, 5, 3));
    assert!(out.text.starts_with(
        "⚠️ Skills truncated: included 2 of 5 (compact format, descriptions omitted). \
         Run `talon skills list` to audit.\n"
    ));
    assert!(out.chars <= budget);

    // Room for one more skill (a block is about 130 characters): the next
    // one kept is `e` (bundled), never `b` or `d` (extra).
    let wider = budget + 200;
    let out = render_prompt(&skills, &limits(wider));
    let names: Vec<&str> = out
        .text
        .lines()
        .filter_map(|l| l.strip_prefix("    <name>"))
        .collect();
    assert_eq!(names, vec!["a</name>", "c</name>", "e</name>"]);
}

#[test]
fn nothing_fits_leaves_only_the_note() {
    let skills = long_skills();
    let out = render_prompt(&skills, &limits(200));
    assert_eq!(
        out.text,
        "⚠️ Skills truncated: included 0 of 3 (compact format, descriptions omitted). \
         Run `talon skills list` to audit."
    );
    assert_eq!((out.included, out.dropped), (0, 3));
    // A budget too small for even the note gives an empty index: the
    // budget is never exceeded.
    let out = render_prompt(&skills, &limits(50));
    assert_eq!(out.text, "");
    assert_eq!(out.chars, 0);
}

#[test]
fn the_count_cap_drops_lowest_precedence_first() {
    let mut skills = long_skills();
    for s in &mut skills {
        s.description = "short".into();
    }
    skills[0].source = SkillSource::Extra;
    skills[1].source = SkillSource::Workspace;
    skills[2].source = SkillSource::Workspace;
    let mut l = limits(18_000);
    l.max_skills_in_prompt = 2;
    let out = render_prompt(&skills, &l);
    assert_eq!(out.included, 2);
    assert!(
        !out.text
            .contains(&format!("<name>{}</name>", skills[0].name)),
        "{}",
        out.text
    );
}

#[test]
fn shorten_collapses_and_cuts() {
    assert_eq!(shorten("  a \n\t b  c ", 220), "a b c");
    assert_eq!(shorten("abcdefghij", 10), "abcdefghij");
    assert_eq!(shorten("abcdefghij", 9), "abcdef...");
    assert_eq!(shorten("abc  def ghi", 8), "abc d...");
    assert_eq!(shorten("abc def ghi", 7), "abc...");
    assert_eq!(shorten("abcdef", 3), "abc");
    assert_eq!(shorten("日本語のテキスト", 6), "日本語...");
}

#[test]
fn serializes_camel_case() {
    let out = render_prompt(&[], &limits(10));
    let json = serde_json::to_value(&out).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "text": "", "chars": 0, "budget": 10, "included": 0,
            "total": 0, "format": "full", "dropped": 0
        })
    );
    assert_eq!(
        serde_json::to_value(PromptFormat::CompactNoDescriptions).unwrap(),
        serde_json::json!("compactNoDescriptions")
    );
}
