//! One handler per area of the protocol. Each holds only its own state;
//! what it needs from another area (the active generation, the session
//! registry, the call path) is passed in by [`crate::dispatch`].

pub(crate) mod approvals;
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
