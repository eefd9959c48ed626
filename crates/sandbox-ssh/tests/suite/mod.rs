mod bridge;
mod common;
mod exec;
mod prune;
mod sync;
mod workspaces;
