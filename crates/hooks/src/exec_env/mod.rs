//! Exec environment policy (being written).
