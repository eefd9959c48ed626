mod assembly;
#[cfg(feature = "browser")]
mod browser_family;
mod builtin_routing;
mod compiled_out;
#[cfg(feature = "sqlite-state")]
mod cron_family;
mod exec_approval_pin;
mod exec_approvals;
mod from_config;
mod invoke;
mod local_routing;
#[cfg(feature = "media")]
mod media_family;
#[cfg(feature = "sqlite-state")]
mod memory_family;
mod memory_flat;
#[cfg(feature = "channels")]
mod message_family;
mod narrowing;
mod plugins;
mod provided;
mod sandbox_decision;
#[cfg(feature = "docker")]
mod sandbox_prune;
#[cfg(feature = "docker")]
mod sandbox_recycle;
#[cfg(feature = "docker")]
mod sandbox_workspaces;
#[cfg(feature = "ssh")]
mod ssh_routing;
mod support;
