//! Integration tests of the file tools on real temp workspaces through
//! `MountBridge::host` (and a read-only mount table).

mod support;

mod apply_patch;
mod edit;
mod escapes;
mod fixture;
mod read;
mod robustness;
mod write;
