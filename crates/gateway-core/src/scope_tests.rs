#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn scopes_are_ordered_and_parse() {
    assert!(Scope::Operator.covers(Scope::Agent));
    assert!(Scope::Agent.covers(Scope::ReadOnly));
    assert!(!Scope::ReadOnly.covers(Scope::Agent));
    assert!(!Scope::Agent.covers(Scope::Operator));
    for s in [Scope::ReadOnly, Scope::Agent, Scope::Operator] {
        assert_eq!(Scope::parse(s.as_str()), Some(s));
    }
    assert_eq!(Scope::parse("root"), None);
}

#[test]
fn least_privilege_table() {
    // Reading never needs more than read-only; side effects on the agent's
    // own session need agent; administering needs operator.
    let cases = [
        ("health", Scope::ReadOnly),
        ("config.get", Scope::ReadOnly),
        ("tools.list", Scope::ReadOnly),
        ("tools.invoke", Scope::Agent),
        ("sessions.create", Scope::Agent),
        ("approvals.list", Scope::ReadOnly),
        ("approvals.resolve", Scope::Operator),
        ("cron.list", Scope::ReadOnly),
        ("cron.add", Scope::Operator),
        ("tasks.cancel", Scope::Operator),
        ("sandbox.recreate", Scope::Operator),
        ("runner.subscribe", Scope::Agent),
    ];
    for (method, scope) in cases {
        assert_eq!(required_scope(method), Some(scope), "{method}");
    }
    assert_eq!(required_scope("tools.delete"), None);
    // No method is listed twice.
    let mut names: Vec<&str> = METHODS.iter().map(|(m, _)| *m).collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(before, names.len());
}
