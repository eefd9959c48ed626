//! A run's snapshot applies the `skills` config exactly as the CLI does.

use std::time::Duration;

use talon_skills::watch::{SkillsSnapshotter, WatchRegistry};
use talon_skills::{EligibilityContext, SkillLimits, SkillRoots, SkillsConfig};

#[test]
fn snapshots_apply_disabled_entries_and_limits() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws/skills");
    for name in ["keep", "noisy"] {
        std::fs::create_dir_all(ws.join(name)).unwrap();
        std::fs::write(
            ws.join(name).join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {name} skill\n---\n"),
        )
        .unwrap();
    }
    let roots = SkillRoots {
        workspace: Some(ws),
        ..SkillRoots::default()
    };
    let config: SkillsConfig = serde_json::from_value(serde_json::json!({
        "entries": {"noisy": {"enabled": false}},
        "limits": {"maxSkillsInPrompt": 7}
    }))
    .unwrap();
    let registry = WatchRegistry::new(Duration::from_millis(50));
    let eligibility = EligibilityContext {
        os: "linux".into(),
        ..EligibilityContext::default()
    };
    let snap = SkillsSnapshotter::new(&registry, roots, SkillLimits::default(), eligibility)
        .unwrap()
        .with_config(config);
    let set = snap.skills(2, None);
    let names: Vec<&str> = set.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["keep"]);
    assert_eq!(
        set.rejected
            .iter()
            .filter(|r| r.reason == "disabled")
            .count(),
        1
    );
}
