mod binds;
mod common;
mod docker;
mod engine_death;
mod prune;
mod recycle;
mod workspaces;
