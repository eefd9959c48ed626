//! The model-facing skills index (being written).
