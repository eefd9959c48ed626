//! Integration tests of the file tools on real temp workspaces through
//! `MountBridge::host` (and a read-only mount table).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "files/support.rs"]
mod support;

#[path = "files/apply_patch.rs"]
mod apply_patch;
#[path = "files/edit.rs"]
mod edit;
#[path = "files/escapes.rs"]
mod escapes;
#[path = "files/fixture.rs"]
mod fixture;
#[path = "files/read.rs"]
mod read;
#[path = "files/write.rs"]
mod write;
