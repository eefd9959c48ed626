//! Cron expressions, time zones and absolute times from cron tool calls:
//! parsed, and a parsed expression's next runs computed.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (&str, &str, &str)| {
    let (expr, tz, at) = input;
    let tz = (!tz.is_empty()).then_some(tz);
    if let Ok(cron) = talon_cron::CronExpr::parse(expr, tz, "fuzz") {
        // 2026-01-01T00:00:00Z; a bounded look-ahead.
        let _ = cron.upcoming(1_767_225_600_000, 3);
    }
    let _ = talon_cron::parse_tz(expr);
    let _ = talon_cron::parse_absolute_time_ms(at);
});
