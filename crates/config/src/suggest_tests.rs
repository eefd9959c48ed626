use pretty_assertions::assert_eq;

use super::*;

#[test]
fn distances() {
    assert_eq!(osa_distance("alow", "allow"), 1);
    assert_eq!(osa_distance("dney", "deny"), 1);
    assert_eq!(osa_distance("", "abc"), 3);
    assert_eq!(osa_distance("kitten", "sitting"), 3);
}

#[test]
fn suggestions() {
    let keys = ["allow", "alsoAllow", "deny", "profile", "byProvider"];
    assert_eq!(did_you_mean("alow", &keys), Some("allow"));
    assert_eq!(did_you_mean("dney", &keys), Some("deny"));
    assert_eq!(did_you_mean("also_allow", &keys), Some("alsoAllow"));
    assert_eq!(did_you_mean("AlsoAllow", &keys), Some("alsoAllow"));
    assert_eq!(did_you_mean("alsoAlow", &keys), Some("alsoAllow"));
    assert_eq!(did_you_mean("by_provider", &keys), Some("byProvider"));
    assert_eq!(did_you_mean("channels", &keys), None);
    assert_eq!(did_you_mean("x", &keys), None);
    assert_eq!(did_you_mean(&"a".repeat(10_000), &keys), None);
}
