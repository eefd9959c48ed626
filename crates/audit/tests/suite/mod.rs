mod cron;
mod deep;
mod docs;
mod examples;
mod fix;
mod util;
