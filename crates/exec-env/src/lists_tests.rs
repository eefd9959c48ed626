use std::collections::HashSet;

use pretty_assertions::assert_eq;

use super::*;
use crate::EnvKeyVerdict;
use crate::classify::classify_with;
use crate::inherited::filter_inherited_with;

fn set(list: &[String]) -> HashSet<String> {
    list.iter().cloned().collect()
}

#[test]
fn embedded_policy_parses_with_the_file_counts() {
    let file = parse_policy_file(POLICY_JSON);
    assert!(file.is_ok(), "embedded policy must parse: {file:?}");
    let Ok(file) = file else { return };
    assert_eq!(file.raw.blocked_everywhere_keys.len(), 108);
    assert_eq!(file.raw.blocked_override_only_keys.len(), 156);
    assert_eq!(file.raw.allowed_inherited_override_only_keys.len(), 42);
    assert_eq!(
        file.raw.blocked_override_prefixes,
        ["GIT_CONFIG_", "NPM_CONFIG_", "CARGO_REGISTRIES_", "TF_VAR_"]
    );
    assert_eq!(file.raw.blocked_prefixes, ["DYLD_", "LD_", "BASH_FUNC_"]);
    assert_eq!(file.derived.blocked_inherited_keys.len(), 207);

    let policy = current();
    assert!(
        policy.is_some(),
        "the lazily loaded policy must be available"
    );
    let Some(policy) = policy else { return };
    assert_eq!(policy.everywhere_keys.len(), 108);
    assert_eq!(policy.override_only_keys.len(), 156);
    assert_eq!(policy.inherited_blocked_keys.len(), 207);
}

#[test]
fn our_derivation_matches_openclaws_derived_sets() {
    let Ok(file) = parse_policy_file(POLICY_JSON) else {
        panic!("embedded policy must parse");
    };
    let policy = Policy::from_raw(&file.raw);
    assert_eq!(policy.everywhere_keys, set(&file.derived.blocked_keys));
    assert_eq!(
        policy.override_only_keys,
        set(&file.derived.blocked_override_keys)
    );
    assert_eq!(
        policy.inherited_blocked_keys,
        set(&file.derived.blocked_inherited_keys)
    );
    assert_eq!(
        set(&policy.inherited_blocked_prefixes),
        set(&file.derived.blocked_inherited_prefixes)
    );
}

#[test]
fn a_derived_set_that_disagrees_is_rejected() {
    let tampered = POLICY_JSON.replacen("\"NODE_OPTIONS\",", "", 1);
    assert_ne!(tampered, POLICY_JSON);
    assert!(load_policy(POLICY_JSON).is_ok());
    assert!(matches!(
        load_policy(&tampered),
        Err(ListsError::Disagrees("blockedKeys"))
    ));
}

#[test]
fn a_broken_policy_fails_closed() {
    assert!(matches!(
        load_policy("{\"raw\": {}}"),
        Err(ListsError::Parse(_))
    ));
    assert!(matches!(load_policy("not json"), Err(ListsError::Parse(_))));
    // Without a policy every valid key is blocked and nothing is inherited.
    assert_eq!(classify_with(None, "FOO"), EnvKeyVerdict::BlockedEverywhere);
    assert_eq!(
        classify_with(None, "LANG"),
        EnvKeyVerdict::BlockedEverywhere
    );
    assert_eq!(classify_with(None, "1BAD"), EnvKeyVerdict::Invalid);
    let inherited = filter_inherited_with(
        None,
        [
            ("LANG".to_owned(), "C".to_owned()),
            ("TERM".to_owned(), "xterm".to_owned()),
        ],
    );
    assert!(inherited.is_empty());
}
