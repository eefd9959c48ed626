//! Integration tests of the policy pipeline.

mod suite;
