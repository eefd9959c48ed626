mod assembly;
mod builtin_routing;
mod from_config;
mod invoke;
mod narrowing;
mod support;
