//! The three schedule kinds and "when does it run next" (facts §12,
//! `computeNextRunAtMs`).

use std::str::FromStr;

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc};
use chrono_tz::Tz;
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{CronError, Result};

/// The default stagger window for recurring top-of-hour expressions (5 min).
pub const DEFAULT_TOP_OF_HOUR_STAGGER_MS: i64 = 5 * 60 * 1000;
/// The largest integer a job field accepts (JavaScript's safe integer).
const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// When a job runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Schedule {
    /// Once, at an ISO-8601 instant (or epoch milliseconds as digits).
    At {
        /// The instant as given.
        at: String,
    },
    /// Every `every_ms`, on a grid anchored at `anchor_ms`.
    Every {
        /// The interval (≥ 1 ms).
        every_ms: i64,
        /// The grid's anchor (epoch ms); the creation time when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        anchor_ms: Option<i64>,
    },
    /// A 5-field (minute) or 6-field (second) cron expression in a zone.
    Cron {
        /// The expression, in wall-clock time of `tz`.
        expr: String,
        /// IANA zone; the host's zone when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tz: Option<String>,
        /// Jitter window (ms); 0 = exact. Default: 5 min for top-of-hour
        /// expressions, else 0.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stagger_ms: Option<i64>,
    },
}

impl Schedule {
    /// `at`, `every` or `cron`.
    pub fn kind(&self) -> &'static str {
        match self {
            Schedule::At { .. } => "at",
            Schedule::Every { .. } => "every",
            Schedule::Cron { .. } => "cron",
        }
    }

    /// Whether the schedule fires once.
    pub fn is_one_shot(&self) -> bool {
        matches!(self, Schedule::At { .. })
    }

    /// Check the schedule as a new job's (an `at` in the past is refused).
    /// Errors name the field under `prefix` (e.g. `job.schedule`).
    pub fn validate(&self, now_ms: i64, prefix: &str) -> Result<()> {
        match self {
            Schedule::At { at } => {
                let t = parse_absolute_time_ms(at)
                    .map_err(|m| CronError::invalid(format!("{prefix}.at"), m.to_string()))?;
                if t <= now_ms {
                    return Err(CronError::invalid(
                        format!("{prefix}.at"),
                        format!(
                            "`{at}` is in the past (now is {}); give a future time",
                            format_utc(now_ms)
                        ),
                    ));
                }
            }
            Schedule::Every {
                every_ms,
                anchor_ms,
            } => {
                if *every_ms <= 0 || *every_ms > MAX_SAFE_INTEGER {
                    return Err(CronError::invalid(
                        format!("{prefix}.everyMs"),
                        format!("must be a positive number of milliseconds, got {every_ms}"),
                    ));
                }
                if let Some(a) = anchor_ms
                    && (*a < 0 || *a > MAX_SAFE_INTEGER)
                {
                    return Err(CronError::invalid(
                        format!("{prefix}.anchorMs"),
                        format!("must be a non-negative epoch millisecond value, got {a}"),
                    ));
                }
            }
            Schedule::Cron {
                expr,
                tz,
                stagger_ms,
            } => {
                CronExpr::parse(expr, tz.as_deref(), prefix)?;
                if let Some(s) = stagger_ms
                    && (*s < 0 || *s > MAX_SAFE_INTEGER)
                {
                    return Err(CronError::invalid(
                        format!("{prefix}.staggerMs"),
                        format!("must be 0 (exact) or a positive number of milliseconds, got {s}"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The next run strictly after `now_ms`, or `None` when there is none
    /// (an `at` already past). `job_id` seeds the per-job stagger offset.
    pub fn next_after(&self, now_ms: i64, job_id: &str) -> Result<Option<i64>> {
        match self {
            Schedule::At { at } => {
                let t = parse_absolute_time_ms(at)
                    .map_err(|m| CronError::invalid("schedule.at", m.to_string()))?;
                Ok((t > now_ms).then_some(t))
            }
            Schedule::Every {
                every_ms,
                anchor_ms,
            } => {
                let every = (*every_ms).max(1);
                let anchor = anchor_ms.unwrap_or(now_ms).max(0);
                if now_ms < anchor {
                    return Ok(Some(anchor));
                }
                let steps = (now_ms - anchor) / every + 1;
                Ok(Some(anchor.saturating_add(steps.saturating_mul(every))))
            }
            Schedule::Cron {
                expr,
                tz,
                stagger_ms,
            } => {
                let parsed = CronExpr::parse(expr, tz.as_deref(), "schedule")?;
                let window = stagger_ms.unwrap_or_else(|| {
                    if parsed.is_top_of_hour() {
                        DEFAULT_TOP_OF_HOUR_STAGGER_MS
                    } else {
                        0
                    }
                });
                let offset = stagger_offset(job_id, window);
                // Fire times are the expression's slots shifted by `offset`:
                // look for the slot after `now - offset`.
                let mut from = now_ms - offset;
                for _ in 0..4 {
                    let Some(slot) = parsed.next_after(from)? else {
                        return Ok(None);
                    };
                    let t = slot + offset;
                    if t > now_ms {
                        return Ok(Some(t));
                    }
                    from = slot;
                }
                Ok(None)
            }
        }
    }
}

/// The per-job offset within a stagger window:
/// `uint32BE(sha256(jobId)[0..4]) % window`.
pub fn stagger_offset(job_id: &str, window_ms: i64) -> i64 {
    if window_ms <= 1 {
        return 0;
    }
    let digest = Sha256::digest(job_id.as_bytes());
    let n = u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]]);
    i64::from(n) % window_ms
}

/// A parsed, zoned cron expression.
#[derive(Debug, Clone)]
pub struct CronExpr {
    cron: Cron,
    tz: Tz,
    fields: Vec<String>,
}

impl CronExpr {
    /// Parse a 5- or 6-field expression in zone `tz` (the host zone when
    /// `None`). Errors name `<prefix>.expr` or `<prefix>.tz`.
    pub fn parse(expr: &str, tz: Option<&str>, prefix: &str) -> Result<Self> {
        let field = format!("{prefix}.expr");
        let trimmed = expr.trim();
        if trimmed.is_empty() {
            return Err(CronError::invalid(
                field,
                "is required: a cron expression such as \"0 9 * * *\"",
            ));
        }
        let fields: Vec<String> = trimmed.split_whitespace().map(str::to_owned).collect();
        if fields.len() != 5 && fields.len() != 6 {
            return Err(CronError::invalid(
                field,
                format!(
                    "`{trimmed}` has {} fields; use 5 (minute hour day month weekday) or 6 (second first)",
                    fields.len()
                ),
            ));
        }
        let parser = CronParser::builder()
            .seconds(Seconds::Optional)
            .year(Year::Disallowed)
            .build();
        let cron = parser
            .parse(trimmed)
            .map_err(|e| CronError::invalid(field, format!("`{trimmed}`: {e}")))?;
        let tz = match tz.map(str::trim).filter(|t| !t.is_empty()) {
            Some(name) => parse_tz(name)
                .map_err(|m| CronError::invalid(format!("{prefix}.tz"), m.to_string()))?,
            None => host_time_zone(),
        };
        Ok(CronExpr { cron, tz, fields })
    }

    /// The zone.
    pub fn tz(&self) -> Tz {
        self.tz
    }

    /// Recurring at the top of the hour (minute 0, and second 0 for six
    /// fields, with a wildcard-ish hour): such jobs get a default stagger.
    pub fn is_top_of_hour(&self) -> bool {
        let f = &self.fields;
        let (sec_ok, min, hour) = if f.len() == 6 {
            (f[0] == "0", &f[1], &f[2])
        } else {
            (true, &f[0], &f[1])
        };
        sec_ok && (min == "0" || min == "00") && hour.contains('*')
    }

    /// The first fire time strictly after `now_ms` (epoch ms).
    ///
    /// Daylight saving, as OpenClaw's scheduler does it:
    /// - a wall-clock slot inside a spring-forward gap fires at the same
    ///   offset past the shift (02:30 in a one-hour gap at 02:00 fires at
    ///   03:30 new time, the instant 02:30 names in the old offset), once,
    ///   even when that instant is also a slot of its own (`0 * * * *`
    ///   fires once at 03:00);
    /// - a slot inside a fall-back repeat fires once, on its first
    ///   occurrence, for a fixed-time expression (single second, minute and
    ///   hour, e.g. `30 1 * * *`); an interval expression (`*/15 * * * *`,
    ///   `0 * * * *`) keeps its real cadence and fires on both passes, never
    ///   twice at one instant (croner 4's rule).
    pub fn next_after(&self, now_ms: i64) -> Result<Option<i64>> {
        // croner runs a fixed-time slot that falls in a gap at the gap's
        // end (03:00); such an answer is not a slot of the expression, so
        // skip it and let the gap search below place the slot.
        let mut from = now_ms;
        let mut real = None;
        for _ in 0..8 {
            let Some(t) = self.croner_next_after(from)? else {
                break;
            };
            if self.wall_clock_matches(t)? {
                real = Some(t);
                break;
            }
            from = t;
        }
        let Some(real) = real else {
            return Ok(None);
        };
        Ok(Some(match self.first_gap_slot(now_ms, real)? {
            Some(g) => g.min(real),
            None => real,
        }))
    }

    /// Whether the wall-clock time of instant `ms` in the zone matches the
    /// expression.
    fn wall_clock_matches(&self, ms: i64) -> Result<bool> {
        let Some(t) = Utc.timestamp_millis_opt(ms).single() else {
            return Ok(false);
        };
        self.cron
            .is_time_matching(&t.with_timezone(&self.tz).naive_local())
            .map_err(|e| {
                CronError::invalid("schedule.expr", format!("cannot compute the next run: {e}"))
            })
    }

    /// The earliest instant in `(now_ms, until_ms)` at which a slot lying
    /// inside a spring-forward gap fires: the slot's wall-clock time read in
    /// the offset before the gap.
    fn first_gap_slot(&self, now_ms: i64, until_ms: i64) -> Result<Option<i64>> {
        for gap in gaps_between(self.tz, now_ms - MAX_GAP_MS, until_ms) {
            let end_ms = gap.at_ms + gap.len_ms;
            if end_ms <= now_ms {
                continue;
            }
            if gap.at_ms >= until_ms {
                break;
            }
            // The first wall-clock second whose fire instant is after now.
            let skip_ms = if now_ms < gap.at_ms {
                0
            } else {
                let past = now_ms - gap.at_ms + 1;
                past + (1000 - past.rem_euclid(1000)) % 1000
            };
            let Some(start) = gap
                .local_start
                .checked_add_signed(chrono::TimeDelta::milliseconds(skip_ms))
            else {
                continue;
            };
            let slot = match self.cron.find_next_occurrence(&start, true) {
                Ok(s) => s,
                Err(croner::errors::CronError::TimeSearchLimitExceeded) => continue,
                Err(e) => {
                    return Err(CronError::invalid(
                        "schedule.expr",
                        format!("cannot compute the next run: {e}"),
                    ));
                }
            };
            let into_ms = (slot - gap.local_start).num_milliseconds();
            if (0..gap.len_ms).contains(&into_ms) {
                let fire = gap.at_ms + into_ms;
                if fire > now_ms && fire < until_ms {
                    return Ok(Some(fire));
                }
            }
        }
        Ok(None)
    }

    /// croner's first occurrence strictly after `now_ms`.
    fn croner_next_after(&self, now_ms: i64) -> Result<Option<i64>> {
        let Some(now) = Utc.timestamp_millis_opt(now_ms).single() else {
            return Err(CronError::invalid(
                "now",
                format!("{now_ms} is out of range"),
            ));
        };
        let mut from = now.with_timezone(&self.tz);
        // Retry from the next second, then from the next UTC midnight, if
        // the library hands back a time that is not after now.
        for attempt in 0..3 {
            match self.cron.find_next_occurrence(&from, false) {
                Ok(t) => {
                    let ms = t.timestamp_millis();
                    if ms > now_ms {
                        return Ok(Some(ms));
                    }
                    let next = if attempt == 0 {
                        now_ms - now_ms.rem_euclid(1000) + 1000
                    } else {
                        now_ms - now_ms.rem_euclid(86_400_000) + 86_400_000
                    };
                    match Utc.timestamp_millis_opt(next).single() {
                        Some(n) => from = n.with_timezone(&self.tz),
                        None => return Ok(None),
                    }
                }
                Err(croner::errors::CronError::TimeSearchLimitExceeded) => return Ok(None),
                Err(e) => {
                    return Err(CronError::invalid(
                        "schedule.expr",
                        format!("cannot compute the next run: {e}"),
                    ));
                }
            }
        }
        Ok(None)
    }

    /// The next `count` fire times strictly after `from_ms`.
    pub fn upcoming(&self, from_ms: i64, count: usize) -> Result<Vec<i64>> {
        let mut out = Vec::with_capacity(count);
        let mut at = from_ms;
        while out.len() < count {
            match self.next_after(at)? {
                Some(t) => {
                    out.push(t);
                    at = t;
                }
                None => break,
            }
        }
        Ok(out)
    }
}

/// The longest spring-forward gap searched for (a day: Samoa skipped
/// 2011-12-30 whole).
const MAX_GAP_MS: i64 = 86_400_000;
/// How far apart the zone's offset is sampled when looking for gaps: no
/// zone changes its offset twice within six hours.
const GAP_SCAN_STEP_MS: i64 = 6 * 3_600_000;

/// A spring-forward gap: at `at_ms` the wall clock jumps from
/// `local_start` ahead by `len_ms`.
struct Gap {
    at_ms: i64,
    local_start: NaiveDateTime,
    len_ms: i64,
}

/// The offset of `tz` (seconds east of UTC) at instant `ms`.
fn offset_secs(tz: Tz, ms: i64) -> Option<i64> {
    use chrono::Offset;
    let t = Utc.timestamp_millis_opt(ms).single()?;
    Some(i64::from(
        tz.offset_from_utc_datetime(&t.naive_utc())
            .fix()
            .local_minus_utc(),
    ))
}

/// The spring-forward gaps of `tz` whose shift lies in `(from_ms,
/// until_ms]`, in order. The offset is sampled every
/// [`GAP_SCAN_STEP_MS`]; each change is then placed to the millisecond by
/// bisection.
fn gaps_between(tz: Tz, from_ms: i64, until_ms: i64) -> Vec<Gap> {
    let mut out = Vec::new();
    let Some(mut prev) = offset_secs(tz, from_ms) else {
        return out;
    };
    let mut lo = from_ms;
    while lo < until_ms {
        let hi = lo.saturating_add(GAP_SCAN_STEP_MS).min(until_ms);
        let Some(next) = offset_secs(tz, hi) else {
            break;
        };
        if next != prev {
            // Bisect for the first millisecond with the new offset.
            let (mut a, mut b) = (lo, hi);
            while b - a > 1 {
                let mid = a + (b - a) / 2;
                if offset_secs(tz, mid) == Some(prev) {
                    a = mid;
                } else {
                    b = mid;
                }
            }
            if next > prev
                && let Some(at) = Utc.timestamp_millis_opt(b).single()
                && let Some(local_start) = at
                    .naive_utc()
                    .checked_add_signed(chrono::TimeDelta::seconds(prev))
            {
                out.push(Gap {
                    at_ms: b,
                    local_start,
                    len_ms: (next - prev) * 1000,
                });
            }
            prev = next;
        }
        lo = hi;
    }
    out
}

/// Why a time zone name or an absolute time was refused. The caller wraps
/// it into [`CronError::Invalid`] with the field it came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TimeParseError {
    /// Not an IANA zone name.
    #[error("unknown time zone `{0}`; use an IANA name such as `Europe/Berlin` or `UTC`")]
    UnknownZone(String),
    /// The time is empty.
    #[error("is required: an ISO-8601 time such as 2026-06-15T09:00:00Z")]
    Empty,
    /// Digits only, but not a positive epoch-millisecond time.
    #[error("`{0}` is not a positive epoch-millisecond time")]
    NotEpochMs(String),
    /// Not an ISO-8601 time of the accepted shape.
    #[error(
        "`{0}` is not an ISO-8601 time; use e.g. 2026-06-15T09:00:00Z or 2026-06-15T11:00:00+02:00"
    )]
    NotIso(String),
}

