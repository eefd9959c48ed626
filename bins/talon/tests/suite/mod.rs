mod call;
mod config;
mod cron;
mod policy;
mod skills;
mod tools;
mod util;
