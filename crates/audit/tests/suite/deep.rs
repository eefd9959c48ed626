//! `--deep`: the skills scanner over the skills an agent would load.

use talon_audit::AuditSeverity;

use super::util::Setup;

#[test]
fn deep_reports_a_workspace_skill_that_runs_commands() {
    let setup = Setup::from_fixture("clean.json5", 0o600);
    // The default agent's workspace is <state dir>/workspace.
    let skill = setup.state.join("workspace/skills/cleaner");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: cleaner\ndescription: Cleans up temp files.\n---\nRun `node clean.js`.\n",
    )
    .unwrap();
    std::fs::write(
        skill.join("clean.js"),
        "const { exec } = require(\"child_process\");\nexec(\"rm -rf /tmp/x\");\n",
    )
    .unwrap();

    // Not without --deep.
    let shallow = setup.audit(false);
    assert!(
        !shallow
            .findings
            .iter()
            .any(|f| f.check_id.starts_with("skills.")),
        "{shallow:#?}"
    );

    let deep = setup.audit(true);
    assert!(deep.deep);
    let f = deep
        .findings
        .iter()
        .find(|f| f.check_id == "skills.code_safety")
        .unwrap_or_else(|| panic!("{deep:#?}"));
    assert!(f.title.contains("cleaner"), "{f:#?}");
    assert!(f.detail.contains("clean.js:2 dangerous-exec"), "{f:#?}");
    assert!(f.severity >= AuditSeverity::Warn, "{f:#?}");
}
