#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;

use super::*;

const NOW: u64 = 100 * DAY_MS;
const DEFAULTS: PruneSettings = PruneSettings {
    idle_hours: 24,
    max_age_days: 7,
};

fn verdict(settings: PruneSettings, created: Option<u64>, used: Option<u64>) -> PruneVerdict {
    prune_verdict(settings, created, used, false, NOW)
}

#[test]
fn idle_is_strictly_more_than_idle_hours() {
    let created = Some(NOW - DAY_MS * 2);
    assert_eq!(
        verdict(DEFAULTS, created, Some(NOW - 24 * HOUR_MS)),
        PruneVerdict::Keep,
        "exactly 24 h idle is not more than 24 h"
    );
    assert_eq!(
        verdict(DEFAULTS, created, Some(NOW - 24 * HOUR_MS - 1)),
        PruneVerdict::Prune(PruneReason::Idle)
    );
}

#[test]
fn age_is_strictly_more_than_max_age_days_and_wins_over_recent_use() {
    assert_eq!(
        verdict(DEFAULTS, Some(NOW - 7 * DAY_MS), Some(NOW)),
        PruneVerdict::Keep
    );
    assert_eq!(
        verdict(DEFAULTS, Some(NOW - 7 * DAY_MS - 1), Some(NOW)),
        PruneVerdict::Prune(PruneReason::MaxAge),
        "use does not extend a sandbox past its age limit"
    );
    assert_eq!(
        verdict(DEFAULTS, Some(NOW - 8 * DAY_MS), Some(NOW - 2 * DAY_MS)),
        PruneVerdict::Prune(PruneReason::MaxAge),
        "both apply: max-age is reported"
    );
}

#[test]
fn zero_turns_each_test_off_and_both_zero_turn_pruning_off() {
    let ancient = Some(0);
    let no_idle = PruneSettings {
        idle_hours: 0,
        max_age_days: 7,
    };
    assert_eq!(
        verdict(no_idle, Some(NOW - DAY_MS), ancient),
        PruneVerdict::Keep
    );
    let no_age = PruneSettings {
        idle_hours: 24,
        max_age_days: 0,
    };
    assert_eq!(verdict(no_age, ancient, Some(NOW)), PruneVerdict::Keep);
    let off = PruneSettings {
        idle_hours: 0,
        max_age_days: 0,
    };
    assert!(off.disabled());
    assert_eq!(verdict(off, ancient, ancient), PruneVerdict::Keep);
}

#[test]
fn unknown_times_are_kept_and_unknown_use_falls_back_to_creation() {
    assert_eq!(verdict(DEFAULTS, None, None), PruneVerdict::Keep);
    assert_eq!(
        verdict(DEFAULTS, Some(NOW - 2 * DAY_MS), None),
        PruneVerdict::Prune(PruneReason::Idle),
        "never used since creation two days ago"
    );
    assert_eq!(
        verdict(DEFAULTS, None, Some(NOW - 2 * DAY_MS)),
        PruneVerdict::Prune(PruneReason::Idle)
    );
    assert_eq!(
        verdict(DEFAULTS, Some(NOW + DAY_MS), Some(NOW + DAY_MS)),
        PruneVerdict::Keep,
        "times in the future (clock skew) are not idle"
    );
}

#[test]
fn a_busy_sandbox_is_never_pruned() {
    assert_eq!(
        prune_verdict(DEFAULTS, Some(0), Some(0), true, NOW),
        PruneVerdict::Busy(PruneReason::MaxAge)
    );
    assert_eq!(
        prune_verdict(DEFAULTS, Some(NOW - DAY_MS), Some(NOW), true, NOW),
        PruneVerdict::Keep,
        "busy and within limits is simply kept"
    );
}

#[test]
fn resolve_layers_agent_over_defaults_over_built_ins() {
    assert_eq!(PruneSettings::resolve(None, None), DEFAULTS);
    let defaults = PruneConfig {
        idle_hours: Some(2),
        max_age_days: None,
    };
    let agent = PruneConfig {
        idle_hours: None,
        max_age_days: Some(0),
    };
    assert_eq!(
        PruneSettings::resolve(Some(&defaults), Some(&agent)),
        PruneSettings {
            idle_hours: 2,
            max_age_days: 0
        }
    );
}

#[test]
fn file_form_refuses_negative_fractional_and_unknown_values() {
    for bad in [
        r#"{"idleHours": -1}"#,
        r#"{"maxAgeDays": 1.5}"#,
        r#"{"idleHours": "24"}"#,
        r#"{"idle": 3}"#,
    ] {
        assert!(
            serde_json::from_str::<PruneConfig>(bad).is_err(),
            "{bad} must be refused"
        );
    }
    let ok: PruneConfig = serde_json::from_str(r#"{"idleHours": 0, "maxAgeDays": 30}"#).unwrap();
    assert_eq!(ok.idle_hours, Some(0));
    assert_eq!(ok.max_age_days, Some(30));
}

#[test]
fn scope_keys_name_their_owner() {
    assert_eq!(scope_owner("shared"), ScopeOwner::Shared);
    assert_eq!(
        scope_owner("agent:Ops"),
        ScopeOwner::Agent("ops".to_owned())
    );
    assert_eq!(
        scope_owner("agent:ops:telegram:group:42"),
        ScopeOwner::Agent("ops".to_owned())
    );
    assert_eq!(scope_owner("main"), ScopeOwner::DefaultAgent);
    assert_eq!(scope_owner("agent:"), ScopeOwner::DefaultAgent);
}

fn owned(name: &str, created: Option<u64>, used: Option<u64>) -> OwnedSandbox {
    let mut s = OwnedSandbox::new("docker", name);
    s.created_at_ms = created;
    s.last_used_at_ms = used;
    s
}

#[test]
fn candidates_carry_reason_numbers_and_busy_flag_in_a_stable_order() {
    let list = vec![
        owned("c-fresh", Some(NOW - DAY_MS), Some(NOW)),
        owned("b-old", Some(NOW - 9 * DAY_MS), Some(NOW - HOUR_MS)),
        owned("a-idle", Some(NOW - 3 * DAY_MS), Some(NOW - 30 * HOUR_MS)),
        owned("d-busy", Some(NOW - 3 * DAY_MS), Some(NOW - 30 * HOUR_MS)),
    ];
    let got = prune_candidates(&list, |_| DEFAULTS, |s| s.name == "d-busy", NOW);
    let summary: Vec<(&str, PruneReason, u64, Option<u64>, bool)> = got
        .iter()
        .map(|c| {
            (
                c.sandbox.name.as_str(),
                c.reason,
                c.idle_hours,
                c.age_days,
                c.busy,
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("a-idle", PruneReason::Idle, 30, Some(3), false),
            ("b-old", PruneReason::MaxAge, 1, Some(9), false),
            ("d-busy", PruneReason::Idle, 30, Some(3), true),
        ]
    );
}
