mod assembly;
mod from_config;
mod invoke;
mod narrowing;
mod support;
