use super::*;

#[test]
fn check_ids_are_unique_and_well_formed() {
    let mut ids: Vec<&str> = CHECKS.iter().map(|c| c.id).collect();
    ids.sort_unstable();
    let before = ids.len();
    ids.dedup();
    assert_eq!(before, ids.len(), "a check id is listed twice");
    for c in CHECKS {
        assert!(
            c.id.chars()
                .all(|ch| ch.is_ascii_lowercase() || ch == '.' || ch == '_'),
            "{}",
            c.id
        );
        assert!(
            c.severity
                .split('/')
                .all(|s| matches!(s, "info" | "warn" | "critical")),
            "{}: {}",
            c.id,
            c.severity
        );
    }
}
