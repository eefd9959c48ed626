//! Failure-log redaction (being written).
