//! The params and response types of every method, one module per area.

pub(crate) mod approvals;
pub(crate) mod common;
pub(crate) mod config;
pub(crate) mod cron;
pub(crate) mod gateway;
pub(crate) mod mcp;
pub(crate) mod runner;
pub(crate) mod sandbox;
pub(crate) mod security;
pub(crate) mod sessions;
pub(crate) mod skills;
pub(crate) mod tasks;
pub(crate) mod tools;
