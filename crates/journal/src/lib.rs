//! The call journal (skeleton: filled in by the gateway issue).
