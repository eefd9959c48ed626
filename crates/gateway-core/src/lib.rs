//! The behaviour behind `talon-gateway`.
//!
//! (Skeleton: filled in by the gateway issue.)
