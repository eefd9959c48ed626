//! Loop detection (being written).
