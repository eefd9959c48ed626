//! The SSH sandbox backend.
//!
//! (Skeleton: filled in by the SSH issue.)
