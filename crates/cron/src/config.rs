//! The `cron` config section, typed by `talon-config` (plain data, so the
//! config crate does not depend on this one) and re-exported here.

pub use talon_config::sections::cron::{CronConfig, CronQuotasConfig, CronRetryConfig};
