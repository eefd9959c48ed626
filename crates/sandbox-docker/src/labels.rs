//! The label names Talon writes on its containers (OpenClaw's
//! `openclaw.*` set, renamed to `talon.*`).

/// `1` on every container Talon owns; listing and removal filter on it.
pub const SANDBOX: &str = "talon.sandbox";
/// The scope key the container serves.
pub const SESSION_KEY: &str = "talon.sessionKey";
/// Creation time, milliseconds since the Unix epoch.
pub const CREATED_AT_MS: &str = "talon.createdAtMs";
/// The mount layout version.
pub const MOUNT_FORMAT_VERSION: &str = "talon.mountFormatVersion";
/// The create-arguments epoch.
pub const CREATE_ARGS_EPOCH: &str = "talon.createArgsEpoch";
/// The sandbox config hash the container was created with.
pub const CONFIG_HASH: &str = "talon.configHash";
