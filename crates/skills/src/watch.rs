//! Watching skill roots and reusing snapshots (being written).