/// Parse an IANA zone name (`UTC`, `Europe/Berlin`).
pub fn parse_tz(name: &str) -> std::result::Result<Tz, TimeParseError> {
    Tz::from_str(name).map_err(|_| TimeParseError::UnknownZone(name.to_owned()))
}

/// The host's zone: `TZ` if it names an IANA zone, else the target of
/// `/etc/localtime`, else UTC.
pub fn host_time_zone() -> Tz {
    if let Ok(name) = std::env::var("TZ")
        && let Ok(tz) = Tz::from_str(name.trim_start_matches(':'))
    {
        return tz;
    }
    if let Ok(target) = std::fs::read_link("/etc/localtime") {
        let s = target.to_string_lossy();
        if let Some((_, name)) = s.split_once("zoneinfo/")
            && let Ok(tz) = Tz::from_str(name)
        {
            return tz;
        }
    }
    Tz::UTC
}

/// Parse an absolute time (`parseAbsoluteTimeMs`): digits are epoch ms
/// (> 0); otherwise ISO `YYYY-MM-DD[THH:MM[:SS[.fff]]][Z|±HH:MM|±HHMM]`,
/// checked against the calendar (`24:00:00` allowed); a date alone is
/// midnight UTC; no zone means UTC.
pub fn parse_absolute_time_ms(input: &str) -> std::result::Result<i64, TimeParseError> {
    let s = input.trim();
    if s.is_empty() {
        return Err(TimeParseError::Empty);
    }
    if s.bytes().all(|b| b.is_ascii_digit()) {
        return match s.parse::<i64>() {
            Ok(n) if n > 0 && n <= MAX_SAFE_INTEGER => Ok(n),
            _ => Err(TimeParseError::NotEpochMs(s.to_owned())),
        };
    }
    let bad = || TimeParseError::NotIso(s.to_owned());
    // `split_at_checked`: the tenth byte may fall inside a multi-byte
    // character of hostile input (found by the `cron_schedule` fuzz target).
    let Some((date_part, rest)) = s.split_at_checked(10) else {
        return Err(bad());
    };
    let date = NaiveDate::parse_from_str(date_part, "%Y-%m-%d").map_err(|_| bad())?;
    if rest.is_empty() {
        return Ok(date.and_time(NaiveTime::MIN).and_utc().timestamp_millis());
    }
    let rest = rest.strip_prefix(['T', 't', ' ']).ok_or_else(bad)?;
    // Split the zone suffix off.
    let (time_part, offset_secs) = if let Some(t) = rest.strip_suffix(['Z', 'z']) {
        (t, 0)
    } else if let Some(pos) = rest.rfind(['+', '-']) {
        let (t, z) = rest.split_at(pos);
        let sign = if z.starts_with('-') { -1 } else { 1 };
        let digits: String = z[1..].chars().filter(|c| *c != ':').collect();
        if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let h: i64 = digits[..2].parse().map_err(|_| bad())?;
        let m: i64 = digits[2..].parse().map_err(|_| bad())?;
        if h > 23 || m > 59 {
            return Err(bad());
        }
        (t, sign * (h * 3600 + m * 60))
    } else {
        (rest, 0)
    };
    let (naive_date, time_str) = if let Some(tail) = time_part.strip_prefix("24:00") {
        // Only 24:00[:00[.000…]] is allowed: the end of the day.
        let zeros = tail
            .strip_prefix(":00")
            .map(|t| t.strip_prefix('.').unwrap_or(t))
            .unwrap_or(tail);
        if !zeros.bytes().all(|b| b == b'0') {
            return Err(bad());
        }
        (date.succ_opt().ok_or_else(bad)?, "00:00")
    } else {
        (date, time_part)
    };
    let time = NaiveTime::parse_from_str(time_str, "%H:%M:%S%.f")
        .or_else(|_| NaiveTime::parse_from_str(time_str, "%H:%M"))
        .map_err(|_| bad())?;
    let local = NaiveDateTime::new(naive_date, time);
    Ok(local.and_utc().timestamp_millis() - offset_secs * 1000)
}

/// Epoch ms as an RFC 3339 UTC string (`2026-06-15T09:00:00Z`).
pub fn format_utc(ms: i64) -> String {
    match DateTime::<Utc>::from_timestamp_millis(ms) {
        Some(t) => t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
        None => format!("{ms}ms"),
    }
}
