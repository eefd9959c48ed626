#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::scope::Scope;

fn owners(list: &[&str]) -> OwnerList {
    let mut o = OwnerList::default();
    for s in list {
        if *s == "*" {
            o.wildcard = true;
        } else {
            o.senders.push(s.to_lowercase());
        }
    }
    o
}

fn params(sender: Option<&str>, claim: Option<bool>) -> SessionParams {
    SessionParams {
        sender: sender.map(str::to_owned),
        sender_is_owner: claim,
        ..SessionParams::default()
    }
}

#[test]
fn owner_tokens_are_the_owner_unless_they_say_otherwise() {
    let list = owners(&[]);
    for scope in [Scope::Owner, Scope::Operator] {
        let me = Identity::new("me", scope);
        assert!(resolve_sender_is_owner(&me, &params(None, None), &list).unwrap());
        assert!(!resolve_sender_is_owner(&me, &params(None, Some(false)), &list).unwrap());
        assert!(may_use_owner_tools(&me, &params(None, Some(false)), &list));
    }
}

#[test]
fn a_runner_is_the_owner_only_for_a_listed_sender() {
    let list = owners(&["Telegram:42"]);
    let runner = Identity::new("bot", Scope::Runner);
    assert!(resolve_sender_is_owner(&runner, &params(Some(" telegram:42 "), None), &list).unwrap());
    assert!(
        resolve_sender_is_owner(&runner, &params(Some("telegram:42"), Some(true)), &list).unwrap()
    );
    assert!(
        !resolve_sender_is_owner(&runner, &params(Some("telegram:42"), Some(false)), &list)
            .unwrap()
    );
    assert!(!resolve_sender_is_owner(&runner, &params(Some("telegram:7"), None), &list).unwrap());
    assert!(!resolve_sender_is_owner(&runner, &params(None, None), &list).unwrap());
    let err = resolve_sender_is_owner(&runner, &params(Some("telegram:7"), Some(true)), &list)
        .unwrap_err();
    assert_eq!(err.code, FORBIDDEN);
    assert!(
        err.message.contains("token `bot` has the runner scope"),
        "{}",
        err.message
    );
    assert!(
        err.message
            .contains("`telegram:7` is not in the owner list"),
        "{}",
        err.message
    );
    let data = err.data.unwrap();
    assert_eq!(data["errorCode"], "session.owner_claim_refused");
    assert!(may_use_owner_tools(
        &runner,
        &params(Some("TELEGRAM:42"), None),
        &list
    ));
    assert!(!may_use_owner_tools(
        &runner,
        &params(Some("telegram:7"), None),
        &list
    ));
    assert!(!may_use_owner_tools(&runner, &params(None, None), &list));
}

#[test]
fn a_wildcard_lists_every_named_sender_but_not_a_missing_one() {
    let list = owners(&["*"]);
    let runner = Identity::new("bot", Scope::Runner);
    assert!(resolve_sender_is_owner(&runner, &params(Some("anyone"), None), &list).unwrap());
    assert!(!resolve_sender_is_owner(&runner, &params(None, None), &list).unwrap());
}

#[test]
fn the_requester_carries_the_token_identity_and_scope() {
    let runner = Identity::new("bot", Scope::Runner);
    let mut p = params(Some("u1"), Some(false));
    p.channel = Some("telegram".into());
    p.role_ids = Some(vec!["mods".into(), "123".into()]);
    let r = requester(&runner, &p);
    assert_eq!(r.role_ids, Some(vec!["mods".to_owned(), "123".to_owned()]));
    assert_eq!(r.account_id.as_deref(), Some("bot"));
    assert_eq!(r.scope.as_deref(), Some("runner"));
    assert_eq!(r.channel.as_deref(), Some("telegram"));
    assert_eq!(r.sender_id.as_deref(), Some("u1"));
    assert_eq!(r.sender_is_owner, Some(false));
    assert_eq!(
        requester(&runner, &params(None, None)).channel.as_deref(),
        Some("gateway")
    );
}
