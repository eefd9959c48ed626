//! Approvals: the broker that asks a human, and the stores that remember
//! `allow-always` grants.

pub use self::decision::{ApprovalDecision, ApprovalScope, ApprovalSeverity};

mod decision;
