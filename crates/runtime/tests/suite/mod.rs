mod assembly;
mod builtin_routing;
mod cron_family;
mod from_config;
mod invoke;
mod narrowing;
mod ssh_routing;
mod support;
