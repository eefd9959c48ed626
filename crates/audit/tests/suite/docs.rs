//! The README's check table lists every check id the audit can emit.

use talon_audit::CHECKS;

#[test]
fn the_readme_lists_every_check_id() {
    let readme = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"),
    )
    .unwrap();
    let section = readme
        .split("## Security audit")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("README has a Security audit section");
    for c in CHECKS {
        assert!(
            section.contains(&format!("`{}`", c.id)),
            "README's Security audit section does not list {}",
            c.id
        );
    }
}
