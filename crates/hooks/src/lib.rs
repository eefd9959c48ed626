//! The gate every tool call passes (work in progress).
#![deny(missing_docs)]

pub use crate::error::{Error, Result};
pub use crate::event::{
    ApprovalSpec, BeforeToolCallEvent, BeforeToolCallResult, HookContext, OnResolution,
    Requester, derive_paths,
};

pub mod approval;
pub mod canonical;
mod error;
mod event;
pub mod exec_env;
pub mod loop_detection;
pub mod redact;
