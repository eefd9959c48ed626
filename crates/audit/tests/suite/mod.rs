mod cron;
mod examples;
mod fix;
mod util;
