//! Talon's Docker sandbox backend (over `bollard`).
//!
//! Work in progress in this commit: the crate exists so the workspace
//! builds; the backend lands with the sandbox issue.
#![deny(missing_docs)]
