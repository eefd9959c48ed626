use super::*;

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

fn pol(
    allow: Option<&[&str]>,
    also: Option<&[&str]>,
    deny: Option<&[&str]>,
) -> Option<CompiledPolicy> {
    let a = allow.map(s);
    let b = also.map(s);
    let d = deny.map(s);
    CompiledPolicy::from_lists(
        a.as_deref(),
        b.as_deref(),
        d.as_deref(),
        PolicyKeys::under("tools"),
    )
}

#[test]
fn no_lists_no_policy() {
    assert!(pol(None, None, None).is_none());
}

#[test]
fn deny_wins_over_allow() {
    let p = pol(Some(&["exec", "read"]), None, Some(&["exec"])).unwrap();
    assert_eq!(
        p.decide(&ToolEntry::core("exec")),
        Verdict::Denied { entry: "exec" }
    );
    assert_eq!(p.decide(&ToolEntry::core("read")), Verdict::Allow);
    assert_eq!(p.decide(&ToolEntry::core("write")), Verdict::NotAllowed);
}

#[test]
fn empty_allow_allows_nothing() {
    let p = pol(Some(&[]), None, Some(&["exec"])).unwrap();
    assert_eq!(p.decide(&ToolEntry::core("browser")), Verdict::NotAllowed);
    assert!(matches!(
        p.decide(&ToolEntry::core("exec")),
        Verdict::Denied { .. }
    ));
    // With alsoAllow it allows exactly those (OpenClaw: `*` plus them).
    let p = pol(Some(&[""]), Some(&["read"]), None).unwrap();
    assert_eq!(p.decide(&ToolEntry::core("read")), Verdict::Allow);
    assert_eq!(p.decide(&ToolEntry::core("browser")), Verdict::NotAllowed);
}

#[test]
fn also_allow_without_allow_is_allow_all_plus() {
    let p = pol(None, Some(&["honcho"]), None).unwrap();
    assert_eq!(p.decide(&ToolEntry::core("browser")), Verdict::Allow);
    let p = pol(Some(&["read"]), Some(&["exec"]), None).unwrap();
    assert_eq!(p.decide(&ToolEntry::core("exec")), Verdict::Allow);
    assert_eq!(p.decide(&ToolEntry::core("write")), Verdict::NotAllowed);
}

#[test]
fn apply_patch_rides_on_write() {
    let p = pol(Some(&["write"]), None, None).unwrap();
    assert_eq!(p.decide(&ToolEntry::core("apply_patch")), Verdict::Allow);
    // v7.2: denying write no longer denies apply_patch.
    let p = pol(None, None, Some(&["write"])).unwrap();
    assert_eq!(p.decide(&ToolEntry::core("apply_patch")), Verdict::Allow);
    let mut p = pol(Some(&["write"]), None, None).unwrap();
    p.apply_patch_via_write = false;
    assert_eq!(
        p.decide(&ToolEntry::core("apply_patch")),
        Verdict::NotAllowed
    );
}

#[test]
fn rule_texts() {
    let p = pol(Some(&["read"]), None, Some(&["group:runtime"])).unwrap();
    let v = p.decide(&ToolEntry::core("exec"));
    assert_eq!(p.rule_text(&v), "deny group:runtime");
    assert_eq!(p.key_for(&v), "tools.deny");
    let v = p.decide(&ToolEntry::core("write"));
    assert_eq!(p.rule_text(&v), "not in allow list [read]");
    assert_eq!(p.key_for(&v), "tools.allow");
}
