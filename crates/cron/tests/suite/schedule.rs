use pretty_assertions::assert_eq;
use talon_cron::*;

fn ms(s: &str) -> i64 {
    parse_absolute_time_ms(s).unwrap()
}

fn upcoming(expr: &str, tz: &str, from: &str, n: usize) -> Vec<String> {
    CronExpr::parse(expr, Some(tz), "schedule")
        .unwrap()
        .upcoming(ms(from), n)
        .unwrap()
        .into_iter()
        .map(format_utc)
        .collect()
}

#[test]
fn dst_gap_and_repeat_new_york() {
    // 2026-03-08: 02:00 EST jumps to 03:00 EDT; 02:30 does not exist. It
    // fires once, at the first instant after the gap (03:00 EDT).
    assert_eq!(
        upcoming("30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z", 3),
        [
            "2026-03-08T07:00:00Z",
            "2026-03-09T06:30:00Z",
            "2026-03-10T06:30:00Z"
        ]
    );
    // 2026-11-01: 01:30 happens twice (EDT, then EST); it fires once, on
    // the first occurrence.
    assert_eq!(
        upcoming("30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", 3),
        [
            "2026-11-01T05:30:00Z",
            "2026-11-02T06:30:00Z",
            "2026-11-03T06:30:00Z"
        ]
    );
}

#[test]
fn dst_gap_and_repeat_berlin() {
    // 2026-03-29: 02:00 CET jumps to 03:00 CEST.
    assert_eq!(
        upcoming("30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", 2),
        ["2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"]
    );
    // Six-field form, same result.
    assert_eq!(
        upcoming("0 30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", 1),
        ["2026-03-29T01:00:00Z"]
    );
    // 2026-10-25: 02:30 happens twice; a daily job fires once.
    assert_eq!(
        upcoming("30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", 2),
        ["2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"]
    );
    // An interval expression keeps firing every 30 real minutes through
    // the repeated hour (both halves), never twice at one instant.
    let v = upcoming("*/30 * * * *", "Europe/Berlin", "2026-10-25T00:00:00Z", 4);
    assert_eq!(
        v,
        [
            "2026-10-25T00:30:00Z",
            "2026-10-25T01:00:00Z",
            "2026-10-25T01:30:00Z",
            "2026-10-25T02:00:00Z"
        ]
    );
}

#[test]
fn next_is_strictly_after_now() {
    let e = CronExpr::parse("0 9 * * *", Some("UTC"), "s").unwrap();
    let at9 = ms("2026-05-01T09:00:00Z");
    assert_eq!(
        format_utc(e.next_after(at9).unwrap().unwrap()),
        "2026-05-02T09:00:00Z"
    );
    assert_eq!(
        format_utc(e.next_after(at9 - 1).unwrap().unwrap()),
        "2026-05-01T09:00:00Z"
    );
    // Seconds field.
    let s = CronExpr::parse("*/15 * * * * *", Some("UTC"), "s").unwrap();
    assert_eq!(
        s.upcoming(at9 + 1, 2).unwrap(),
        vec![at9 + 15_000, at9 + 30_000]
    );
}

#[test]
fn bad_input_names_the_field() {
    let now = ms("2026-05-01T00:00:00Z");
    let cases: Vec<(Schedule, &str, &str)> = vec![
        (
            Schedule::Cron {
                expr: "61 * * * *".into(),
                tz: None,
                stagger_ms: None,
            },
            "job.schedule.expr",
            "61",
        ),
        (
            Schedule::Cron {
                expr: "* * *".into(),
                tz: None,
                stagger_ms: None,
            },
            "job.schedule.expr",
            "3 fields",
        ),
        (
            Schedule::Cron {
                expr: "  ".into(),
                tz: None,
                stagger_ms: None,
            },
            "job.schedule.expr",
            "required",
        ),
        (
            Schedule::Cron {
                expr: "0 9 * * *".into(),
                tz: Some("Mars/Olympus".into()),
                stagger_ms: None,
            },
            "job.schedule.tz",
            "Mars/Olympus",
        ),
        (
            Schedule::Cron {
                expr: "0 9 * * *".into(),
                tz: None,
                stagger_ms: Some(-1),
            },
            "job.schedule.staggerMs",
            "-1",
        ),
        (
            Schedule::Every {
                every_ms: 0,
                anchor_ms: None,
            },
            "job.schedule.everyMs",
            "positive",
        ),
        (
            Schedule::Every {
                every_ms: -5,
                anchor_ms: None,
            },
            "job.schedule.everyMs",
            "-5",
        ),
        (
            Schedule::Every {
                every_ms: 5,
                anchor_ms: Some(-1),
            },
            "job.schedule.anchorMs",
            "-1",
        ),
        (
            Schedule::At {
                at: "2026-04-30T23:59:59Z".into(),
            },
            "job.schedule.at",
            "in the past",
        ),
        (
            Schedule::At {
                at: "2026-02-30T10:00:00Z".into(),
            },
            "job.schedule.at",
            "not an ISO-8601",
        ),
        (
            Schedule::At {
                at: "tomorrow".into(),
            },
            "job.schedule.at",
            "not an ISO-8601",
        ),
        (
            Schedule::At { at: "0".into() },
            "job.schedule.at",
            "positive",
        ),
    ];
    for (s, field, needle) in cases {
        let err = s.validate(now, "job.schedule").unwrap_err();
        assert_eq!(err.field(), Some(field), "{s:?}: {err}");
        assert!(err.to_string().contains(needle), "{s:?}: {err}");
    }
}

