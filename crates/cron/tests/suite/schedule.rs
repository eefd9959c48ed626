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
    // fires once, at the same offset into the gap after the shift (03:30
    // EDT, the instant 02:30 EST names), as OpenClaw does.
    assert_eq!(
        upcoming("30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z", 3),
        [
            "2026-03-08T07:30:00Z",
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
    // 2026-03-29: 02:00 CET jumps to 03:00 CEST; 02:30 fires at 03:30
    // CEST (01:30Z).
    assert_eq!(
        upcoming("30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", 2),
        ["2026-03-29T01:30:00Z", "2026-03-30T00:30:00Z"]
    );
    // Six-field form, same result, seconds kept.
    assert_eq!(
        upcoming("0 30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", 1),
        ["2026-03-29T01:30:00Z"]
    );
    assert_eq!(
        upcoming("15 30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", 1),
        ["2026-03-29T01:30:15Z"]
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

/// Every `cron` shape through the spring-forward gap: a slot inside the gap
/// fires at its offset past the shift, once, and the real cadence around
/// it is kept.
#[test]
fn dst_gap_every_expression_shape() {
    let ny = "America/New_York"; // 2026-03-08 07:00Z: 02:00 EST -> 03:00 EDT
    // Every 15 minutes: the gap's slots land on the new hour's own slots,
    // so the job keeps running every 15 real minutes, never twice at one
    // instant.
    assert_eq!(
        upcoming("*/15 * * * *", ny, "2026-03-08T06:30:00Z", 6),
        [
            "2026-03-08T06:45:00Z",
            "2026-03-08T07:00:00Z",
            "2026-03-08T07:15:00Z",
            "2026-03-08T07:30:00Z",
            "2026-03-08T07:45:00Z",
            "2026-03-08T08:00:00Z"
        ]
    );
    // Hourly: 02:00 names the same instant as 03:00 EDT; it fires once.
    assert_eq!(
        upcoming("0 * * * *", ny, "2026-03-08T05:30:00Z", 3),
        [
            "2026-03-08T06:00:00Z",
            "2026-03-08T07:00:00Z",
            "2026-03-08T08:00:00Z"
        ]
    );
    // An interval expression whose slot falls in the gap (croner alone
    // would skip 02:30 and wait for 04:30): 03:30 EDT.
    assert_eq!(
        upcoming("30 */2 * * *", ny, "2026-03-08T05:00:00Z", 3),
        [
            "2026-03-08T05:30:00Z",
            "2026-03-08T07:30:00Z",
            "2026-03-08T08:30:00Z"
        ]
    );
    // Asked from inside the gap's mapped hour: the next slot after now.
    assert_eq!(
        upcoming("*/15 * * * *", ny, "2026-03-08T07:10:00Z", 2),
        ["2026-03-08T07:15:00Z", "2026-03-08T07:30:00Z"]
    );
    assert_eq!(
        upcoming("30 2 * * *", ny, "2026-03-08T07:10:00Z", 2),
        ["2026-03-08T07:30:00Z", "2026-03-09T06:30:00Z"]
    );
    assert_eq!(
        upcoming("30 2 * * *", ny, "2026-03-08T07:30:00Z", 1),
        ["2026-03-09T06:30:00Z"]
    );
    // Berlin (2026-03-29 01:00Z: 02:00 CET -> 03:00 CEST).
    let de = "Europe/Berlin";
    assert_eq!(
        upcoming("*/15 * * * *", de, "2026-03-29T00:40:00Z", 4),
        [
            "2026-03-29T00:45:00Z",
            "2026-03-29T01:00:00Z",
            "2026-03-29T01:15:00Z",
            "2026-03-29T01:30:00Z"
        ]
    );
    assert_eq!(
        upcoming("0 * * * *", de, "2026-03-29T00:30:00Z", 2),
        ["2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z"]
    );
    // A weekday-restricted slot in the gap (2026-03-29 is a Sunday).
    assert_eq!(
        upcoming("45 2 * * 0", de, "2026-03-28T00:00:00Z", 2),
        ["2026-03-29T01:45:00Z", "2026-04-05T00:45:00Z"]
    );
}

/// Every `cron` shape through the fall-back repeat: a fixed-time slot fires
/// once, on the first occurrence; interval expressions keep their real
/// cadence through both passes (croner 4's rule).
#[test]
fn dst_repeat_every_expression_shape() {
    let ny = "America/New_York"; // 2026-11-01 06:00Z: 02:00 EDT -> 01:00 EST
    assert_eq!(
        upcoming("*/15 * * * *", ny, "2026-11-01T05:50:00Z", 6),
        [
            "2026-11-01T06:00:00Z",
            "2026-11-01T06:15:00Z",
            "2026-11-01T06:30:00Z",
            "2026-11-01T06:45:00Z",
            "2026-11-01T07:00:00Z",
            "2026-11-01T07:15:00Z"
        ]
    );
    assert_eq!(
        upcoming("0 * * * *", ny, "2026-11-01T04:30:00Z", 3),
        [
            "2026-11-01T05:00:00Z",
            "2026-11-01T06:00:00Z",
            "2026-11-01T07:00:00Z"
        ]
    );
    // Asked during the second pass, a daily 01:30 waits for tomorrow.
    assert_eq!(
        upcoming("30 1 * * *", ny, "2026-11-01T06:10:00Z", 1),
        ["2026-11-02T06:30:00Z"]
    );
    let de = "Europe/Berlin"; // 2026-10-25 01:00Z: 03:00 CEST -> 02:00 CET
    assert_eq!(
        upcoming("0 * * * *", de, "2026-10-24T23:30:00Z", 3),
        [
            "2026-10-25T00:00:00Z",
            "2026-10-25T01:00:00Z",
            "2026-10-25T02:00:00Z"
        ]
    );
    assert_eq!(
        upcoming("15 2 * * *", de, "2026-10-24T12:00:00Z", 2),
        ["2026-10-25T00:15:00Z", "2026-10-26T01:15:00Z"]
    );
}

/// `every` is an absolute interval and `at` an absolute instant: neither
/// moves at a daylight-saving shift; a `cron` schedule with no stagger
/// fires like its expression.
#[test]
fn dst_every_and_at_are_absolute() {
    let every = Schedule::Every {
        every_ms: 3_600_000,
        anchor_ms: Some(ms("2026-03-08T05:00:00Z")),
    };
    let mut t = ms("2026-03-08T05:30:00Z");
    let mut got = Vec::new();
    for _ in 0..3 {
        t = every.next_after(t, "job").unwrap().unwrap();
        got.push(format_utc(t));
    }
    assert_eq!(
        got,
        [
            "2026-03-08T06:00:00Z",
            "2026-03-08T07:00:00Z",
            "2026-03-08T08:00:00Z"
        ]
    );
    // The same across fall-back.
    let every = Schedule::Every {
        every_ms: 30 * 60_000,
        anchor_ms: Some(ms("2026-11-01T05:00:00Z")),
    };
    assert_eq!(
        every
            .next_after(ms("2026-11-01T05:59:00Z"), "job")
            .map(|t| t.map(format_utc))
            .unwrap(),
        Some("2026-11-01T06:00:00Z".to_owned())
    );
    // `at` takes an instant (a zone offset or UTC), never a wall time.
    let at = Schedule::At {
        at: "2026-03-08T02:30:00-05:00".into(),
    };
    assert_eq!(
        at.next_after(ms("2026-03-08T00:00:00Z"), "job")
            .unwrap()
            .map(format_utc),
        Some("2026-03-08T07:30:00Z".to_owned())
    );
    let cron = Schedule::Cron {
        expr: "30 2 * * *".into(),
        tz: Some("America/New_York".into()),
        stagger_ms: Some(0),
    };
    assert_eq!(
        cron.next_after(ms("2026-03-08T00:00:00Z"), "job")
            .unwrap()
            .map(format_utc),
        Some("2026-03-08T07:30:00Z".to_owned())
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
fn a_refused_time_or_zone_says_which_kind_of_wrong() {
    assert_eq!(parse_absolute_time_ms("  "), Err(TimeParseError::Empty));
    assert_eq!(
        parse_absolute_time_ms("0"),
        Err(TimeParseError::NotEpochMs("0".into()))
    );
    assert_eq!(
        parse_absolute_time_ms("2026-06-15T25:00Z"),
        Err(TimeParseError::NotIso("2026-06-15T25:00Z".into()))
    );
    let zone = parse_tz("Mars/Olympus").unwrap_err();
    assert_eq!(zone, TimeParseError::UnknownZone("Mars/Olympus".into()));
    assert_eq!(
        zone.to_string(),
        "unknown time zone `Mars/Olympus`; use an IANA name such as `Europe/Berlin` or `UTC`"
    );
    // Wrapped at the crate edge with the field it came from.
    let err = CronExpr::parse("0 9 * * *", Some("Mars/Olympus"), "schedule").unwrap_err();
    assert_eq!(err.field(), Some("schedule.tz"));
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
