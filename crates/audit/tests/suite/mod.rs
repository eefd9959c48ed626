mod cron;
mod deep;
mod examples;
mod fix;
mod util;