#[test]
fn absolute_time_forms() {
    assert_eq!(ms("2026-06-15T09:00:00Z"), ms("2026-06-15T11:00:00+02:00"));
    assert_eq!(ms("2026-06-15T09:00:00Z"), ms("2026-06-15T04:00:00-0500"));
    assert_eq!(ms("2026-06-15T09:00:00Z"), ms("2026-06-15T09:00"));
    assert_eq!(
        ms("2026-06-15T09:00:00.250Z") - ms("2026-06-15T09:00:00Z"),
        250
    );
    assert_eq!(ms("2026-06-15"), ms("2026-06-15T00:00:00Z"));
    assert_eq!(ms("2026-06-15T24:00:00Z"), ms("2026-06-16T00:00:00Z"));
    assert_eq!(ms("1781514000000"), 1_781_514_000_000);
    assert!(parse_absolute_time_ms("2026-06-15T24:30:00Z").is_err());
    assert!(parse_absolute_time_ms("2026-06-15T09:00:00+25:00").is_err());
}

#[test]
fn every_follows_its_anchor_grid() {
    let s = Schedule::Every {
        every_ms: 10_000,
        anchor_ms: Some(1_000),
    };
    assert_eq!(s.next_after(500, "j").unwrap(), Some(1_000));
    assert_eq!(s.next_after(1_000, "j").unwrap(), Some(11_000));
    assert_eq!(s.next_after(10_999, "j").unwrap(), Some(11_000));
    assert_eq!(s.next_after(11_000, "j").unwrap(), Some(21_000));
    let at = Schedule::At {
        at: "2026-06-15T09:00:00Z".into(),
    };
    assert_eq!(
        at.next_after(ms("2026-06-15T08:00:00Z"), "j").unwrap(),
        Some(ms("2026-06-15T09:00:00Z"))
    );
    assert_eq!(
        at.next_after(ms("2026-06-15T09:00:00Z"), "j").unwrap(),
        None
    );
}

#[test]
fn top_of_hour_jobs_get_a_stable_per_job_stagger() {
    let s = Schedule::Cron {
        expr: "0 * * * *".into(),
        tz: Some("UTC".into()),
        stagger_ms: None,
    };
    let from = ms("2026-05-01T10:10:00Z");
    let a = s.next_after(from, "job-a").unwrap().unwrap();
    let b = s.next_after(from, "job-b").unwrap().unwrap();
    let hour = ms("2026-05-01T11:00:00Z");
    for (t, id) in [(a, "job-a"), (b, "job-b")] {
        assert_eq!(t - hour, stagger_offset(id, DEFAULT_TOP_OF_HOUR_STAGGER_MS));
        assert!((0..DEFAULT_TOP_OF_HOUR_STAGGER_MS).contains(&(t - hour)));
    }
    assert_ne!(a, b, "different jobs spread out");
    // staggerMs 0 = exact.
    let exact = Schedule::Cron {
        expr: "0 * * * *".into(),
        tz: Some("UTC".into()),
        stagger_ms: Some(0),
    };
    assert_eq!(exact.next_after(from, "job-a").unwrap(), Some(hour));
    // A staggered slot already passed this hour is not repeated.
    let after_a = s.next_after(a, "job-a").unwrap().unwrap();
    assert_eq!(after_a - a, 3_600_000);
}

/// Found by the `cron_schedule` fuzz target: the tenth byte inside a
/// multi-byte character panicked (`split_at`) instead of being refused.
#[test]
fn a_multibyte_character_at_the_date_boundary_is_refused_not_a_panic() {
    for input in [
        "*/*/1r5eu\u{8d}\u{9a}5*",
        "2026-06-1\u{e9}T09:00Z",
        "日本語日本語日本語",
    ] {
        assert!(parse_absolute_time_ms(input).is_err(), "{input:?}");
    }
}
