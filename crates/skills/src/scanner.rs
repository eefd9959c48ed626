//! The security scanner (being written).
